// Dormand-Prince 8(5,3) with per-instance adaptive step size (issue 44, item 3): the explicit
// Runge-Kutta pair of Hairer, Norsett & Wanner, Solving ODEs I, §II.5 and §II.10, as Hairer's
// DOP853 code implements it. Twelve stages of order 8; the error is estimated by a 5th-order
// and a 3rd-order embedded solution together (the code's ERR, ERR2 and DENO):
//   err = |h| E5^2 / sqrt(n (E5^2 + 0.01 E3^2)),
//   E5^2 = sum_i (e5_i / sc_i)^2,  E3^2 = sum_i (e3_i / sc_i)^2,  sc_i = atol + rtol max(|z_i|, |z_new_i|),
// and the step size controller is the code's: safety 0.9, the step scaled by a factor in
// [0.333, 6] (FAC1, FAC2), exponent 1/8, no Lund stabilisation (BETA = 0).
// The coefficients are the code's (as also printed in Numerical Recipes, 3rd ed., StepperDopr853),
// with its continuous extension of order 7 (below), which locates first passages.
//
// `integrator.method = "dop853"`, compiled on first use (dispatch/method_id.hpp,
// first_use_methods); tested against independent numbers in tests/test_high_order_pairs.cpp.
#pragma once

#include <cmath>

#include <chens/config.hpp>
#include <chens/formulations/formulation.hpp>
#include <chens/integrators/embedded_pair.hpp>
#include <chens/integrators/step_control.hpp>
#include <chens/linalg/vec.hpp>

