// The options of chens run, check and validate, parsed by CLI11 into RunArgs, with chens's
// own messages (docs/study-format.md, the command line): a bad command line is refused with
// its first error in command-line order, as one line.
#include <CLI/CLI.hpp>

#include <cmath>
#include <functional>
#include <set>

#include "cli/cli.hpp"
#include "cli/cli_internal.hpp"

namespace chens::cli {
namespace {

// An option's number: the whole of v read by `read` (std::stod, std::stol), or nullopt.
template <class Read>
auto whole(const std::string& v, Read read) -> std::optional<decltype(read(v, nullptr))> {
  std::size_t pos = 0;
  try {
    const auto x = read(v, &pos);
    if (pos == v.size()) return x;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

std::optional<double> whole_double(const std::string& v) {
  return whole(v, [](const std::string& s, std::size_t* pos) { return std::stod(s, pos); });
}

std::optional<long> whole_long(const std::string& v) {
  return whole(v, [](const std::string& s, std::size_t* pos) { return std::stol(s, pos); });
}

// What a flag's callback sees when the flag is given bare: anything else is a value given
// as --flag=VALUE, which chens refuses as an unknown option (CLI11 would take it).
constexpr const char* flag_bare = "given";
// CLI11 reads `--flag=` and `--flag={}` as the bare flag; the parser hands every value of a
// flag to CLI11 behind a NUL, which no command-line argument can hold, so that the flag's
// callback sees (and refuses) each of them.
constexpr char flag_value_mark = '\0';

// An argument as it was given: without the mark parse() put into a flag's value.
std::string unmarked(std::string a) {
  if (const std::size_t mark = a.find(flag_value_mark); mark != std::string::npos) a.erase(mark, 1);
  return a;
}

class Parser {
 public:
  Parser(Command command, RunArgs& r) : r_(r) {
    app_.set_help_flag();         // --help is answered before parsing (cli.cpp)
    app_.allow_extras();          // unknown options and surplus study files: chens's messages
    app_.validate_positionals();  // so that "-" and "-1" are unknown options, not study files
    study_ = app_.add_option("STUDY")->check(CLI::Validator(
        [](const std::string& v) { return !v.empty() && v[0] == '-' ? std::string("an option") : std::string(); }, ""));
    value("--set", [this](const std::string& v) { r_.sets.push_back(v); });
    value("--threads", [this](const std::string& v) {
      const long n = whole_long(v).value_or(-1);
      if (n < 1 || n > 4096) throw UsageError("--threads " + v + ": must be an integer in [1, 4096]");
      r_.threads = static_cast<int>(n);
    });
    if (command == Command::validate) {
      value("--rtol", [this](const std::string& v) { r_.rtol = tolerance("--rtol", v); });
      value("--atol", [this](const std::string& v) { r_.atol = tolerance("--atol", v); });
    } else {
      add_run_options();
      if (command == Command::check) flag("--compile", [this] { r_.compile = true; });
    }
  }

  void parse(const std::vector<std::string>& args) {
    // An empty `--opt=`: CLI11 reads it as `--opt` and takes the next argument as the value,
    // chens as an empty value (refused as such), so it goes to CLI11 as `--opt ""`.
    // `--flag=VALUE` goes as `--flag=<NUL>VALUE` (flag_value_mark).
    std::vector<std::string> reversed;  // CLI11 takes the arguments last first
    for (auto a = args.rbegin(); a != args.rend(); ++a) {
      const std::size_t eq = a->compare(0, 2, "--") == 0 ? a->find('=') : std::string::npos;
      const std::string name = eq == std::string::npos ? "" : a->substr(0, eq);
      if (value_options_.count(name) && eq + 1 == a->size()) {
        reversed.emplace_back();
        reversed.push_back(name);
      } else if (flags_.count(name)) {
        reversed.push_back(name + "=" + flag_value_mark + a->substr(eq + 1));
      } else {
        reversed.push_back(*a);
      }
    }
    try {
      app_.parse(reversed);
    } catch (const CLI::ArgumentMismatch&) {
      // Only the last argument can run out of values, and then it is the option's name.
      refuse_earlier_extra();
      throw UsageError(args.back() + " needs a value");
    } catch (const CLI::ParseError& e) {
      // None other is known with these options (no conversions, nothing required); should
      // CLI11 raise one, it is still a usage error, in CLI11's words, not a crash.
      throw UsageError(e.what());
    }
    refuse_earlier_extra();
    if (study_->count() > 0) r_.study = study_->results().front();
  }

 private:
  // An option that takes a value, as --opt VALUE or --opt=VALUE. CLI11 calls `take` as it
  // meets the option (trigger_on_parse), so that errors come in command-line order.
  void value(const std::string& name, std::function<void(const std::string&)> take) {
    value_options_.insert(name);
    app_.add_option_function<std::string>(
            name,
            [this, name, take](const std::string& v) {
              refuse_earlier_extra();
              // A value beginning with "--" is the next option, not a value (CLI11 takes the
              // argument after an option whatever it is): `--set --force` is not a key "--force".
              if (v.compare(0, 2, "--") == 0) throw UsageError(name + " needs a value (got the option " + unmarked(v) + ")");
              take(v);
            })
        ->trigger_on_parse();
  }

  void flag(const std::string& name, std::function<void()> take) {
    flags_.insert(name);
    app_.add_flag(name + "{" + flag_bare + "}")
        ->each([this, name, take](const std::string& v) {
          refuse_earlier_extra();
          if (v != flag_bare) throw UsageError("unknown option " + name + "=" + unmarked(v));
          take();
        })
        ->trigger_on_parse();
  }

  void add_run_options() {
    value("--out", [this](const std::string& v) {
      if (v.empty()) throw UsageError("--out needs a directory");
      r_.out = v;
      r_.out_given = true;
    });
    value("--resume", [this](const std::string& v) {
      if (v.empty()) throw UsageError("--resume needs the directory of an interrupted run");
      r_.resume = v;
    });
    value("--checkpoint-minutes", [this](const std::string& v) {
      const double x = whole_double(v).value_or(-1);
      if (!(x >= 0) || !std::isfinite(x))
        throw UsageError("--checkpoint-minutes " + v +
                         ": must be a finite number of minutes >= 0 (0: only when interrupted)");
      r_.checkpoint_minutes = x;
    });
    value("--checkpoint-segments", [this](const std::string& v) {
      const long n = whole_long(v).value_or(-1);
      if (n < 0) throw UsageError("--checkpoint-segments " + v + ": must be an integer >= 0 (0: off)");
      r_.checkpoint_segments = n;
    });
    value("--backend", [this](const std::string& v) {
      if (v != "auto" && v != "cpu" && v != "cuda")
        throw UsageError("--backend " + v + ": unknown backend; allowed: auto, cpu, cuda");
      r_.backend = v;
      r_.backend_given = true;
    });
    flag("--force", [this] { r_.force = true; });
    flag("--dry-run", [this] { r_.dry_run = true; });
    flag("--progress", [this] { r_.progress = 1; });
    flag("--no-progress", [this] { r_.progress = 0; });
    flag("--single", [this] { r_.single = true; });
  }

  static double tolerance(const std::string& name, const std::string& v) {
    const double x = whole_double(v).value_or(-1);
    if (!(x >= 0) || !std::isfinite(x)) throw UsageError(name + " " + v + ": must be a finite number >= 0");
    return x;
  }

  // What CLI11 set aside so far (app.remaining(): unknown options, study files after the
  // first) is an error before anything that comes after it.
  void refuse_earlier_extra() const {
    const std::vector<std::string> extra = app_.remaining();
    if (extra.empty()) return;
    const std::string& s = extra.front();
    if (!s.empty() && s[0] == '-') throw UsageError("unknown option " + s);
    throw UsageError("more than one study file given: " + study_->results().front() + " and " + s);
  }

  RunArgs& r_;
  CLI::App app_;
  CLI::Option* study_ = nullptr;
  std::set<std::string> value_options_, flags_;
};

// --single replaces the built-in default study by the defaults of every key; a study file or
// an interrupted study already says what runs. --resume takes the study, its directory and
// backend from the interrupted run (DIR/resume.json).
void refuse_exclusive_options(RunArgs& r) {
  if (r.single && r.resume)
    throw UsageError("--single and --resume " + *r.resume + " exclude each other: --resume continues the study saved in " +
                     *r.resume + "/resume.json");
  if (r.single && r.study)
    throw UsageError("--single and the study file " + *r.study +
                     " exclude each other: --single runs the defaults of "
                     "every key (with --set) instead of a study file");
  if (!r.resume) return;
  if (r.study || !r.sets.empty())
    throw UsageError("--resume " + *r.resume + " continues the study saved in " + *r.resume +
                     "/resume.json: give no study file and no --set");
  if (r.out_given) throw UsageError("--resume " + *r.resume + " writes into " + *r.resume + ": give no --out");
  if (r.backend_given)
    throw UsageError("--resume " + *r.resume + " runs on the backend that wrote the checkpoints: give no --backend");
  if (r.force || r.dry_run) throw UsageError("--resume takes neither --force nor --dry-run");
  r.out = *r.resume;
}

}  // namespace

RunArgs parse_run_args(const std::vector<std::string>& args, Command command) {
  RunArgs r;
  Parser(command, r).parse(args);
  refuse_exclusive_options(r);
  return r;
}

std::optional<int> read_input(const std::string& command, std::ostream& err, const std::function<void()>& read,
                              const std::function<std::string()>& hint) {
  try {
    read();
  } catch (const UsageError& e) {
    err << "chens " << command << ": " << e.what() << "\n" << see_help(command);
    return exit_bad_input;
  } catch (const StudyError& e) {
    err << "chens " << command << ": " << e.what() << (hint ? hint() : "") << "\n";
    return exit_bad_input;
  }
  return std::nullopt;
}

}  // namespace chens::cli
