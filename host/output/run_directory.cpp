#include "output/run_directory.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include <chens/diagnostics/metrics.hpp>

#include "output/durable_io.hpp"
#include "output/output_lock.hpp"

namespace chens {

namespace fs = std::filesystem;

void check_output_dir(const std::string& dir, bool force) {
  std::error_code ec;
  // A run writes its files into DIR itself (and --force would clear them there): never the
  // filesystem's root, which root may write.
  if (const fs::path canonical = fs::weakly_canonical(fs::absolute(dir, ec), ec); !ec && canonical == canonical.root_path())
    throw std::runtime_error("--out " + dir +
                             ": the root of the filesystem; give the results a directory of their own "
                             "(e.g. --out /tmp/run1)");
  if (!fs::exists(dir, ec)) return;
  if (!fs::is_directory(dir, ec)) throw std::runtime_error("--out " + dir + ": exists and is not a directory");
  if (force) return;
  for (const char* f : {"resume.json", "checkpoint.chk"})  // docs/checkpoints.md
    if (fs::exists(fs::path(dir) / f, ec))
      throw std::runtime_error("--out " + dir + ": holds " + f + " of an interrupted run; continue it with chens run " +
                               "--resume " + dir + ", choose another directory, or pass --force to replace it");
  for (const char* f : output_files) {
    if (fs::exists(fs::path(dir) / f, ec))
      throw std::runtime_error("--out " + dir + ": holds " + f +
                               " of an earlier run; choose another directory or pass --force to replace it");
  }
}

void write_file_checked(const fs::path& path, const std::string& bytes, const std::string& shown) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot write " + shown + ": " + std::strerror(errno));
  int error = write_all(fd, bytes.data(), bytes.size());
  if (error == 0 && ::fsync(fd) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    ::unlink(path.c_str());
    throw std::runtime_error("cannot write " + shown + ": " + std::strerror(error));
  }
}

namespace {

bool plain_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& text) {
  const fs::path target(path);
  const fs::path tmp =
      target.parent_path() / (".chens-partial-" + std::to_string(::getpid()) + "-" + target.filename().string());
  write_file_checked(tmp, text, path);
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw std::runtime_error("cannot write " + path + ": renaming the complete file into place failed: " + ec.message());
  }
  sync_directory(target.parent_path());
}

namespace {

// The files `chens plot` writes into plots/ (scripts/plot_study.py): its figures, PNG and SVG,
// and summary.txt. Anything else there is someone else's.
bool plot_file(const std::string& name) {
  if (name == "summary.txt") return true;
  const auto extension = name.rfind('.');
  if (extension == std::string::npos || (name.substr(extension) != ".png" && name.substr(extension) != ".svg")) return false;
  const std::string stem = name.substr(0, extension);
  for (int m = 0; m < metric_count; ++m)
    if (stem == metric_name(m)) return true;
  for (const char* f : {"convergence", "periodograms", "phase_error", "survival"})
    if (stem == f) return true;
  for (const char* f : {"periodogram", "end_atom"})  // and _<run> in a study
    if (stem == f || stem.rfind(std::string(f) + "_", 0) == 0) return true;
  return false;
}

// What chens wrote into the directory of a run (or of a study, whose own files the caller
// adds): its output files, checkpoint and resume record, chens plot's files in plots/ and the
// temporary files of a process killed while writing. A directory named like a file chens
// writes is someone else's.
void written_by_chens(const fs::path& d, std::vector<fs::path>& doomed) {
  std::error_code ec;
  std::vector<fs::path> files;
  for (const char* f : output_files) files.push_back(d / f);
  for (const char* f : {"checkpoint.chk", "resume.json"}) files.push_back(d / f);
  for (const fs::path& f : files) {
    const fs::file_type t = fs::symlink_status(f, ec).type();
    if (t != fs::file_type::not_found && t != fs::file_type::directory) doomed.push_back(f);
  }
  if (fs::symlink_status(d / "plots", ec).type() == fs::file_type::directory)
    for (fs::directory_iterator it(d / "plots", ec), end; !ec && it != end; it.increment(ec))
      if (it->symlink_status(ec).type() == fs::file_type::regular && plot_file(it->path().filename().string()))
        doomed.push_back(it->path());
  for (fs::directory_iterator it(d, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().rfind(".chens-partial-", 0) == 0) doomed.push_back(it->path());
}

// Removes dir if nothing is left in it.
void remove_if_empty(const fs::path& dir) {
  std::error_code ec;
  if (fs::symlink_status(dir, ec).type() == fs::file_type::directory && fs::is_empty(dir, ec)) fs::remove(dir, ec);
}

}  // namespace

std::vector<std::string> remove_earlier_results(const std::string& dir) {
  const fs::path d(dir);
  std::error_code ec;
  if (!fs::is_directory(d, ec)) return {};
  std::vector<fs::path> doomed, runs;
  // A study: in each run directory its index lists, what chens wrote there (not the whole
  // directory: a user's file inside it stays), and its own files.
  if (fs::exists(d / "study.json", ec)) {
    nlohmann::json index;
    try {
      std::ifstream in(d / "study.json");
      index = nlohmann::json::parse(in);
      for (const auto& run : index.at("runs")) {
        const std::string name = run.at("directory").get<std::string>();
        if (!plain_name(name)) throw std::runtime_error("run directory \"" + name + "\" is not a name inside it");
        if (fs::symlink_status(d / name, ec).type() == fs::file_type::directory) runs.push_back(d / name);
      }
    } catch (const std::exception& e) {
      throw std::runtime_error("--force: " + (d / "study.json").string() + " cannot be read (" + e.what() +
                               "), so chens cannot tell which of " + dir +
                               "'s directories the earlier study wrote; remove them yourself or choose another --out");
    }
    for (const char* f : {"study.json", "comparison.csv", "series_long.csv"})
      if (fs::symlink_status(d / f, ec).type() == fs::file_type::regular) doomed.push_back(d / f);
    for (const fs::path& r : runs) written_by_chens(r, doomed);
  }
  // A single run's files (or a study's plots and checkpoint records).
  written_by_chens(d, doomed);
  for (const fs::path& p : doomed) {
    fs::remove_all(p, ec);
    if (ec) throw std::runtime_error("--force: cannot remove " + p.string() + " of the earlier results: " + ec.message());
  }
  for (const fs::path& r : runs) remove_if_empty(r / "plots");
  for (const fs::path& r : runs) remove_if_empty(r);
  remove_if_empty(d / "plots");
  // What chens did not write stays, at any depth; the caller names it. (At most a few
  // thousand entries are walked: a big tree of the user's is named by its first ones.)
  std::vector<std::string> left;
  std::size_t walked = 0;
  for (fs::recursive_directory_iterator it(d, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end && walked < 4096; it.increment(ec), ++walked) {
    if (it.depth() == 0 && is_output_lock_file(it->path())) continue;
    const bool dir_entry = it->symlink_status(ec).type() == fs::file_type::directory;
    if (dir_entry && !fs::is_empty(it->path(), ec)) continue;  // its files are named instead
    left.push_back(fs::relative(it->path(), d, ec).string() + (dir_entry ? "/" : ""));
  }
  if (walked >= 4096) left.push_back("...");
  std::sort(left.begin(), left.end());
  return left;
}

}  // namespace chens
