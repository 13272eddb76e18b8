// An adaptive pair (or Rodas5P) stepped on its own, as the per-instance driver takes it
// (ensemble/instance.hpp): trial steps by attempt(), sizes by next_step() with the DOPRI5
// controller's memory, no step past T (the last one shortened to land on it), right-hand
// sides counted as Method::rhs_per_attempt per trial step plus the first f(z0). For the
// methods' own tests, apart from the engine.
#pragma once

#include <chens/integrators/dopri5.hpp>

namespace chens::test {

struct AdaptiveRunStats {
  long accepted = 0, rejected = 0, rhs = 0;
};

template <class Method, class System>
typename System::State adaptive_run(const Method& m, const System& sys, typename System::State z, double T, double h,
                                    AdaptiveRunStats& st) {
  using State = typename System::State;
  Dopri5Controller<double> ctl;
  State k, zn, kn;
  sys.rhs(z, k);
  st = AdaptiveRunStats{};
  st.rhs = 1;
  double t = 0;
  while (t < T) {
    const bool last = t + 1.01 * h >= T;
    const double step = last ? T - t : h;
    const double err = m.attempt(sys, z, k, step, zn, kn);
    st.rhs += Method::rhs_per_attempt;
    if (err <= 1.0) {
      ++st.accepted;
      t = last ? T : t + step;
      z = zn;
      k = kn;
      h = m.next_step(ctl, err, step, true);
    } else {
      ++st.rejected;
      h = m.next_step(ctl, err, step, false);
    }
    if (st.accepted + st.rejected > 50000000) break;  // a runaway run fails its test, never hangs
  }
  return z;
}

}  // namespace chens::test
