// The backend a run goes to, as the front end chooses and passes it around (the CLI, MPI,
// the Python package): a value, where the backends themselves are types
// (backends/backend.hpp: CpuBackend, CudaBackend, which the system units are compiled for).
// --backend's "auto" is the request, not a backend: the CLI resolves it to one of these
// (cli/run_plan.cpp, choose_backend).
#pragma once

namespace chens {

enum class BackendId { cpu, cuda };

// The name the outputs and messages use: "cpu", "cuda" (Backend::name).
inline constexpr const char* backend_name(BackendId b) { return b == BackendId::cuda ? "cuda" : "cpu"; }

}  // namespace chens
