// A study: the user's description of one ensemble run (docs/study-format.md), parsed
// from TOML and --set overrides, validated key by key, and resolved into RunParams.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <chens/ensemble/run_params.hpp>
#include <chens/formulations/formulation.hpp>

namespace chens {

enum class MethodId : int { euler = 0, rk2 = 1, rk4 = 2, dopri5 = 3, midpoint = 4, gauss2 = 5 };
inline constexpr int method_count = 6;
const char* method_name(MethodId m);
int method_order(MethodId m);

// Bad input: the message names the key, the value and what is allowed.
class StudyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Study {
  // [model]
  std::string model_kind = "pendulum";
  std::array<double, 4> initial{1.0, 0.0, 0.0, -2.0};
  double mass = 1.0;
  double length = 1.0;
  double gravity = 1.0;
  // [integrator]
  FormulationId formulation = FormulationId::dirac;
  MethodId method = MethodId::rk4;
  double h = 0.1;
  double t_end = 100.0;
  double rtol = 1e-6;
  double atol = 1e-9;
  double tol = 1e-12;
  std::int64_t max_iterations = 100;
  std::int64_t max_steps = 100000000;
  double impetus_reset = 0.0;
  // [projection]
  bool momentum = false;
  bool position = false;
  double projection_tol = 1e-6;
  std::int64_t projection_max_iterations = 50;
  // [ensemble]
  std::int64_t size = 1024;
  std::uint64_t seed = 1;
  double perturbation = 1e-4;
  // [output]
  std::optional<double> sample_dt;  // default: see resolve()
  bool trajectory = false;
};

// Reads the study file (if any) and applies --set SECTION.KEY=VALUE overrides in order.
// Throws StudyError naming the offending key.
Study load_study(const std::optional<std::string>& path, const std::vector<std::string>& sets);

// Checks cross-key constraints and computes the time grid. Throws StudyError.
RunParams<double> resolve(const Study& s);

// The study as TOML (every key, resolved defaults included) and as JSON for summary.json.
std::string to_toml(const Study& s, const RunParams<double>& rp);
nlohmann::json to_json(const Study& s, const RunParams<double>& rp);

}  // namespace chens
