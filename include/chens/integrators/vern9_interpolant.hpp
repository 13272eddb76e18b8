// The continuous extension of Verner's "most efficient" 9(8) pair (integrators/vern9.hpp):
// J. H. Verner, "Numerically optimal Runge-Kutta pairs with interpolants", Numer. Algorithms 53
// (2010) 383-396, its interpolant of order 9. Ten more stages, 17 to 26 (1-based; k[16..25]
// here), after the step's sixteen, and weight polynomials of degree 9 for the 26 stages:
//   z(t0 + theta h) = z0 + h sum_i b_i(theta) k_i,   b_i(theta) = sum_{p=1..9} bpoly(i, p) theta^p.
// b_i(0) = 0 and b_i(1) = the step's 9th-order weights Vern9Tableau::b(i) (0 for the extra
// stages), so the interpolant joins z0 to the step's z1.
//
// The coefficients, with all their digits, are SciML's OrdinaryDiffEq.jl's
// (github.com/SciML/OrdinaryDiffEq.jl, lib/OrdinaryDiffEqVerner/src/verner_tableaus.jl, the
// arbitrary-precision `big"..."` variants of `Vern9ExtraStages(::Type{T}, ::Type{T2})` (c17..c26,
// a1701..a2621: "FIVE ADDITIONAL STAGES FOR INTERPOLANT OF ORDER 8", then "... OF ORDER 9") and
// `Vern9InterpolationCoefficients(::Type{T})` (r011..r269: r_ip is the coefficient of theta^p in
// b_i(theta)), copied at commit b211787f7b18d3c5391121bd8c9e2d5fee54efee), Verner's 40-digit
// tables; the comment on each line names the source's coefficient.
//
// Stage numbering: their stage I (1-based) is our k[I - 1], their a_IJ our a(I - 1, J - 1) and
// their c_{I-1} (the node of stage I) our c(I - 1) / c_extra(I - 1). Their Vern9Tableau's 76
// nonzero a_IJ (stages 2 to 16) agree with Vern9Tableau::a(I - 1, J - 1) to double rounding,
// their b1, b8..b15 are our b(0), b(7..14) and their btilde = -d. So:
//  - stage 16 (k[15]) is the embedded 8th-order solution's extra stage; neither the extra stages
//    nor the interpolant use it (its weight polynomial is 0), nor stages 2 to 7 (k[1..6]);
//  - stage 17 (k[16]) has node 1 and the row a17j = b_j, the 9th-order weights digit for digit:
//    it is f(z_new), the next step's first stage. vern9_extra_stages takes it as a parameter
//    (the step's k_new), or computes it from its row, which gives z_new bit for bit as
//    EmbeddedPair::attempt does (weighted_stages, the same terms in the same order).
//
// The weight polynomials' coefficients reach 1.1e4 in magnitude and alternate in sign, so their
// rounding to double (up to ~9e-13 absolutely) bounds how well b_i(1) meets b(i): to ~1e-12,
// not to an ulp; the interpolant's error from it is at most ~1e-12 h |f| (measured on the
// pendulum: z(theta = 1) off z1 by 7.8e-13 at h = 0.4; errors at h = 0.1 of 1e-14 to 5e-14).
//
// tests/test_vern9_interpolant.cpp checks each extra row against its node, b(1) against the
// step's weights, the continuous order conditions, and the order on the pendulum.
#pragma once

#include <chens/config.hpp>
#include <chens/formulations/formulation.hpp>
#include <chens/linalg/vec.hpp>

