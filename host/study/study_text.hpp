// A study's TOML text as toml++ is given it: ASCII outside comments, its shape (nesting,
// dotted keys) and size bounded, so that toml++ 3.3's undefined behaviour on some non-ASCII
// code points and its recursion on deep input are never reached (scripts/fuzz-study.sh found
// both); the study file read as a table. Used by study_files.cpp.
#pragma once

#include <optional>
#include <string>

#include <toml++/toml.h>

namespace chens {

// The text with every non-ASCII character of a comment replaced by '?'. Throws StudyError
// naming `origin`, line and column at a non-ASCII byte outside a comment, more than 32
// nested arrays or tables, or a dotted key of more than 17 parts.
std::string ascii_toml(const std::string& text, const std::string& origin);

// TOML text (from `origin`, a file or --set) as a table; StudyError for text over the size
// limit, UTF-16, binary data or malformed TOML (origin:line:column).
toml::table parse_toml(const std::string& raw, const std::string& origin);

// The study file's table (empty without a file); StudyError for a path that is not a
// regular file, too large, or unreadable.
toml::table read_root(const std::optional<std::string>& path);

}  // namespace chens
