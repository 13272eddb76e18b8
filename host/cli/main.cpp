#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "mpi/mpi_runtime.hpp"

int main(int argc, char** argv) {
  try {
    chens::mpi_start(&argc, &argv);
  } catch (const std::exception& e) {
    std::cerr << "chens: " << e.what() << "\n";
    return 2;
  }
  std::vector<std::string> args(argv, argv + argc);
  // Under mpirun only rank 0 prints; a failing rank reports itself (mpi_runtime.cpp).
  std::ostringstream quiet;
  const bool root = chens::mpi_root();
  const int code = chens::cli_main(args, root ? static_cast<std::ostream&>(std::cout) : quiet,
                                   root ? static_cast<std::ostream&>(std::cerr) : quiet);
  chens::mpi_stop();
  return code;
}
