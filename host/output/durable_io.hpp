// Writing files that survive a crash and say why they could not be written: the pieces the
// result files (writer.cpp) and checkpoints (checkpoint_file.cpp) share.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <filesystem>

namespace chens {

// Writes all n bytes to fd, again after a signal interrupts; 0, or the errno of the failure
// (EIO for a write that wrote nothing).
inline int write_all(int fd, const void* data, std::size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return w < 0 ? errno : EIO;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return 0;
}

// The rename of a complete file (or of a directory's files) reaches the disk with the directory.
inline void sync_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace chens
