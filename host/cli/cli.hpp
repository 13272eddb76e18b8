// The chens command line, callable in-process (tests) and from main().
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace chens {

// Exit codes.
inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1;     // the run or writing its results failed
inline constexpr int exit_bad_input = 2;   // usage, study file, --set values
inline constexpr int exit_no_backend = 3;  // the requested backend is not available here
inline constexpr int exit_mismatch = 4;    // chens validate: CPU and GPU differ beyond the tolerance
inline constexpr int exit_all_lost = 5;    // chens run: written, but a run lost every instance (no statistics at t_final)
inline constexpr int exit_interrupted_int = 130;   // SIGINT: checkpoint written (128 + SIGINT)
inline constexpr int exit_interrupted_term = 143;  // SIGTERM: checkpoint written (128 + SIGTERM)
inline constexpr int exit_interrupted_usr1 = 138;  // SIGUSR1 (mpirun forwards it): checkpoint written (128 + SIGUSR1)
inline constexpr bool interrupted_exit(int code) {
  return code == exit_interrupted_int || code == exit_interrupted_term || code == exit_interrupted_usr1;
}

int cli_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace chens
