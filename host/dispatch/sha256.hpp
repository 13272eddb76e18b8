// SHA-256 (FIPS 180-4), for the cache of objects compiled on first use: a user model's
// header and the files it includes key its objects (dispatch/source_models.hpp), so that an
// edit of any of them compiles the model again. CMake's file(SHA256) keys chens's own
// sources (cmake/ChensJitConfig.cmake); this is the same function, for files known at run time.
#pragma once

#include <string>

namespace chens {

// The digest of the bytes, as 64 lowercase hex digits.
std::string sha256_hex(const std::string& bytes);

}  // namespace chens
