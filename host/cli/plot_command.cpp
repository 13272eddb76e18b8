// chens plot DIR [options]: the figures of a run or a study, drawn by scripts/plot_study.py
// under Debian's /usr/bin/python3 with matplotlib. The options are the script's own (it
// parses and checks them), so they pass through untouched; its exit code is passed on.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>

#include "cli/cli.hpp"
#include "cli/cli_internal.hpp"

namespace chens::cli {
namespace {

// For the shell: '...' with ' written as '\''.
std::string shell_quoted(const std::string& a) {
  std::string q(1, '\'');
  for (char c : a) {
    if (c == '\'') {
      q.append("'\\''");
    } else {
      q.push_back(c);
    }
  }
  q.push_back('\'');
  return q;
}

}  // namespace

int plot_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  namespace fs = std::filesystem;
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    out << help_text("plot");
    return exit_ok;
  }
  if (args.empty()) {
    err << "chens plot: needs the directory of a run or a study\n" << see_help("plot");
    return exit_bad_input;
  }
  const char* python = "/usr/bin/python3";
  std::error_code ec;
  // An installed chens (cmake --install) finds the script beside it, PREFIX/share/chens/; a
  // build tree's chens the one in its source tree.
  fs::path script = fs::read_symlink("/proc/self/exe", ec).parent_path().parent_path() / "share" / "chens" / "plot_study.py";
  if (ec || !fs::exists(script, ec)) script = CHENS_PLOT_SCRIPT;
  if (!fs::exists(python, ec) || !fs::exists(script, ec)) {
    err << "chens plot: needs " << python << " and " << script.string()
        << " (scripts/bootstrap.sh installs python3-matplotlib)\n";
    return exit_no_backend;
  }
  std::string cmd = shell_quoted(python);
  cmd.append(" ").append(shell_quoted(script.string()));
  for (const std::string& a : args) cmd.append(" ").append(shell_quoted(a));
  out << std::flush;
  const int status = std::system(cmd.c_str());
  if (status == -1 || !WIFEXITED(status)) {
    err << "chens plot: could not run " << script.string() << "\n";
    return exit_failure;
  }
  return WEXITSTATUS(status);
}

}  // namespace chens::cli
