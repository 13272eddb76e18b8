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
  dop853 = 12,         // Dormand and Prince's 8(5,3) pair, adaptive (integrators/dop853.hpp)
  vern9 = 13,          // Verner's 9(8) pair, adaptive (integrators/vern9.hpp)
  rodas5p = 14,        // Steinebach's Rosenbrock 5(4), adaptive, L-stable (integrators/rodas5p.hpp)
  lobatto3 = 15,       // the 3-stage Lobatto IIIA-IIIB pair, order 4 (integrators/lobatto_iiia_iiib.hpp)
};
inline constexpr int method_count = 16;
// integrator.method's value for each method, as study files spell it (study_model.cpp).
const char* method_name(MethodId m);

// A set of methods, one bit per MethodId: what a unit instantiates (make_engine_for's
// Methods: listed_methods for the systems list's units, one for a unit compiled on first use,
// chens_add_model's METHODS for a user model's).
using MethodMask = std::uint32_t;
inline constexpr MethodMask all_methods = (MethodMask(1) << method_count) - 1;
constexpr MethodMask method_bit(MethodId m) { return MethodMask(1) << static_cast<int>(m); }
constexpr bool has_method(MethodMask set, MethodId m) { return (set & method_bit(m)) != 0; }
// The methods that integrate the constrained equations themselves (formulation
// "constrained"): RATTLE, its symmetric compositions and the Lobatto IIIA-IIIB pair.
inline constexpr MethodMask constrained_methods = method_bit(MethodId::rattle) | method_bit(MethodId::rattle4) |
                                                  method_bit(MethodId::rattle4_suzuki) | method_bit(MethodId::rattle6) |
                                                  method_bit(MethodId::rattle8) | method_bit(MethodId::lobatto3);
constexpr bool is_constrained_method(MethodId m) { return has_method(constrained_methods, m); }
// The methods that choose each instance's steps from its state (embedded error estimates):
// no fixed step grid, no tangents, double precision only.
inline constexpr MethodMask adaptive_methods = method_bit(MethodId::dopri5) | method_bit(MethodId::dop853) |
                                               method_bit(MethodId::vern9) | method_bit(MethodId::rodas5p);
constexpr bool is_adaptive_method(MethodId m) { return has_method(adaptive_methods, m); }
// The methods no unit of the systems list instantiates ahead of time, even where
// CHENS_AHEAD_OF_TIME = all: the high-order pairs (12 and 16 stages), Rodas5P (a Jacobian
// over N-component dual numbers and an N x N LU) and the Lobatto IIIA-IIIB pair, compiled on
// first use for the run that asks for one (dispatch/jit_systems.hpp), so that they cost the
// build and CI nothing (issue 44, items 2-4; docs/jit.md).
inline constexpr MethodMask first_use_methods = method_bit(MethodId::dop853) | method_bit(MethodId::vern9) |
                                                method_bit(MethodId::rodas5p) | method_bit(MethodId::lobatto3);
// Rodas5P's largest state: its Jacobian and W = I/(h gamma) - J are N x N per instance on the
// stack, and the Jacobian's forward-mode right-hand side carries N derivatives per component
// (a 16-atom chain: N = 64, 32 KiB per matrix). study_resolve refuses larger systems.
inline constexpr int rodas5p_max_state = 64;
// Rodas5P's largest state on the GPU (kernels/cuda_backend.cu refuses larger ones): one thread
// per instance keeps its Jacobian, W and LU in local memory, which the driver sets aside for as
// many threads as the device holds at once (2048 per SM). ptxas gives a chain of 7 atoms (28
// components) 54 KB a thread, about 14.6 GB on 132 SMs, and the frame grows as N^2 (docs/
// numerics.md, "Rodas5P"); the CPU, whose threads are few, takes up to rodas5p_max_state.
inline constexpr int rodas5p_max_gpu_state = 32;
// What a unit of the systems list instantiates with CHENS_AHEAD_OF_TIME = all (make_engine).
inline constexpr MethodMask listed_methods = all_methods & ~first_use_methods;

}  // namespace chens
