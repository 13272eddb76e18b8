// Verner's "most efficient" 9(8) pair with per-instance adaptive step size (issue 44, item 3):
// J. H. Verner, "Numerically optimal Runge-Kutta pairs with interpolants", Numer. Algorithms 53
// (2010) 383-396, with the coefficients (to 40 digits) as Verner publishes them on his pages.
// Sixteen stages: the 9th-order solution uses the first 15, the embedded 8th-order one all 16
// (d = its weights minus the 9th's). Not FSAL: an attempt costs 15 new stages and f(z_new) for
// the next step, 16 right-hand sides. (The pair's stages 17-26 are its interpolant, evaluated
// for a step in which a first passage happened.) tests/test_high_order_pairs.cpp checks the
// coefficients against the order conditions (each row against its node, the quadrature and
// tall-tree conditions to order 9, the 8th-order weights to 8 and not 9) and the pair's
// measured orders.
//
// Error norm as DOPRI5's (the root mean square of the scaled 8th-minus-9th difference); the
// controller Hairer's with the exponent 1/9 of an 8th-order estimate, factors [0.333, 6] and
// no Lund stabilisation, as DOP853's.
//
// `integrator.method = "vern9"`, compiled on first use (as dop853.hpp). Its first passages are
// located on the pair's interpolant of order 9 (stages 17-26, integrators/vern9_interpolant.hpp;
// ensemble/passage_location.hpp).
#pragma once

#include <cmath>

#include <chens/config.hpp>
#include <chens/formulations/formulation.hpp>
#include <chens/integrators/embedded_pair.hpp>
#include <chens/integrators/step_control.hpp>
#include <chens/integrators/vern9_interpolant.hpp>
#include <chens/linalg/vec.hpp>

