// A [parameters] law set on a Study as the TOML's `[parameters] <name> = {...}` sets it
// (test_parameter_ensembles.cpp, test_parameter_groups.cpp).
#pragma once

#include <cstddef>
#include <utility>

#include "backends/parameter_laws.hpp"
#include "study/study.hpp"

namespace chens::test {

inline void set_law(Study& s, ParameterId p, ParameterLaw law) { s.vary[static_cast<std::size_t>(p)] = std::move(law); }

}  // namespace chens::test
