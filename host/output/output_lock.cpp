#include "output/output_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <sstream>
#include <thread>

namespace chens {

namespace fs = std::filesystem;

namespace {

std::string read_all(int fd) {
  std::string text;
  char buf[512];
  off_t at = 0;
  for (;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    at += n;
    if (text.size() > 4096) break;  // not a lock file of ours; enough for a message
  }
  return text;
}

// "chens pid N (started T, on host H)" from the lock file's "key value" lines.
std::string describe(const std::string& text) {
  std::istringstream in(text);
  std::string line, pid, host, started;
  while (std::getline(in, line)) {
    const auto sp = line.find(' ');
    if (sp == std::string::npos) continue;
    const std::string key = line.substr(0, sp), value = line.substr(sp + 1);
    if (key == "pid") pid = value;
    if (key == "host") host = value;
    if (key == "started") started = value;
  }
  if (pid.empty()) return "another chens (its lock file does not say which)";
  std::string s = "chens pid " + pid;
  if (!started.empty() || !host.empty())
    s += " (" + (started.empty() ? "" : "started " + started) + (started.empty() || host.empty() ? "" : ", ") +
         (host.empty() ? "" : "on host " + host) + ")";
  return s;
}

std::string this_host() {
  char h[256] = {};
  if (::gethostname(h, sizeof h - 1) != 0) return "";
  return h;
}

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

bool same_file(int fd, const fs::path& path) {
  struct stat a {
  }, b{};
  return ::fstat(fd, &a) == 0 && ::stat(path.c_str(), &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

}  // namespace

bool empty_but_lock(const fs::path& dir) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (!is_output_lock_file(it->path())) return false;
  return !ec;
}

OutputLock::OutputLock(const std::string& dir) : dir_(dir), file_(fs::path(dir) / output_lock_file_name) {
  std::error_code ec;
  if (fs::exists(dir_, ec) && !fs::is_directory(dir_, ec))
    throw std::runtime_error("--out " + dir + ": exists and is not a directory");
  if (!fs::exists(dir_, ec)) {
    created_ = fs::create_directories(dir_, ec);
    if (ec) throw std::runtime_error("--out " + dir + ": cannot create the directory: " + ec.message());
  }
  auto give_up = [&](const std::string& why) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (created_ && empty_but_lock(dir_)) fs::remove_all(dir_, ec);
    throw std::runtime_error("--out " + dir + ": " + why);
  };
  for (int attempt = 0;; ++attempt) {
    fd_ = ::open(file_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) give_up("cannot create its lock file " + file_.string() + ": " + std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int e = errno;
      if (e != EWOULDBLOCK) give_up("cannot lock " + file_.string() + ": " + std::strerror(e));
      std::string holder = read_all(fd_);
      if (holder.empty()) {  // the holder may be between its flock and writing its name
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        holder = read_all(fd_);
      }
      ::close(fd_);
      fd_ = -1;
      throw DirectoryInUse(dir + " is in use by " + describe(holder) +
                           ": one chens at a time writes a directory; wait for it to end, stop it, or choose another "
                           "--out");
    }
    // Its holder removes the file when it ends: a lock taken on a file that was unlinked
    // between our open and our flock guards nothing, so take it again on the new file.
    if (same_file(fd_, file_)) break;
    ::close(fd_);
    fd_ = -1;
    if (attempt == 100) give_up("cannot lock " + file_.string() + ": it keeps being replaced");
  }
  // Text left by a process that was killed: its lock went with it.
  const std::string previous = read_all(fd_);
  if (!previous.empty()) note_ = "took over " + file_.string() + " of " + describe(previous) + ", which no longer runs";
  // Only for the message of a second chens: on a full disk the lock holds without it.
  const std::string text = "pid " + std::to_string(::getpid()) + "\nhost " + this_host() + "\nstarted " + now_utc() + "\n";
  if (::ftruncate(fd_, 0) == 0) {
    const ssize_t ignored = ::pwrite(fd_, text.data(), text.size(), 0);
    (void)ignored;
  }
}

OutputLock::~OutputLock() {
  if (fd_ < 0) return;
  // Unlinked while still locked: a process that opened the old file retries on a new one.
  ::unlink(file_.c_str());
  ::close(fd_);
  std::error_code ec;
  if (created_ && fs::is_empty(dir_, ec)) fs::remove(dir_, ec);
}

}  // namespace chens
