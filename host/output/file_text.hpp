// A file's whole contents, for the small files chens reads back (resume.json, study.json, a
// study given by path to the Python package).
#pragma once

#include <fstream>
#include <iterator>
#include <optional>
#include <string>

namespace chens {

// The bytes of `path` on this process's file system, or nullopt where it cannot be read.
inline std::optional<std::string> file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return text;
}

}  // namespace chens
