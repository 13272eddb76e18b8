// One writer per output directory: `chens run` holds DIR/.chens.lock for the whole run or
// study (docs/checkpoints.md, "One chens per directory"). The lock itself is an advisory
// flock(2) on that file, which the kernel drops when the process ends however it ends
// (kill -9 included): a lock that can be taken is never stale. The file's text (pid, host,
// start time) serves only the message that names the other process.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

namespace chens {

inline constexpr const char* output_lock_file_name = ".chens.lock";

// Another live process holds the directory's lock; what() names it.
struct DirectoryInUse : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class OutputLock {
 public:
  // Creates dir when missing and takes its lock. Throws DirectoryInUse ("DIR is in use by
  // chens pid N (started ...)") when another process holds it, std::runtime_error when dir
  // cannot be made or the lock file cannot be opened.
  explicit OutputLock(const std::string& dir);
  // Removes the lock file, then dir itself if this lock created it and nothing else is in it.
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

  // "took over the lock of pid N (...), which no longer runs" when a killed process left
  // its lock file behind; empty otherwise.
  const std::string& note() const { return note_; }

 private:
  std::filesystem::path dir_, file_;
  int fd_ = -1;
  bool created_ = false;
  std::string note_;
};

// Whether name is the lock file (not an output: directory listings and emptiness checks skip it).
inline bool is_output_lock_file(const std::filesystem::path& p) { return p.filename() == output_lock_file_name; }

// dir has nothing in it but possibly its lock file.
bool empty_but_lock(const std::filesystem::path& dir);

}  // namespace chens
