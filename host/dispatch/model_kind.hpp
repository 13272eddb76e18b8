// The models chens knows (model.kind): the one enumeration the study parser turns the
// study's string into; everything after the parser compares these, never the string.
// C++17-clean: nvcc compiles it.
#pragma once

namespace chens {

enum class ModelKind : int {
  pendulum = 0,          // the rigid planar pendulum in Cartesian coordinates (001 §3, 002 §6)
  chain = 1,             // planar chain molecules with fixed bond lengths (002 §7)
  penalty_pendulum = 2,  // the pendulum held by a penalty potential (003)
  double_pendulum = 3,   // the planar double pendulum in Cartesian coordinates (docs/adding-a-model.md)
  custom = 4,            // a user model from V and phi (Study::custom_model names it; docs/custom-models.md)
};
// The built-in kinds (custom is not a model.kind value: its models have their own names).
inline constexpr int model_kind_count = 4;

// model.kind's value for each kind, as study files spell it.
constexpr const char* model_kind_name(ModelKind k) {
  switch (k) {
    case ModelKind::pendulum: return "pendulum";
    case ModelKind::chain: return "chain";
    case ModelKind::penalty_pendulum: return "penalty-pendulum";
    case ModelKind::double_pendulum: return "double-pendulum";
    case ModelKind::custom: return "custom";
  }
  return "?";
}

}  // namespace chens