namespace chens {

struct Vern9Tableau {
  static constexpr int stages = 16, order = 9;
  static constexpr bool fsal = false;  // f(z_new) is a 17th evaluation
  static constexpr const char* name = "vern9";
  // a(i, j), i = 1..15 (stage i + 1), j < i.
  CHENS_HD static constexpr double a(int i, int j) {
    switch (i * 16 + j) {
      case 1 * 16 + 0: return 0.0346200000000000;
      case 2 * 16 + 0: return -0.0389335438857287327017042687229284478532;
      case 2 * 16 + 1: return 0.1359578945245091786499878854939346230295;
      case 3 * 16 + 0: return 0.03638413148954266723060635628912731569111;
      case 3 * 16 + 2: return 0.1091523944686280016918190688673819470733;
      case 4 * 16 + 0: return 2.025763914393969636805657604282571047511;
      case 4 * 16 + 2: return -7.638023836496292020387602153091964592952;
      case 4 * 16 + 3: return 6.173259922102322383581944548809393545442;
      case 5 * 16 + 0: return 0.05112275589406060872792270881648288397197;
      case 5 * 16 + 3: return 0.1770823794555021537929910813839068684087;
      case 5 * 16 + 4: return 0.00080277624092225014536138698108025283759;
      case 6 * 16 + 0: return 0.1316006357975216279279871693164256985334;
      case 6 * 16 + 3: return -0.2957276252669636417685183174672273730699;
      case 6 * 16 + 4: return 0.0878137803564295237421124704053886667082;
      case 6 * 16 + 5: return 0.6213052975225274774321435005639430026100;
      case 7 * 16 + 0: return 0.07166666666666666666666666666666666666667;
      case 7 * 16 + 5: return 0.3305533578915319409260346730051472207728;
      case 7 * 16 + 6: return 0.2427799754418013924072986603281861125606;
      case 8 * 16 + 0: return 0.07180664062500000000000000000000000000000;
      case 8 * 16 + 5: return 0.3294380283228177160744825466257672816401;
      case 8 * 16 + 6: return 0.1165190029271822839255174533742327183599;
      case 8 * 16 + 7: return -0.03401367187500000000000000000000000000000;
      case 9 * 16 + 0: return 0.04836757646340646986611287718844085773549;
      case 9 * 16 + 5: return 0.03928989925676163974333190042057047002852;
      case 9 * 16 + 6: return 0.1054740945890344608263649267140088017604;
      case 9 * 16 + 7: return -0.02143865284648312665982642293830533996214;
      case 9 * 16 + 8: return -0.1041229174627194437759832813847147895623;
      case 10 * 16 + 0: return -0.02664561487201478635337289243849737340534;
      case 10 * 16 + 5: return 0.03333333333333333333333333333333333333333;
      case 10 * 16 + 6: return -0.1631072244872467239162704487554706387141;
      case 10 * 16 + 7: return 0.03396081684127761199487954930015522928244;
      case 10 * 16 + 8: return 0.1572319413814626097110769806810024118077;
      case 10 * 16 + 9: return 0.2152267478031879552303534778794770376960;
      case 11 * 16 + 0: return 0.03689009248708622334786359863227633989718;
      case 11 * 16 + 5: return -0.1465181576725542928653609891758501156785;
      case 11 * 16 + 6: return 0.2242577768172024345345469822625833796001;
      case 11 * 16 + 7: return 0.02294405717066072637090897902753790803034;
      case 11 * 16 + 8: return -0.0035850052905728761357394424889330334334;
      case 11 * 16 + 9: return 0.08669223316444385506869203619044453906053;
      case 11 * 16 + 10: return 0.4383840651968337846196219974168630120572;
      case 12 * 16 + 0: return -0.4866012215113340846662212357570395295088;
      case 12 * 16 + 5: return -6.304602650282852990657772792012007122988;
      case 12 * 16 + 6: return -0.281245618289472564778284183790118418111;
      case 12 * 16 + 7: return -2.679019236219849057687906597489223155566;
      case 12 * 16 + 8: return 0.518815663924157511565311164615012522024;
      case 12 * 16 + 9: return 1.365353187603341710683633635235238678626;
      case 12 * 16 + 10: return 5.885091088503946585721274891680604830712;
      case 12 * 16 + 11: return 2.802808786272062889819965117517532194812;
      case 13 * 16 + 0: return 0.4185367457753471441471025246471931649633;
      case 13 * 16 + 5: return 6.724547581906459363100870806514855026676;
      case 13 * 16 + 6: return -0.425444280164611790606983409697113064616;
      case 13 * 16 + 7: return 3.343279153001265577811816947557982637749;
      case 13 * 16 + 8: return 0.617081663117537759528421117507709784737;
      case 13 * 16 + 9: return -0.929966123939932833937749523988800852013;
      case 13 * 16 + 10: return -6.099948804751010722472962837945508844846;
      case 13 * 16 + 11: return -3.002206187889399044804158084895173690015;
      case 13 * 16 + 12: return 0.2553202529443445472336424602988558373637;
      case 14 * 16 + 0: return -0.779374086122884664644623040843840506343;
      case 14 * 16 + 5: return -13.93734253810777678786523664804936051203;
      case 14 * 16 + 6: return 1.252048853379357320949735183924200895136;
      case 14 * 16 + 7: return -14.69150040801686878191527989293072091588;
      case 14 * 16 + 8: return -0.494705058533141685655191992136962873577;
      case 14 * 16 + 9: return 2.242974909146236657906984549543692874755;
      case 14 * 16 + 10: return 13.36789380382864375813864978592679139881;
      case 14 * 16 + 11: return 14.39665048665068644512236935340272139005;
      case 14 * 16 + 12: return -0.7975813331776800379127866056663258667437;
      case 14 * 16 + 13: return 0.4409353709534277758753793068298041158235;
      case 15 * 16 + 0: return 2.058051337466886442151242368989994043993;
      case 15 * 16 + 5: return 22.35793772796803295519317565842520212899;
      case 15 * 16 + 6: return 0.90949810997556332745009198137971890783;
      case 15 * 16 + 7: return 35.89110098240264104710550686568482456493;
      case 15 * 16 + 8: return -3.442515027624453437985000403608480262211;
      case 15 * 16 + 9: return -4.865481358036368826566013387928704014496;
      case 15 * 16 + 10: return -18.90980381354342625688427480879773032857;
      case 15 * 16 + 11: return -34.26354448030451782929251177395134170515;
      case 15 * 16 + 12: return 1.264756521695642578827783499806516664686;
      default: return 0.0;
    }
  }
  // The nodes c(i) = sum_j a(i, j) (the test checks the rows against them).
  CHENS_HD static constexpr double c(int i) {
    switch (i) {
      case 1: return 0.0346200000000000;
      case 2: return 0.09702435063878044594828361677100617517633;
      case 3: return 0.1455365259581706689224254251565092627645;
      case 4: return 0.561000000000000;
      case 5: return 0.2290079115904850126662751771814700052182;
      case 6: return 0.5449920884095149873337248228185299947818;
      case 7: return 0.645000000000000;
      case 8: return 0.4837500000000000000000000000000000000000;
      case 9: return 0.0675700000000000;
      case 10: return 0.250000000000000;
      case 11: return 0.6590650618730998549405331618649220295334;
      case 12: return 0.820600000000000;
      case 13: return 0.901200000000000;
      case 14: return 1.00000000000000;
      case 15: return 1.00000000000000;
      default: return 0.0;
    }
  }
  // The 9th-order weights.
  CHENS_HD static constexpr double b(int i) {
    switch (i) {
      case 0: return 0.01461197685842315252051541915018784713459;
      case 7: return -0.3915211862331339089410228267288242030810;
      case 8: return 0.2310932500289506415909675644868993669908;
      case 9: return 0.1274766769992852382560589467488989175618;
      case 10: return 0.2246434176204157731566981937082069688984;
      case 11: return 0.5684352689748512932705226972873692126743;
      case 12: return 0.05825871557215827200814768021863420902155;
      case 13: return 0.1364317403482215641609022744494239843327;
      case 14: return 0.03057013983082797397721005067920369646664;
      default: return 0.0;
    }
  }
  // The 8th-order weights minus the 9th's: the error estimate's.
  CHENS_HD static constexpr double d(int i) {
    switch (i) {
      case 0: return 0.005357988290444578334669665030800840430050;
      case 7: return 2.583020491182463963471769926039661727945;
      case 8: return -0.1425225315468662612826303441690357783613;
      case 9: return -0.01342065351268867600756328623975571429440;
      case 10: return 0.02867296291409493339975957974875822883630;
      case 11: return -2.624999655215792304429522291883350513167;
      case 12: return 0.2825509643291537215078618092038201722614;
      case 13: return -0.1364317403482215641609022744494239843327;
      case 14: return -0.03057013983082797397721005067920369646664;
      case 15: return 0.04834231373823958314376726739772871714902;
      default: return 0.0;
    }
  }

