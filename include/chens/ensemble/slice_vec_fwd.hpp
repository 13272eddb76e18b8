// SliceVec declared, and whether a state type is one (is_slice_vec_v): what the generic
// integrators, diagnostics and lean steps ask of a thread group's state (embedded_pair.hpp's error
// norm and metrics.hpp's integration error sum it in the whole state's order; lean_steps.hpp's
// tests ask the group), without the groups themselves (ensemble/thread_group.hpp), which only
// the units that run chains on thread groups include.
#pragma once

#include <type_traits>

namespace chens {

// One lane's slice of a vector distributed over Group (ensemble/thread_group.hpp).
template <class Real, int N, class Group>
struct SliceVec;

template <class V>
struct is_slice_vec : std::false_type {};
template <class Real, int N, class Group>
struct is_slice_vec<SliceVec<Real, N, Group>> : std::true_type {};
template <class V>
inline constexpr bool is_slice_vec_v = is_slice_vec<V>::value;

}  // namespace chens
