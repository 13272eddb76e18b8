// The integration methods (integrator.method): the one enumeration the study parser turns
// the study's string into, and that a system unit's method visitor (dispatch/methods.hpp)
// switches on. Apart from study.hpp so that system units need nothing of host/study.
// C++17-clean: nvcc compiles it.
#pragma once

#include <cstdint>

namespace chens {

enum class MethodId : int {
  euler = 0,
  rk2 = 1,
  rk4 = 2,
  dopri5 = 3,
  midpoint = 4,
  gauss2 = 5,
  rattle = 6,
  verlet = 7,
  rattle4 = 8,         // RATTLE composed: Yoshida's 3 stages, order 4 (integrators/rattle_composition.hpp)
  rattle4_suzuki = 9,  // Suzuki's 5 stages, order 4
  rattle6 = 10,        // Kahan and Li's 9 stages, order 6
  rattle8 = 11,        // Kahan and Li's 17 stages, order 8
};
inline constexpr int method_count = 12;
// integrator.method's value for each method, as study files spell it (study_model.cpp).
const char* method_name(MethodId m);

// A set of methods, one bit per MethodId: what a unit instantiates (make_engine_for's
// Methods: every method for the systems list's units, one for a unit compiled on first use,
// chens_add_model's METHODS for a user model's).
using MethodMask = std::uint32_t;
inline constexpr MethodMask all_methods = (MethodMask(1) << method_count) - 1;
constexpr MethodMask method_bit(MethodId m) { return MethodMask(1) << static_cast<int>(m); }
constexpr bool has_method(MethodMask set, MethodId m) { return (set & method_bit(m)) != 0; }
// The methods that integrate the constrained equations themselves (formulation
// "constrained"): RATTLE and its symmetric compositions.
inline constexpr MethodMask rattle_methods = method_bit(MethodId::rattle) | method_bit(MethodId::rattle4) |
                                             method_bit(MethodId::rattle4_suzuki) | method_bit(MethodId::rattle6) |
                                             method_bit(MethodId::rattle8);
constexpr bool is_rattle_method(MethodId m) { return has_method(rattle_methods, m); }

}  // namespace chens