namespace chens {

struct Vern9InterpolantTableau {
  static constexpr int extra_stages = 10, all_stages = 26, degree = 9;
  // a_extra(i, j): extra stage i = 16..25 (0-based; 1-based stage i + 1), j < i.
  CHENS_HD static constexpr double a_extra(int i, int j) {
    switch (i * 32 + j) {
      case 16 * 32 + 0: return 0.1461197685842315252051541915018784713459e-1;    // a1701
      case 16 * 32 + 7: return -0.3915211862331339089410228267288242030810;      // a1708
      case 16 * 32 + 8: return 0.2310932500289506415909675644868993669908;       // a1709
      case 16 * 32 + 9: return 0.1274766769992852382560589467488989175618;       // a1710
      case 16 * 32 + 10: return 0.2246434176204157731566981937082069688984;      // a1711
      case 16 * 32 + 11: return 0.5684352689748512932705226972873692126743;      // a1712
      case 16 * 32 + 12: return 0.5825871557215827200814768021863420902155e-1;   // a1713
      case 16 * 32 + 13: return 0.1364317403482215641609022744494239843327;      // a1714
      case 16 * 32 + 14: return 0.3057013983082797397721005067920369646664e-1;   // a1715
      case 17 * 32 + 0: return 0.1549973668189559302279946863304789372788e-1;    // a1801
      case 17 * 32 + 7: return 0.3355153219059635054403439303177105512242;       // a1808
      case 17 * 32 + 8: return 0.2003613944191860651552622660712101217322;       // a1809
      case 17 * 32 + 9: return 0.1252060659283549312946162355194540994211;       // a1810
      case 17 * 32 + 10: return 0.2298676393184206750544046308957155868736;      // a1811
      case 17 * 32 + 11: return -0.2020250653476181447824906889122391003637;     // a1812
      case 17 * 32 + 12: return 0.5917103230665456601422111997583025339897e-1;   // a1813
      case 17 * 32 + 13: return -0.2651834783047638681693835956996437528251e-1;  // a1814
      case 17 * 32 + 14: return -0.2384094602130971415278110567256446033405e-1;  // a1815
      case 17 * 32 + 16: return 0.2718171570208501807097257892166705118335e-1;   // a1817
      case 18 * 32 + 0: return 0.1302453943114338366054520296881099431474e-1;    // a1901
      case 18 * 32 + 7: return -0.7452850902413112085299330666038981625179;      // a1908
      case 18 * 32 + 8: return 0.2643867896429300961465132150322749722129;       // a1909
      case 18 * 32 + 9: return 0.1313961758372753932588328082078842388890;       // a1910
      case 18 * 32 + 10: return 0.2167253815122927263092467187957410643315;      // a1911
      case 18 * 32 + 11: return 0.8734117564076052559016338094938888451419;      // a1912
      case 18 * 32 + 12: return 0.1185905643935776688228545787724340848142e-1;   // a1913
      case 18 * 32 + 13: return 0.5876002941689550612992712203494447529933e-1;   // a1914
      case 18 * 32 + 14: return 0.3266518630202087866399279690939423159022e-2;   // a1915
      case 18 * 32 + 16: return -0.8959308648417929824525368306101792182274e-2;  // a1917
      case 18 * 32 + 17: return 0.6941415157202692219907482080827253287034e-1;   // a1918
      case 19 * 32 + 0: return 0.1397089996925942721283716334050740168797e-1;    // a2001
      case 19 * 32 + 7: return -0.4665765335957674596054673402956853940520;      // a2008
      case 19 * 32 + 8: return 0.2416372787216257077935214889875485248580;       // a2009
      case 19 * 32 + 9: return 0.1290363341345674735721677437066933999929;       // a2010
      case 19 * 32 + 10: return 0.2216700671735105311080225734522323922813;      // a2011
      case 19 * 32 + 11: return 0.6257275123364644931771253383573999863003;      // a2012
      case 19 * 32 + 12: return 0.4355312415679284117869124964829805160429e-1;   // a2013
      case 19 * 32 + 13: return 0.1011962491667290833450024852274278874501;      // a2014
      case 19 * 32 + 14: return 0.1808582254679721049279369742685497400353e-1;   // a2015
      case 19 * 32 + 16: return -0.2079875587689169691156509689282083267654e-1;  // a2017
      case 19 * 32 + 17: return -0.9022232517086218976198252891464664868640e-1;  // a2018
      case 19 * 32 + 18: return -0.1212796735622254216011467740438097427634;     // a2019
      case 20 * 32 + 0: return 0.1604638888318112738641232352800290501904e-1;    // a2101
      case 20 * 32 + 7: return 0.9517712399458336651642257453589397190702e-1;    // a2108
      case 20 * 32 + 8: return 0.1359187264655317806136927180199100622471;       // a2109
      case 20 * 32 + 9: return 0.1237765280959854006935081364365637515893;       // a2110
      case 20 * 32 + 10: return 0.2335656264102966047058755123098072346246;      // a2111
      case 20 * 32 + 11: return -0.9051508172625873314662090873741762206189e-1;  // a2112
      case 20 * 32 + 12: return -0.2537574270006131028513276914038326155331e-1;  // a2113
      case 20 * 32 + 13: return -0.1359631696887162048002744757083947500478;     // a2114
      case 20 * 32 + 14: return -0.4679214284145113075088049469061349990847e-1;  // a2115
      case 20 * 32 + 16: return 0.5177958859391748239949773879090325427473e-1;   // a2117
      case 20 * 32 + 17: return 0.9672595677476773313884172931875718705561e-1;   // a2118
      case 20 * 32 + 18: return 0.1477312690340742769720989417101989769314;      // a2119
      case 20 * 32 + 19: return -0.1150750712958503934434410263732282100773;     // a2120
      case 21 * 32 + 0: return 0.1802918623893620731908165792176564180038e-1;    // a2201
      case 21 * 32 + 7: return 0.6983601042028873702545973390560096201728e-1;    // a2208
      case 21 * 32 + 8: return -0.2541247660791663512384395986842781657182e-1;   // a2209
      case 21 * 32 + 9: return 0.8487827035463274491721441398893680307535e-2;    // a2210
      case 21 * 32 + 10: return -0.2427525516089801645451101966852425715128e-2;  // a2211
      case 21 * 32 + 11: return -0.1047839752893819879012607694745789515746;     // a2212
      case 21 * 32 + 12: return -0.1473147795248041942353840372690095884761e-1;  // a2213
      case 21 * 32 + 13: return -0.3916338390816177165706892282751065537530e-1;  // a2214
      case 21 * 32 + 14: return -0.1005657343293959419073236542225421561652e-1;  // a2215
      case 21 * 32 + 16: return 0.1102510392204834322538452331445716455061e-1;   // a2217
      case 21 * 32 + 17: return 0.5092830749095398308703438556315975226108e-2;   // a2218
      case 21 * 32 + 18: return 0.4759715599420644505591133410826632557391e-1;   // a2219
      case 21 * 32 + 19: return 0.3386307003288382751110965442296681690349e-1;   // a2220
      case 21 * 32 + 20: return 0.2764422831404797700452373965825845732168e-1;   // a2221
      case 22 * 32 + 0: return 0.1677431640522778042988664067637191163626e-1;    // a2301
      case 22 * 32 + 7: return 0.6220437408820475326702539861577894278533;       // a2308
      case 22 * 32 + 8: return -0.2060859809768841878234097076241307428139;      // a2309
      case 22 * 32 + 9: return 0.1156394989766058889629372195583391792474;       // a2310
      case 22 * 32 + 10: return 0.2664101793378358946544219293685167025971e-1;   // a2311
      case 22 * 32 + 11: return -0.9376810793418770527505892794460093668860;     // a2312
      case 22 * 32 + 12: return -0.1367806466702160302637074581619101741312;     // a2313
      case 22 * 32 + 13: return -0.3678480995268296672182605288991379118419;     // a2314
      case 22 * 32 + 14: return -0.9547871314402478902820445838193201497337e-1;  // a2315
      case 22 * 32 + 16: return 0.1013492018422369748729008873270013785313;      // a2317
      case 22 * 32 + 17: return -0.8911323084568593396468400926074881389560e-1;  // a2318
      case 22 * 32 + 18: return 0.4664140988974760478895528270623735057521;      // a2319
      case 22 * 32 + 19: return 0.4502736292354579812232681662308722738519;      // a2320
      case 22 * 32 + 20: return 0.1838522463326818655346135218242696774099;      // a2321
      case 23 * 32 + 0: return 0.1071149731491444187554380927165768658192e-1;    // a2401
      case 23 * 32 + 7: return -0.7094336118221108191937165464264324417735e-1;   // a2408
      case 23 * 32 + 8: return 0.1002164900340091596740582334112699697590;       // a2409
      case 23 * 32 + 9: return 0.1383453980468025108839271214703390659581;       // a2410
      case 23 * 32 + 10: return 0.1796330633578163411338104055485109917477;      // a2411
      case 23 * 32 + 11: return 0.9048246545576180974879274948815422276563e-1;   // a2412
      case 23 * 32 + 12: return -0.5460662294523338383345981122023862069115e-2;  // a2413
      case 23 * 32 + 13: return -0.3000457905119619782973021046143166498567e-1;  // a2414
      case 23 * 32 + 14: return -0.1145192026962799093665613252151017277867e-1;  // a2415
      case 23 * 32 + 16: return 0.1003394686109385076849515422360600302176e-1;   // a2417
      case 23 * 32 + 17: return -0.9506485282809046129031027932806241113157e-1;  // a2418
      case 23 * 32 + 18: return 0.4853358804093591445756711642658478691640e-1;   // a2419
      case 23 * 32 + 19: return 0.8013325919783924638483373011297347396327e-1;   // a2420
      case 23 * 32 + 20: return -0.1251643326835242045676140618774248455713;     // a2421
      case 24 * 32 + 0: return 0.1410172088869221367153586187761994182069e-1;    // a2501
      case 24 * 32 + 7: return -0.3713379753704491105936205420001801316029;      // a2508
      case 24 * 32 + 8: return 0.2231265548117180273161442520179150684520;       // a2509
      case 24 * 32 + 9: return 0.1287005345918120122888629169443916280865;       // a2510
      case 24 * 32 + 10: return 0.2224600659675494761192249831098918110654;      // a2511
      case 24 * 32 + 11: return 0.5382853042550701952740528638168708946100;      // a2512
      case 24 * 32 + 12: return 0.5417202616988763101781128062036252796548e-1;   // a2513
      case 24 * 32 + 13: return 0.1256968791308743925752109039299467082975;      // a2514
      case 24 * 32 + 14: return 0.2784492789002054061504430663197543089132e-1;   // a2515
      case 24 * 32 + 16: return -0.3077409246205059733390460511525401688205e-1;  // a2517
      case 24 * 32 + 17: return 0.8569805293689777608077303071761466118035e-2;   // a2518
      case 24 * 32 + 18: return -0.1535174690587044615794997685221990516897;     // a2519
      case 24 * 32 + 19: return -0.2179957030548196497189489878038029238243e-1;  // a2520
      case 24 * 32 + 20: return 0.1447128819737186799295514239727801525027e-1;   // a2521
      case 25 * 32 + 0: return 0.1424600411735646609296566581447532773183e-1;    // a2601
      case 25 * 32 + 7: return -0.3767107393295407091303982522049390741260;      // a2608
      case 25 * 32 + 8: return 0.2252399780730421480874737297000189000070;       // a2609
      case 25 * 32 + 9: return 0.1283603076292529988314451246143633426068;       // a2610
      case 25 * 32 + 10: return 0.2230238705261692544876826347415151339678;      // a2611
      case 25 * 32 + 11: return 0.5463127827750747224899202176094949607118;      // a2612
      case 25 * 32 + 12: return 0.5526190791375779994553849469706124289752e-1;   // a2613
      case 25 * 32 + 13: return 0.1285613508749982456581494397108686240388;      // a2614
      case 25 * 32 + 14: return 0.2857250681296406482698934635829147899039e-1;   // a2615
      case 25 * 32 + 16: return -0.2398761886357108720930416967644499057175e-1;  // a2617
      case 25 * 32 + 17: return 0.5556224458910509454379297181908734648749e-1;   // a2618
      case 25 * 32 + 18: return -0.1740675650762838674257930398070760254668e-1;  // a2619
      case 25 * 32 + 19: return -0.3815462365996979065575121886854199471011e-1;  // a2620
      case 25 * 32 + 20: return 0.1111878504898917877407531966545730451506e-1;   // a2621
      default: return 0.0;
    }
  }
  // The extra stages' nodes: c_extra(i) = sum_j a_extra(i, j), i = 16..25.
  CHENS_HD static constexpr double c_extra(int i) {
    switch (i) {
      case 16: return 1.0;                                         // c17
      case 17: return 0.7404185470631561083004100761798676215811;  // c18
      case 18: return 0.888;                                       // c19
      case 19: return 0.696;                                       // c20
      case 20: return 0.487;                                       // c21
      case 21: return 0.025;                                       // c22
      case 22: return 0.15;                                        // c23
      case 23: return 0.32;                                        // c24
      case 24: return 0.78;                                        // c25
      case 25: return 0.96;                                        // c26
      default: return 0.0;
    }
  }
  // bpoly(i, p): the coefficient of theta^p, p = 1..9, in b_i(theta), i = 0..25 (the source's
  // r(i+1)p). Zero for i = 1..6 and 15; b_0 alone has a linear term (r011 = 1).
  CHENS_HD static constexpr double bpoly(int i, int p) {
    switch (i * 16 + p) {
      case 0 * 16 + 1: return 1.0;                                             // r011
      case 0 * 16 + 2: return -28.33048870061739823290767301658881994700;      // r012
      case 0 * 16 + 3: return 257.6535452078577977252092979905248156497;       // r013
      case 0 * 16 + 4: return -1152.154455743457311528752964691951881858;      // r014
      case 0 * 16 + 5: return 2909.390878345408890936564599116550031880;       // r015
      case 0 * 16 + 6: return -4355.005172868188498048946108887283528629;      // r016
      case 0 * 16 + 7: return 3834.083497036262189455855371796461857871;       // r017
      case 0 * 16 + 8: return -1835.419052683407081215583427992189311730;      // r018
      case 0 * 16 + 9: return 368.7958613829998340610814211036270246107;       // r019
      case 7 * 16 + 2: return 2.649656243770091212685381903551424676261;       // r082
      case 7 * 16 + 3: return -96.30312807816005963630382777245983513008;      // r083
      case 7 * 16 + 4: return 869.3095462492795755338599928089438369769;       // r084
      case 7 * 16 + 5: return -3395.688567551074115525201961265641584358;      // r085
      case 7 * 16 + 6: return 6796.933987158715680563278170147156885480;       // r086
      case 7 * 16 + 7: return -7340.848417712071304684606060804637321789;      // r087
      case 7 * 16 + 8: return 4082.848896992365666259441580054990759905;       // r088
      case 7 * 16 + 9: return -919.2934944890586676320942978986329899642;      // r089
      case 8 * 16 + 2: return -1.563945181928732780647121505551017046606;      // r092
      case 8 * 16 + 3: return 56.84239739272860000194549791973820565214;       // r093
      case 8 * 16 + 4: return -513.1052300304284642178552372517916694426;      // r094
      case 8 * 16 + 5: return 2004.286702110323162741493515173880535381;       // r095
      case 8 * 16 + 6: return -4011.853305913929339500285683507736138334;      // r096
      case 8 * 16 + 7: return 4332.895839278586189971336003691596594090;       // r097
      case 8 * 16 + 8: return -2409.879347937144606091337260195738587773;      // r098
      case 8 * 16 + 9: return 542.6079835318221405169412532400889768401;       // r099
      case 9 * 16 + 2: return -0.8627103334967223830653368770735555216700;     // r102
      case 9 * 16 + 3: return 31.35565375185173442495465167501846267906;       // r103
      case 9 * 16 + 4: return -283.0413682227354209126847112083546012674;      // r104
      case 9 * 16 + 5: return 1105.613463426006937052739159664962261462;       // r105
      case 9 * 16 + 6: return -2213.036200678452629288185991597653042989;      // r106
      case 9 * 16 + 7: return 2390.131097754120588994847482867886207858;       // r107
      case 9 * 16 + 8: return -1329.348266146873716496636094950745123424;      // r108
      case 9 * 16 + 9: return 299.3158071265785138462868993727082901209;       // r109
      case 10 * 16 + 2: return -1.520295337901214839055193576160469820911;     // r112
      case 10 * 16 + 3: return 55.25592121120227100440616045452813504748;      // r113
      case 10 * 16 + 4: return -498.7844190970740738969945498750124435385;     // r114
      case 10 * 16 + 5: return 1948.346888525776056658403461666308795237;      // r115
      case 10 * 16 + 6: return -3899.882136407551390287649940376076923682;     // r116
      case 10 * 16 + 7: return 4211.964345158858030803618536151121927765;      // r117
      case 10 * 16 + 8: return -2342.619408856117128087568672414857706561;     // r118
      case 10 * 16 + 9: return 527.4637482204278644179968961638568925209;      // r119
      case 11 * 16 + 2: return -3.846938844125523400516071820264700141179;     // r122
      case 11 * 16 + 3: return 139.8189840986840520353362018994734906611;      // r123
      case 11 * 16 + 4: return -1262.118687621600386514715930156791825893;     // r124
      case 11 * 16 + 5: return 4930.075848057311658057235318456802793199;      // r125
      case 11 * 16 + 6: return -9868.219486069539059368988308801366826185;     // r126
      case 11 * 16 + 7: return 10657.90892434886730229746304583865145121;      // r127
      case 11 * 16 + 8: return -5927.738759872814112912292792695856187255;     // r128
      case 11 * 16 + 9: return 1334.688551172190921099749059976639173619;      // r129
      case 12 * 16 + 2: return -0.3942713061200141454309326713125653612517;    // r132
      case 12 * 16 + 3: return 14.32999476067649707020689155180345562459;      // r133
      case 12 * 16 + 4: return -129.3540665994558117853022852051786116929;     // r134
      case 12 * 16 + 5: return 505.2816077002517600897861155496606850457;      // r135
      case 12 * 16 + 6: return -1011.390080139433268878243655218566636574;     // r136
      case 12 * 16 + 7: return 1092.325051781891697669369143688906543465;      // r137
      case 12 * 16 + 8: return -607.5317019302810290917918493845279272648;     // r138
      case 12 * 16 + 9: return 136.7917244480423273434147193694336909663;      // r139
      case 13 * 16 + 2: return -0.9233145622082101394378429409444333268499;    // r142
      case 13 * 16 + 3: return 33.55834582309798808260613735851232640640;      // r143
      case 13 * 16 + 4: return -302.9246397549735936661321348695774835448;     // r144
      case 13 * 16 + 5: return 1183.281306967867553342903125095128753568;      // r145
      case 13 * 16 + 6: return -2368.498986790111516106072390247333149007;     // r146
      case 13 * 16 + 7: return 2558.034559755808027369106332027405169828;      // r147
      case 13 * 16 + 8: return -1422.733175577880214903071122439856598476;     // r148
      case 13 * 16 + 9: return 320.3423358787481875842587982911148385364;      // r149
      case 14 * 16 + 2: return -0.2068862802930053801253649628830330891017;    // r152
      case 14 * 16 + 3: return 7.519388975651662772174695012120581518594;      // r153
      case 14 * 16 + 4: return -67.87605708082904058354114755731111898667;     // r154
      case 14 * 16 + 5: return 265.1367996984150421661637988925923843021;      // r155
      case 14 * 16 + 6: return -530.7074807559025368587558119659212235622;     // r156
      case 14 * 16 + 7: return 573.1765495641490277116961329189087439579;      // r157
      case 14 * 16 + 8: return -318.7905688834868978004500126002971837241;     // r158
      case 14 * 16 + 9: return 71.77882490212657594681492031347005327988;      // r159
      case 16 * 16 + 2: return -0.4472441906744099441704338175964823026105;    // r172
      case 16 * 16 + 3: return 16.44684676010503791623763886833381020592;      // r173
      case 16 * 16 + 4: return -154.4086105921295528355180056633078150675;     // r174
      case 16 * 16 + 5: return 641.8986298540248497333509289273669726482;      // r175
      case 16 * 16 + 6: return -1391.939225687982391028602609567895699003;     // r176
      case 16 * 16 + 7: return 1643.890568302952013019278202625162156841;      // r177
      case 16 * 16 + 8: return -1004.065297223317845596795060426393517046;     // r178
      case 16 * 16 + 9: return 248.6243327770222987362193390543305737239;      // r179
      case 17 * 16 + 2: return -0.1507876007899797948720901584434839156279;    // r182
      case 17 * 16 + 3: return 5.527328824824632235316362126620825363280;      // r183
      case 17 * 16 + 4: return -51.33833743084618751433903968701557585387;     // r184
      case 17 * 16 + 5: return 209.6022002703280347991393999433060881829;      // r185
      case 17 * 16 + 6: return -442.7692650421825928714839983614217797969;     // r186
      case 17 * 16 + 7: return 505.0579312588052893780948070449787925777;      // r187
      case 17 * 16 + 8: return -295.6336410615619366143935619944592839974;     // r188
      case 17 * 16 + 9: return 69.70457078142274038253812108643441743987;      // r189
      case 18 * 16 + 2: return -0.6413652207435296452288504944964177537185;    // r192
      case 18 * 16 + 3: return 23.51013248624684600263471193689787394701;      // r193
      case 18 * 16 + 4: return -218.3642683246972281497485359238725613162;     // r194
      case 18 * 16 + 5: return 891.5292818535365634586829868055833114383;      // r195
      case 18 * 16 + 6: return -1883.290177206007885518558760085145850658;     // r196
      case 18 * 16 + 7: return 2148.230954488399755970660772306573864434;      // r197
      case 18 * 16 + 8: return -1257.458401521712336970840850120592935471;     // r198
      case 18 * 16 + 9: return 296.4838434449778148523985255750527153802;      // r199
      case 19 * 16 + 2: return 1.810729313444845732964058528284532356045;      // r202
      case 19 * 16 + 3: return -66.37479657295337371220255196726289169374;     // r203
      case 19 * 16 + 4: return 616.4952025401106511929691356878863855003;      // r204
      case 19 * 16 + 5: return -2517.003030777322559684753470471663859295;     // r205
      case 19 * 16 + 6: return 5316.984175781033401491488704359579721604;      // r206
      case 19 * 16 + 7: return -6064.976140789574108556866601189158423779;     // r207
      case 19 * 16 + 8: return 3550.109538888391317555902194852386816092;      // r208
      case 19 * 16 + 9: return -837.0456783831301740195014698000522807852;     // r209
      case 20 * 16 + 2: return 0.5176008760353717918864555990277480363987e-1;  // r212
      case 20 * 16 + 3: return -1.897337862580348756406065418550014243949;     // r213
      case 20 * 16 + 4: return 17.62264820793629244181715147639285955422;      // r214
      case 20 * 16 + 5: return -71.94907400242465946110661282550878163878;     // r215
      case 20 * 16 + 6: return 151.9871383765666045085018751235590550206;      // r216
      case 20 * 16 + 7: return -173.3686498747860565970136435029707518663;     // r217
      case 20 * 16 + 8: return 101.4806461521468075879782291473158292931;      // r218
      case 20 * 16 + 9: return -23.92713108446217690295957956014097092250;     // r219
      case 21 * 16 + 2: return 31.32178255668799909977422939838912846070;      // r222
      case 21 * 16 + 3: return -355.6570858339106059687054319211280026146;     // r223
      case 21 * 16 + 4: return 1752.685282489515979253875884672206842255;      // r224
      case 21 * 16 + 5: return -4708.092293138363367969732154806019707156;     // r225
      case 21 * 16 + 6: return 7370.900776193488713149861391844801840850;      // r226
      case 21 * 16 + 7: return -6716.504964764565347011489385051202629762;     // r227
      case 21 * 16 + 8: return 3303.940398161185772296756776169088470785;      // r228
      case 21 * 16 + 9: return -678.5938956640391428503413103061359428182;     // r229
      case 22 * 16 + 2: return -2.719607334185924760747802644504744092917;     // r232
      case 22 * 16 + 3: return 86.64045615858264001154848875638486632034;      // r233
      case 22 * 16 + 4: return -454.1926030939030807863651114984001402596;     // r234
      case 22 * 16 + 5: return 1014.749221100543425314268817989377200147;      // r235
      case 22 * 16 + 6: return -1133.583456714543865890388885909333783663;     // r236
      case 22 * 16 + 7: return 610.4671827718666569168001429679645990946;      // r237
      case 22 * 16 + 8: return -109.0233499449543802317396567002119357593;     // r238
      case 22 * 16 + 9: return -12.33784294340547057337599296127606178639;     // r239
      case 23 * 16 + 2: return 3.177214801432923432265738869490200556403;      // r242
      case 23 * 16 + 3: return -113.8098697715142983214434051918276259885;     // r243
      case 23 * 16 + 4: return 978.0935981825675014833003847211971070224;      // r244
      case 23 * 16 + 5: return -3575.129377623670076451027372711378100786;     // r245
      case 23 * 16 + 6: return 6764.361519838450570830405988615992045681;      // r246
      case 23 * 16 + 7: return -6987.161043852012362644872233028628887679;     // r247
      case 23 * 16 + 8: return 3751.905762789571137088934326513342858381;      // r248
      case 23 * 16 + 9: return -821.4378043648253954175634277881875971878;     // r249
      case 24 * 16 + 2: return 0.8772843083465530069477626269697233842708;     // r252
      case 24 * 16 + 3: return -31.51810423988375104361582759389916060143;     // r253
      case 24 * 16 + 4: return 273.1229151353221133842213845530391043248;      // r254
      case 24 * 16 + 5: return -993.2198643101781966584366870874238565290;     // r255
      case 24 * 16 + 6: return 1787.888078312663987193988385659681964836;      // r256
      case 24 * 16 + 7: return -1677.394835799640950953367739332661886275;     // r257
      case 24 * 16 + 8: return 781.3579535062687952504707744453846824540;      // r258
      case 24 * 16 + 9: return -141.1134269128985501802080532710905715931;     // r259
      case 25 * 16 + 2: return 1.719427581798715782378897599231938082126;      // r262
      case 25 * 16 + 3: return -62.89867309250732184389962568482931880335;     // r263
      case 25 * 16 + 4: return 580.3335507873980391019057196688995930872;      // r264
      case 25 * 16 + 5: return -2348.110620506760958600472968113883922730;     // r265
      case 25 * 16 + 6: return 4921.119298612906015908637628774963068611;      // r266
      case 25 * 16 + 7: return -5597.912448707916639109910311016358007839;     // r267
      case 25 * 16 + 8: return 3288.597775149621789973016480733216881572;      // r268
      case 25 * 16 + 9: return -782.8483098245396412116558219612402319811;     // r269
      default: return 0.0;
    }
  }
  // b_i(theta) by Horner: theta (bpoly(i, 1) + theta (bpoly(i, 2) + ... + theta bpoly(i, 9))).
  template <class Real>
  CHENS_HD static Real weight(int i, Real theta) {
    Real s = Real(bpoly(i, degree));
    for (int p = degree - 1; p >= 1; --p) s = s * theta + Real(bpoly(i, p));
    return s * theta;
  }
  CHENS_HD static double b_theta(int i, double theta) { return weight<double>(i, theta); }