namespace chens {

struct Dop853Tableau {
  static constexpr int stages = 12, order = 8;
  static constexpr bool fsal = false;  // f(z_new) is a 13th evaluation
  static constexpr const char* name = "dop853";
  // a(i, j), i = 1..11 (stage i + 1), j < i.
  CHENS_HD static constexpr double a(int i, int j) {
    switch (i * 16 + j) {
      case 1 * 16 + 0: return 5.26001519587677318785587544488e-2;
      case 2 * 16 + 0: return 1.97250569845378994544595329183e-2;
      case 2 * 16 + 1: return 5.91751709536136983633785987549e-2;
      case 3 * 16 + 0: return 2.95875854768068491816892993775e-2;
      case 3 * 16 + 2: return 8.87627564304205475450678981324e-2;
      case 4 * 16 + 0: return 2.41365134159266685502369798665e-1;
      case 4 * 16 + 2: return -8.84549479328286085344864962717e-1;
      case 4 * 16 + 3: return 9.24834003261792003115737966543e-1;
      case 5 * 16 + 0: return 3.7037037037037037037037037037e-2;
      case 5 * 16 + 3: return 1.70828608729473871279604482173e-1;
      case 5 * 16 + 4: return 1.25467687566822425016691814123e-1;
      case 6 * 16 + 0: return 3.7109375e-2;
      case 6 * 16 + 3: return 1.70252211019544039314978060272e-1;
      case 6 * 16 + 4: return 6.02165389804559606850219397283e-2;
      case 6 * 16 + 5: return -1.7578125e-2;
      case 7 * 16 + 0: return 3.70920001185047927108779319836e-2;
      case 7 * 16 + 3: return 1.70383925712239993810214054705e-1;
      case 7 * 16 + 4: return 1.07262030446373284651809199168e-1;
      case 7 * 16 + 5: return -1.53194377486244017527936158236e-2;
      case 7 * 16 + 6: return 8.27378916381402288758473766002e-3;
      case 8 * 16 + 0: return 6.24110958716075717114429577812e-1;
      case 8 * 16 + 3: return -3.36089262944694129406857109825e0;
      case 8 * 16 + 4: return -8.68219346841726006818189891453e-1;
      case 8 * 16 + 5: return 2.75920996994467083049415600797e1;
      case 8 * 16 + 6: return 2.01540675504778934086186788979e1;
      case 8 * 16 + 7: return -4.34898841810699588477366255144e1;
      case 9 * 16 + 0: return 4.77662536438264365890433908527e-1;
      case 9 * 16 + 3: return -2.48811461997166764192642586468e0;
      case 9 * 16 + 4: return -5.90290826836842996371446475743e-1;
      case 9 * 16 + 5: return 2.12300514481811942347288949897e1;
      case 9 * 16 + 6: return 1.52792336328824235832596922938e1;
      case 9 * 16 + 7: return -3.32882109689848629194453265587e1;
      case 9 * 16 + 8: return -2.03312017085086261358222928593e-2;
      case 10 * 16 + 0: return -9.3714243008598732571704021658e-1;
      case 10 * 16 + 3: return 5.18637242884406370830023853209e0;
      case 10 * 16 + 4: return 1.09143734899672957818500254654e0;
      case 10 * 16 + 5: return -8.14978701074692612513997267357e0;
      case 10 * 16 + 6: return -1.85200656599969598641566180701e1;
      case 10 * 16 + 7: return 2.27394870993505042818970056734e1;
      case 10 * 16 + 8: return 2.49360555267965238987089396762e0;
      case 10 * 16 + 9: return -3.0467644718982195003823669022e0;
      case 11 * 16 + 0: return 2.27331014751653820792359768449e0;
      case 11 * 16 + 3: return -1.05344954667372501984066689879e1;
      case 11 * 16 + 4: return -2.00087205822486249909675718444e0;
      case 11 * 16 + 5: return -1.79589318631187989172765950534e1;
      case 11 * 16 + 6: return 2.79488845294199600508499808837e1;
      case 11 * 16 + 7: return -2.85899827713502369474065508674e0;
      case 11 * 16 + 8: return -8.87285693353062954433549289258e0;
      case 11 * 16 + 9: return 1.23605671757943030647266201528e1;
      case 11 * 16 + 10: return 6.43392746015763530355970484046e-1;
      default: return 0.0;
    }
  }
  // The 8th-order weights.
  CHENS_HD static constexpr double b(int i) {
    switch (i) {
      case 0: return 5.42937341165687622380535766363e-2;
      case 5: return 4.45031289275240888144113950566e0;
      case 6: return 1.89151789931450038304281599044e0;
      case 7: return -5.8012039600105847814672114227e0;
      case 8: return 3.1116436695781989440891606237e-1;
      case 9: return -1.52160949662516078556178806805e-1;
      case 10: return 2.01365400804030348374776537501e-1;
      case 11: return 4.47106157277725905176885569043e-2;
      default: return 0.0;
    }
  }
  // The 5th-order error estimate's weights (the code's ER).
  CHENS_HD static constexpr double e5w(int i) {
    switch (i) {
      case 0: return 0.1312004499419488073250102996e-01;
      case 5: return -0.1225156446376204440720569753e+01;
      case 6: return -0.4957589496572501915214079952e+00;
      case 7: return 0.1664377182454986536961530415e+01;
      case 8: return -0.3503288487499736816886487290e+00;
      case 9: return 0.3341791187130174790297318841e+00;
      case 10: return 0.8192320648511571246570742613e-01;
      case 11: return -0.2235530786388629525884427845e-01;
      default: return 0.0;
    }
  }
  // The 3rd-order estimate: b minus the code's BHH on stages 1, 9 and 12.
  CHENS_HD static constexpr double bhh(int i) {
    switch (i) {
      case 0: return 0.244094488188976377952755905512e+00;
      case 8: return 0.733846688281611857341361741547e+00;
      case 11: return 0.220588235294117647058823529412e-01;
      default: return 0.0;
    }
  }

