// User models from a header, compiled on first use (issue 42; docs/custom-models.md, "From a
// header, without a CMake project"): `[model] source = "models/pendulum.hpp"` and
// `kind = "<a spec's name>"`. The header's description (every spec it defines: name,
// parameters, coordinates, initial data, checks, the size of an instance) is compiled into an
// object of the cache (dispatch/jit_cache.hpp) and registered in the user-model registry
// (dispatch/custom_models.hpp) before the study's keys are read, since its parameters are
// [model] keys; its systems are compiled on first use as the built-in ones are
// (dispatch/jit_systems.hpp), for the run's formulation and method only, on the CPU.
//
// The objects are keyed by the header and every file it includes (SHA-256 of each; the
// compiler's dependency list names them), so an edit of any of them compiles the model
// again; chens's own sources are in every object's key already.
#pragma once

#include <string>
#include <vector>

namespace chens {

// The structs and classes the text defines at namespace scope (not templates, not nested in
// a class), qualified from the global namespace ("::PlanarPendulum", "::ns::Triatomic"), in
// order: the candidates for specs. Comments, strings and preprocessor lines are skipped.
std::vector<std::string> spec_candidates(const std::string& text);

// Registers the user models the header defines, compiling its description first where the
// cache lacks it (under the object's lock: MPI ranks and parallel processes compile it once);
// a model an earlier call registered from a header under the same name is replaced. Returns
// their names (model.kind), in the header's order. Throws StudyError where the path holds a
// double quote or a line break, the header is not a readable file, does not compile (the
// compiler's message, which names the header's file and line) or defines no spec, or where
// a spec has the name of a built-in model or of a model built into the executable
// (chens_add_model).
std::vector<std::string> load_source_models(const std::string& header);

}  // namespace chens
