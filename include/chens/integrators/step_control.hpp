// The step size controller of Hairer's explicit Runge-Kutta codes (Hairer, Norsett & Wanner I,
// §II.4, with Lund's stabilisation, §IV.2): after a trial step of size h with error norm err,
//   accepted:  h_new = h / clamp(err^expo1 / facold^beta / safe, 1/fac_max, 1/fac_min),
//              facold = max(err, 1e-4), and no growth right after a rejection;
//   rejected:  h_new = h / min(err^expo1 / safe, 1/fac_min).
// DOPRI5's constants (Dopri5Tableau::control()): safe 0.9, factors [0.2, 10], beta 0.04,
// expo1 = 0.2 - 0.75 beta; DOP853's: safe 0.9, factors [0.333, 6], beta 0, expo1 = 1/8.
#pragma once

#include <cmath>

#include <chens/config.hpp>

namespace chens {

// The controller's memory per instance (every adaptive method's; the name is DOPRI5's, whose
// controller it was first).
template <class Real>
struct Dopri5Controller {
  Real facold = Real(1e-4);
  bool last_rejected = false;
};

struct HairerStepControl {
  double safe;     // safety factor
  double fac_min;  // the code's FAC1: the smallest factor a step is scaled by
  double fac_max;  // FAC2: the largest
  double expo1;    // the error's exponent, 1/(q + 1) - 0.75 beta (DOPRI5), 1/8 - 0.2 beta (DOP853)
  double beta;     // Lund stabilisation (0: none)
};

// ctl: the controller's memory (facold, last_rejected) as Dopri5Controller holds it.
template <class Real, class Memory>
CHENS_HD Real hairer_next_step(const HairerStepControl& c, Memory& ctl, Real err, Real h, bool accepted) {
  using std::pow;
  const Real safe = Real(c.safe), beta = Real(c.beta);
  const Real facc1 = Real(1) / Real(c.fac_min), facc2 = Real(1) / Real(c.fac_max);
  const Real fac11 = err > Real(0) ? pow(err, Real(c.expo1)) : Real(0);
  if (accepted) {
    Real fac = beta != Real(0) ? fac11 / pow(ctl.facold, beta) : fac11;
    fac = fac / safe;
    fac = fac > facc1 ? facc1 : (fac < facc2 ? facc2 : fac);
    Real hnew = h / fac;
    ctl.facold = err > Real(1e-4) ? err : Real(1e-4);
    if (ctl.last_rejected && hnew > h) hnew = h;
    ctl.last_rejected = false;
    return hnew;
  }
  Real f = fac11 / safe;
  f = f < facc1 ? f : facc1;
  ctl.last_rejected = true;
  return h / f;
}

}  // namespace chens