  // The code's error norm (above) in two parts, so that EmbeddedPair sums it over a whole state
  // whichever threads hold it: component c's terms (e5_c / sc_c)^2 and (e3_c / sc_c)^2, and
  // the norm of their sums over the n components.
  static constexpr int error_sums = 2;
  template <class State, class Real>
  CHENS_HD static void error_terms(const State (&k)[stages], Real, int c, Real sc, Real (&t)[error_sums]) {
    Real e5 = Real(0), e3 = Real(0);
    for (int i = 0; i < stages; ++i) {
      if (e5w(i) != 0.0) e5 = e5 + Real(e5w(i)) * k[i][c];
      const double w3 = b(i) - bhh(i);
      if (w3 != 0.0) e3 = e3 + Real(w3) * k[i][c];
    }
    t[0] = (e5 / sc) * (e5 / sc);
    t[1] = (e3 / sc) * (e3 / sc);
  }
  template <class Real>
  CHENS_HD static Real error_norm_of(const Real (&sum)[error_sums], Real n, Real h) {
    using std::fabs;
    using std::sqrt;
    Real deno = sum[0] + Real(0.01) * sum[1];
    if (!(deno > Real(0))) deno = Real(1);
    return fabs(h) * sum[0] * sqrt(Real(1) / (n * deno));
  }

