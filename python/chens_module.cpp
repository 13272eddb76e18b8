// The compiled part of the Python package `chens` (python/chens/__init__.py): chens run's,
// check's and validate's own code (host/cli/library_run.hpp), the command line itself (for
// chens plot), and the study keys' table.
//   _chens.run(...)  -> dict: exit code, the runs' result files as bytes, the comparison,
//                       chens run's stdout and stderr; bad input raises _chens.StudyError
//                       (a ValueError) with chens run's message. The GIL is released while
//                       the runs integrate; SIGINT stops them at the next stop point, as in
//                       the command line (exit code 130, a checkpoint where `out` is given).
//   _chens.command(...) -> chens check / validate on the same sources: exit code, report.
//   _chens.cli(args) -> the command line in-process: exit code, stdout, stderr.
//   _chens.keys()    -> every study key: section, name, default (TOML text or the docs'
//                       words), allowed values, meaning.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <iostream>
#include <optional>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "cli/library_run.hpp"
#include "study/study.hpp"
#include "study/study_key_table.hpp"

namespace py = pybind11;

namespace {

// chens run's stderr: kept for the exception's message, and with progress also shown.
class TeeBuffer : public std::streambuf {
 public:
  TeeBuffer(std::string& kept, bool show) : kept_(kept), show_(show) {}

 protected:
  int overflow(int c) override {
    if (c == traits_type::eof()) return 0;
    const char ch = static_cast<char>(c);
    kept_.push_back(ch);
    if (show_) std::cerr.put(ch);
    if (show_ && ch == '\n') std::cerr.flush();
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    kept_.append(s, static_cast<std::size_t>(n));
    if (show_) std::cerr.write(s, n).flush();
    return n;
  }

 private:
  std::string& kept_;
  bool show_;
};

chens::LibraryRunRequest request(const std::string& source, const std::string& study, const std::vector<std::string>& sets,
                                 const std::string& backend, int threads, const std::optional<std::string>& out, bool force,
                                 bool progress) {
  using Source = chens::LibraryRunRequest::Source;
  const Source from = source == "default"  ? Source::default_study
                      : source == "single" ? Source::single
                      : source == "file"   ? Source::file
                      : source == "resume" ? Source::resume
                                           : Source::text;
  return chens::LibraryRunRequest{from, study, sets, backend, threads, out, force, progress};
}

py::dict run(const std::string& source, const std::string& study, const std::vector<std::string>& sets,
             const std::string& backend, int threads, const std::optional<std::string>& out, bool force, bool progress) {
  const chens::LibraryRunRequest req = request(source, study, sets, backend, threads, out, force, progress);
  std::string messages;
  chens::LibraryStudyResult r;
  {
    TeeBuffer buffer(messages, progress);
    std::ostream err(&buffer);
    py::gil_scoped_release released;
    r = chens::run_for_library(req, err);
  }
  py::list runs;
  for (const auto& run : r.runs) {
    py::dict files;
    for (const auto& [name, bytes] : run.files) files[py::str(name)] = py::bytes(bytes);
    py::list overrides;
    for (const auto& [k, v] : run.overrides) overrides.append(py::make_tuple(k, v));
    runs.append(py::dict(py::arg("name") = run.name, py::arg("overrides") = overrides, py::arg("files") = files));
  }
  return py::dict(py::arg("code") = r.code, py::arg("several") = r.several, py::arg("runs") = runs,
                  py::arg("comparison_csv") = r.comparison_csv, py::arg("table") = r.table, py::arg("messages") = messages);
}

// chens check / validate: exit code, stdout (the report), stderr.
py::dict command(const std::string& name, const std::string& source, const std::string& study,
                 const std::vector<std::string>& sets, const std::string& backend, int threads, double rtol, double atol) {
  const chens::LibraryRunRequest req = request(source, study, sets, backend, threads, std::nullopt, false, false);
  std::string messages;
  chens::LibraryCommandResult r;
  {
    TeeBuffer buffer(messages, false);
    std::ostream err(&buffer);
    py::gil_scoped_release released;
    r = chens::command_for_library(name == "check" ? chens::LibraryCommand::check : chens::LibraryCommand::validate, req,
                                   rtol, atol, err);
  }
  return py::dict(py::arg("code") = r.code, py::arg("report") = r.report, py::arg("messages") = messages);
}

// The command line itself (chens plot): exit code, stdout, stderr.
py::tuple cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  std::vector<std::string> argv{"chens"};
  argv.insert(argv.end(), args.begin(), args.end());
  int code = 0;
  {
    py::gil_scoped_release released;
    code = chens::cli_main(argv, out, err);
  }
  return py::make_tuple(code, out.str(), err.str());
}

py::list keys() {
  py::list out;
  for (const chens::StudyKey& k : chens::study_keys()) {
    py::dict d;
    d["section"] = k.section;
    d["name"] = k.name;
    if (k.type.value) d["default_toml"] = chens::toml_text(k.type.value(chens::Study{}));
    else d["default_toml"] = py::none();
    if (k.doc_default) d["default_note"] = k.doc_default;
    else d["default_note"] = py::none();
    d["allowed"] = k.type.allowed + (k.doc_allowed ? "; " + std::string(k.doc_allowed) : "");
    d["meaning"] = k.meaning ? k.meaning : "";
    out.append(d);
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_chens, m) {
  m.doc() = "chens: ensembles of constrained Hamiltonian systems (the compiled part of the chens package)";
  py::register_exception<chens::StudyError>(m, "StudyError", PyExc_ValueError);
  m.def("run", &run, py::arg("source"), py::arg("study"), py::arg("sets"), py::arg("backend"), py::arg("threads"),
        py::arg("out"), py::arg("force"), py::arg("progress"));
  m.def("command", &command);
  m.def("cli", &cli);
  m.def("keys", &keys);
}
