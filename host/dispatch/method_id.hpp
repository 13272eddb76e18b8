// The integration methods (integrator.method): the one enumeration the study parser turns
// the study's string into, and that a system unit's method visitor (dispatch/methods.hpp)
// switches on. Apart from study.hpp so that system units need nothing of host/study.
// C++17-clean: nvcc compiles it.
#pragma once

namespace chens {

enum class MethodId : int { euler = 0, rk2 = 1, rk4 = 2, dopri5 = 3, midpoint = 4, gauss2 = 5, rattle = 6, verlet = 7 };
inline constexpr int method_count = 8;
// integrator.method's value for each method, as study files spell it (study_model.cpp).
const char* method_name(MethodId m);

}  // namespace chens
