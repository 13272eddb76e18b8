// chens COMMAND ...: the entry point of the command line. It answers --help, --version and
// `help COMMAND` itself and hands each command its arguments; run, check and validate parse
// theirs with CLI11 (cli_args.cpp), plot passes them to its script, keys and models take one
// option.
#include "cli/cli.hpp"

#include <algorithm>
#include <stdexcept>

#include <chens/version.hpp>

#include "backends/cpu/cpu_isa.hpp"
#include "dispatch/jit_systems.hpp"
#include "cli/cli_internal.hpp"
#include "study/study_keys.hpp"

namespace chens {
namespace {

using cli::help_text;
using cli::see_help;

// chens keys --markdown: the one format there is, so anything else is a usage error.
int keys_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    out << help_text("keys");
    return exit_ok;
  }
  if (args.size() != 1 || args[0] != "--markdown") {
    err << "chens keys: " << (args.empty() ? "--markdown" : "only --markdown") << " is needed (the one format)\n"
        << see_help("keys");
    return exit_bad_input;
  }
  out << key_tables_markdown();
  return exit_ok;
}

}  // namespace

int cli_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.size() < 2) {
    err << cli::start_text;
    return exit_bad_input;
  }
  const std::string& command = args[1];
  if (command == "--help" || command == "-h" || (command == "help" && args.size() == 2)) {
    out << cli::overview_text;
    return exit_ok;
  }
  if (command == "--version") {
    // What the build has that a result depends on for its speed, not its numbers: the CPU
    // lanes' instruction sets (CHENS_CPU_ISAS) and the one this CPU would use.
    out << "chens " << CHENS_VERSION_STRING << "\n"
        << "CPU lanes compiled for " << cpu_isas_compiled_names()
        << " (CHENS_CPU_ISAS); this CPU's widest of them: " << cpu_isa_name(cpu_isa_widest()) << "\n";
    return exit_ok;
  }
  if (command == "help") {  // chens help COMMAND
    if (const char* text = help_text(args[2])) {
      out << text;
      return exit_ok;
    }
    err << "chens help: unknown command '" << args[2] << "'\n" << see_help("");
    return exit_bad_input;
  }
  const std::vector<std::string> rest(args.begin() + 2, args.end());
  if (command == "keys") return keys_command(rest, out, err);
  if (command == "plot") return cli::plot_command(rest, out, err);
  if (command == "models") return cli::models_command(rest, out, err);
  if (command == "run" || command == "check" || command == "validate") {
    // --help anywhere among the options asks for this command's help, not a run: also as an
    // option's value (`--set --help`) and after a bad option, which CLI11 would read as the
    // value or never reach.
    if (std::any_of(rest.begin(), rest.end(), [](const std::string& a) { return a == "--help" || a == "-h"; })) {
      out << help_text(command);
      return exit_ok;
    }
    // CHENS_CPU_ISA (backends/cpu/cpu_isa.hpp) forces the CPU lanes' instruction set: a value
    // that is not one, or one this CPU lacks, stops every command that runs, before any output.
    try {
      (void)cpu_isa_in_use();
      (void)jit_forced();  // CHENS_SYSTEMS likewise (dispatch/jit_systems.hpp)
    } catch (const std::invalid_argument& e) {
      err << "chens " << command << ": " << e.what() << "\n";
      return exit_bad_input;
    }
    if (command == "run") return cli::run_command(rest, out, err);
    return command == "check" ? cli::check_command(rest, out, err) : cli::validate_command(rest, out, err);
  }
  err << "chens: unknown command '" << command << "'\n" << see_help("");
  return exit_bad_input;
}

}  // namespace chens
