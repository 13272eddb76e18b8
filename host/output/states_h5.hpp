// states.h5: per-instance initial and final states, final metrics, lost reasons and work
// counters (output.states = true), and the recorded instances' trajectories (output.record).
// Written with HDF5's own C++ API; the layout is documented in docs/study-format.md
// ("states.h5") and read back with h5py by tests/output/test_states_h5.py.
#pragma once

#include <string>

#include "backends/ensemble_result.hpp"
#include "study/study.hpp"

namespace chens {

// Writes the file at path (a new file; an existing one is replaced). Throws
// std::runtime_error naming the path and HDF5's message; throws when the build has no
// HDF5 (resolve() refuses such studies before they run).
void write_states_h5(const std::string& path, const Study& s, const RunParams<double>& rp, const EnsembleResult& r);

}  // namespace chens
