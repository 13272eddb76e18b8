#include <omp.h>

#include <chens/ensemble/instance.hpp>
#include <chens/reference/pendulum_exact.hpp>

#include "backends/per_instance.hpp"
#include "dispatch/methods.hpp"

namespace chens {

PerInstanceResult cpu_run_pendulum_instances(const Study& s, const RunParams<double>& rp, std::uint64_t n) {
  PerInstanceResult r;
  r.final_state.resize(n * 4);
  r.metrics.resize(n * metric_count);
  r.lost.resize(n);
  r.counters.resize(n);
  const Pendulum<double> model{s.mass, s.length, s.gravity};
  const Pendulum<double>::State z0{{s.initial[0], s.initial[1], s.initial[2], s.initial[3]}};
  with_pendulum_formulation(s.formulation, model, [&](const auto& sys) {
    using System = std::decay_t<decltype(sys)>;
    return with_method(s.method, rp, [&](const auto& method) {
      using Method = std::decay_t<decltype(method)>;
#pragma omp parallel for schedule(static)
      for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i) {
        run_instance_to_end<System, Method, PendulumExact<double>>(
            sys, method, rp, z0, s.perturbation, s.seed, static_cast<std::uint64_t>(i), &r.final_state[i * 4],
            &r.metrics[i * metric_count], &r.lost[i], &r.counters[i]);
      }
      return 0;
    });
  });
  return r;
}

}  // namespace chens
