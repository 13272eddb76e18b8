// states.h5: per-instance initial and final states, final metrics, lost reasons and work
// counters (output.states = true), and the recorded instances' trajectories (output.record).
// Written with HDF5's own C++ API; the layout is documented in docs/study-format.md
// ("states.h5") and read back with h5py by tests/output/test_states_h5.py.
#pragma once

#include <string>

#include "backends/ensemble_result.hpp"
#include "study/study.hpp"

namespace chens {

// The bytes of states.h5. HDF5 builds the file in memory (its core driver, no backing
// store) and the caller writes the bytes like any other output: a full disk is then an
// ordinary write error, never a failing H5Fclose that leaves HDF5 holding a file it cannot
// close (which crashed its shutdown). Costs the file's size in memory once more. Throws
// std::runtime_error with HDF5's message; throws when the build has no HDF5 (resolve()
// refuses such studies before they run).
std::string states_h5_image(const Study& s, const RunParams<double>& rp, const EnsembleResult& r);

}  // namespace chens