  // The interpolant in the form the engine locates first passages with
  // (ensemble/passage_location.hpp's StepInterpolant, 6 terms): the cubic Hermite of the step's
  // ends z0, z1, h f(z0), h f(z1) plus theta^2 (1 - theta)^2 (c0 + theta (c1 + ... + theta c5)),
  // c_r = h sum_i quotient(r, i, b_i) k_i, b_i the step's 9th-order weights (0 for the extra
  // stages). Stage i's weight b_i(theta) less its part of the Hermite, b_i h01(theta) +
  // [i = 0] h10(theta) + [i = 16] h11(theta) (k[16] = f(z1)), vanishes with its derivative at
  // both ends (b_i(1) = b_i, b_i'(0) = [i = 0] and b_i'(1) = [i = 16]: Verner's interpolant is
  // C1, to the coefficients' rounding, ~1e-11), so it is theta^2 (1 - theta)^2 times a
  // quintic, whose coefficients this returns (the quotient of the degree-9 polynomial by
  // theta^2, then by (1 - theta)^2 from the lowest degree up; the remainder, ~1e-11, is
  // dropped, which keeps the ends exactly the step's).
  CHENS_HD static constexpr double quotient(int r, int i, double b_step) {
    double q_prev2 = 0.0, q_prev = 0.0, q = 0.0;
    for (int p = 0; p <= r; ++p) {
      const int power = p + 2;  // B(theta) / theta^2's coefficient of theta^p is B's of theta^(p + 2)
      double coefficient = bpoly(i, power);
      if (power == 2) coefficient -= 3.0 * b_step + (i == 0 ? -2.0 : 0.0) + (i == 16 ? -1.0 : 0.0);
      if (power == 3) coefficient -= -2.0 * b_step + (i == 0 ? 1.0 : 0.0) + (i == 16 ? 1.0 : 0.0);
      // (1 - 2 theta + theta^2) q(theta) = Q(theta): q_p = Q_p + 2 q_(p-1) - q_(p-2)
      q = coefficient + 2.0 * q_prev - q_prev2;
      q_prev2 = q_prev;
      q_prev = q;
    }
    return q;
  }
};

// The extra stages k[16..25] of a step of size h from z whose stages k[0..15] (k[0] = f(z))
// are given, with k[16] = f(z_new) given too (the step's k_new): k_i = f(z + h sum_j a_ij k_j),
// i = 17..25. Tableau: Vern9InterpolantTableau, or one with its members (a test's perturbed copy).
template <class Tableau = Vern9InterpolantTableau, class System, class Real>
CHENS_HD void vern9_extra_stages(const System& sys, const typename System::State& z, Real h,
                                 const typename System::State& f_new, typename System::State (&k)[26]) {
  static_assert(Tableau::all_stages == 26, "Verner's 9th-order interpolant has 26 stages");
  k[16] = f_new;
  for (int i = 17; i < Tableau::all_stages; ++i) {
    typename System::State zi = z;
    for (int j = 0; j < i; ++j)
      if (Tableau::a_extra(i, j) != 0.0) zi = axpy(zi, h * Real(Tableau::a_extra(i, j)), k[j]);
    eval_rhs(sys, zi, k[i]);
  }
}

// As above, k[16] = f(z_new) computed from its row (a17j = b_j: z_new as the step has it).
template <class Tableau = Vern9InterpolantTableau, class System, class Real>
CHENS_HD void vern9_extra_stages(const System& sys, const typename System::State& z, Real h,
                                 typename System::State (&k)[26]) {
  typename System::State zi = z, f_new;
  for (int j = 0; j < 16; ++j)
    if (Tableau::a_extra(16, j) != 0.0) zi = axpy(zi, h * Real(Tableau::a_extra(16, j)), k[j]);
  eval_rhs(sys, zi, f_new);
  vern9_extra_stages<Tableau>(sys, z, h, f_new, k);
}

// z(t0 + theta h) = z + h sum_i b_i(theta) k_i over the 26 stages (the zero weights skipped),
// theta in [0, 1]: z at 0, the step's z_new at 1.
template <class Tableau = Vern9InterpolantTableau, class State, class Real>
CHENS_HD State vern9_interpolate(const State& z, Real h, const State (&k)[26], Real theta) {
  State out = z;
  for (int i = 0; i < Tableau::all_stages; ++i)
    if (Tableau::bpoly(i, Tableau::degree) != 0.0) out = axpy(out, h * Tableau::template weight<Real>(i, theta), k[i]);
  return out;
}

}  // namespace chens