  // The continuous extension of order 7 (the code's CONTD8; Hairer, Norsett & Wanner I, §II.6):
  // after an accepted step, k[12] = f(z_new) and three more stages k[13..15] from z (their
  // nodes 0.1, 0.2 and 7/9), and the four terms c_r = h sum_i d(r, i) k_i of
  //   z(theta) = Hermite(theta) + theta^2 (1 - theta)^2 (c0 + theta (c1 + (1 - theta) (c2 + theta c3)))
  // (ensemble/passage_location.hpp). The coefficients are the code's A14.. to A16.. and D4.. to D7..
  static constexpr int dense_terms = 4, dense_stages = 16;
  CHENS_HD static constexpr double a_dense(int i, int j) {
    switch (i * 16 + j) {
      case 13 * 16 + 0: return 5.61675022830479523392909219681e-2;
      case 13 * 16 + 6: return 2.53500210216624811088794765333e-1;
      case 13 * 16 + 7: return -2.46239037470802489917441475441e-1;
      case 13 * 16 + 8: return -1.24191423263816360469010140626e-1;
      case 13 * 16 + 9: return 1.5329179827876569731206322685e-1;
      case 13 * 16 + 10: return 8.20105229563468988491666602057e-3;
      case 13 * 16 + 11: return 7.56789766054569976138603589584e-3;
      case 13 * 16 + 12: return -8.298e-3;
      case 14 * 16 + 0: return 3.18346481635021405060768473261e-2;
      case 14 * 16 + 5: return 2.83009096723667755288322961402e-2;
      case 14 * 16 + 6: return 5.35419883074385676223797384372e-2;
      case 14 * 16 + 7: return -5.49237485713909884646569340306e-2;
      case 14 * 16 + 10: return -1.08347328697249322858509316994e-4;
      case 14 * 16 + 11: return 3.82571090835658412954920192323e-4;
      case 14 * 16 + 12: return -3.40465008687404560802977114492e-4;
      case 14 * 16 + 13: return 1.41312443674632500278074618366e-1;
      case 15 * 16 + 0: return -4.28896301583791923408573538692e-1;
      case 15 * 16 + 5: return -4.69762141536116384314449447206e0;
      case 15 * 16 + 6: return 7.68342119606259904184240953878e0;
      case 15 * 16 + 7: return 4.06898981839711007970213554331e0;
      case 15 * 16 + 8: return 3.56727187455281109270669543021e-1;
      case 15 * 16 + 12: return -1.39902416515901462129418009734e-3;
      case 15 * 16 + 13: return 2.9475147891527723389556272149e0;
      case 15 * 16 + 14: return -9.15095847217987001081870187138e0;
      default: return 0.0;
    }
  }
  // d(r, i): the weight of stage i (0-based; 12 is f(z_new)) in c_r, r = 0..3 (D4i .. D7i).
  CHENS_HD static constexpr double d(int r, int i) {
    switch (r * 16 + i) {
      case 0 * 16 + 0: return -0.84289382761090128651353491142e+01;
      case 0 * 16 + 5: return 0.56671495351937776962531783590e+00;
      case 0 * 16 + 6: return -0.30689499459498916912797304727e+01;
      case 0 * 16 + 7: return 0.23846676565120698287728149680e+01;
      case 0 * 16 + 8: return 0.21170345824450282767155149946e+01;
      case 0 * 16 + 9: return -0.87139158377797299206789907490e+00;
      case 0 * 16 + 10: return 0.22404374302607882758541771650e+01;
      case 0 * 16 + 11: return 0.63157877876946881815570249290e+00;
      case 0 * 16 + 12: return -0.88990336451333310820698117400e-01;
      case 0 * 16 + 13: return 0.18148505520854727256656404962e+02;
      case 0 * 16 + 14: return -0.91946323924783554000451984436e+01;
      case 0 * 16 + 15: return -0.44360363875948939664310572000e+01;
      case 1 * 16 + 0: return 0.10427508642579134603413151009e+02;
      case 1 * 16 + 5: return 0.24228349177525818288430175319e+03;
      case 1 * 16 + 6: return 0.16520045171727028198505394887e+03;
      case 1 * 16 + 7: return -0.37454675472269020279518312152e+03;
      case 1 * 16 + 8: return -0.22113666853125306036270938578e+02;
      case 1 * 16 + 9: return 0.77334326684722638389603898808e+01;
      case 1 * 16 + 10: return -0.30674084731089398182061213626e+02;
      case 1 * 16 + 11: return -0.93321305264302278729567221706e+01;
      case 1 * 16 + 12: return 0.15697238121770843886131091075e+02;
      case 1 * 16 + 13: return -0.31139403219565177677282850411e+02;
      case 1 * 16 + 14: return -0.93529243588444783865713862664e+01;
      case 1 * 16 + 15: return 0.35816841486394083752465898540e+02;
      case 2 * 16 + 0: return 0.19985053242002433820987653617e+02;
      case 2 * 16 + 5: return -0.38703730874935176555105901742e+03;
      case 2 * 16 + 6: return -0.18917813819516756882830838328e+03;
      case 2 * 16 + 7: return 0.52780815920542364900561016686e+03;
      case 2 * 16 + 8: return -0.11573902539959630126141871134e+02;
      case 2 * 16 + 9: return 0.68812326946963000169666922661e+01;
      case 2 * 16 + 10: return -0.10006050966910838403183860980e+01;
      case 2 * 16 + 11: return 0.77771377980534432092869265740e+00;
      case 2 * 16 + 12: return -0.27782057523535084065932004339e+01;
      case 2 * 16 + 13: return -0.60196695231264120758267380846e+02;
      case 2 * 16 + 14: return 0.84320405506677161018159903784e+02;
      case 2 * 16 + 15: return 0.11992291136182789328035130030e+02;
      case 3 * 16 + 0: return -0.25693933462703749003312586129e+02;
      case 3 * 16 + 5: return -0.15418974869023643374053993627e+03;
      case 3 * 16 + 6: return -0.23152937917604549567536039109e+03;
      case 3 * 16 + 7: return 0.35763911791061412378285349910e+03;
      case 3 * 16 + 8: return 0.93405324183624310003907691704e+02;
      case 3 * 16 + 9: return -0.37458323136451633156875139351e+02;
      case 3 * 16 + 10: return 0.10409964950896230045147246184e+03;
      case 3 * 16 + 11: return 0.29840293426660503123344363579e+02;
      case 3 * 16 + 12: return -0.43533456590011143754432175058e+02;
      case 3 * 16 + 13: return 0.96324553959188282948394950600e+02;
      case 3 * 16 + 14: return -0.39177261675615439165231486172e+02;
      case 3 * 16 + 15: return -0.14972683625798562581422125276e+03;
      default: return 0.0;
    }
  }

  // Hairer's DOP853 controller: safety 0.9, factors [0.333, 6], exponent 1/8, BETA = 0.
  // (A function, not a static member: device code may call it, not refer to a host object.)
  CHENS_HD static constexpr HairerStepControl control() { return {0.9, 0.333, 6.0, 0.125, 0.0}; }
};

template <class Real>
using Dop853 = EmbeddedPair<Dop853Tableau, Real>;

}  // namespace chens
