// A fresh directory under the system temp dir, removed at scope exit.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

namespace chens::test {

class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("chens-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string str(const std::string& sub = "") const { return (sub.empty() ? path_ : path_ / sub).string(); }

 private:
  std::filesystem::path path_;
};

// A test's input file, written whole.
inline void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
}

}  // namespace chens::test
