// Two doubles in one SSE2 register, for the general lane path (ExplicitRk::step_lanes): a
// system rebound to D2 evaluates two instances' right-hand sides with packed instructions.
// D2 is simd_pack.hpp's Pack<2>, whose every operation is the IEEE double operation on
// each lane and nothing fused, so each lane is bit for bit what the same code computes in
// double. The packed loop (ensemble/packed_steps.hpp) uses wider packs. Host-only.
#pragma once

#if !defined(__CUDACC__) && defined(__SSE2__)
#include <chens/linalg/simd_pack.hpp>

#define CHENS_HAS_D2 1

namespace chens {

// This header keeps its name and length: explicit_rk.hpp, which nvcc compiles, includes it,
// and its guarded body is all nvcc's preprocessor skips (docs/performance.md, Build time).
using D2 = Pack<2>;

}  // namespace chens


#endif