  // DOPRI5's norm of the estimate h sum_i d_i k_i: the root mean square of its components
  // scaled by sc = atol + rtol max(|z|, |z_new|), in two parts as Dop853Tableau's (h enters
  // the terms, as the estimate's weights).
  static constexpr int error_sums = 1;
  template <class State, class Real>
  CHENS_HD static void error_terms(const State (&k)[stages], Real h, int c, Real sc, Real (&t)[error_sums]) {
    Real e = Real(0);
    for (int i = 0; i < stages; ++i)
      if (d(i) != 0.0) e = e + h * Real(d(i)) * k[i][c];
    t[0] = (e / sc) * (e / sc);
  }
  template <class Real>
  CHENS_HD static Real error_norm_of(const Real (&sum)[error_sums], Real n, Real) {
    using std::sqrt;
    return sqrt(sum[0] / n);
  }
  // Hairer's controller for an 8th-order estimate: exponent 1/9, factors [0.333, 6], no Lund
  // stabilisation (DOP853's constants but the exponent).
  CHENS_HD static constexpr HairerStepControl control() { return {0.9, 0.333, 6.0, 1.0 / 9.0, 0.0}; }

  // The interpolant of order 9 (integrators/vern9_interpolant.hpp), as EmbeddedPair's
  // dense_correction takes a continuous extension: f(z_new) (stage 17, k[16]), the ten more
  // stages' rows 18-26, and d(r, i), stage i's weight in the r-th of the six terms of
  // ensemble/passage_location.hpp's StepInterpolant (the Hermite of the ends plus
  // theta^2 (1 - theta)^2 times a quintic).
  static constexpr int dense_terms = 6, dense_stages = Vern9InterpolantTableau::all_stages;
  CHENS_HD static constexpr double a_dense(int i, int j) { return Vern9InterpolantTableau::a_extra(i, j); }
  CHENS_HD static constexpr double d(int r, int i) {
    return Vern9InterpolantTableau::quotient(r, i, i < stages ? b(i) : 0.0);
  }
};

template <class Real>
using Vern9 = EmbeddedPair<Vern9Tableau, Real>;

}  // namespace chens
