// Dormand-Prince 5(4) with per-instance adaptive step size: Dopri5Tableau (tableaus.hpp) on
// the one stepper of the embedded pairs (embedded_pair.hpp), with the error norm, the
// controller and the continuous extension of Hairer's DOPRI5 code (Hairer, Norsett & Wanner I,
// §II.4-II.6): safety 0.9, factor bounds [0.2, 10], Lund stabilisation beta = 0.04, and the
// error norm sqrt(mean_i (e_i / (atol + rtol max(|z_i|, |z_new_i|)))^2).
#pragma once

#include <chens/integrators/embedded_pair.hpp>
#include <chens/integrators/tableaus.hpp>

namespace chens {

template <class Real>
using Dopri5 = EmbeddedPair<Dopri5Tableau, Real>;

}  // namespace chens
