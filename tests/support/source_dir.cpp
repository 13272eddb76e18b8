#include "support/source_dir.hpp"

namespace chens::test {

const std::string& source_dir() {
  static const std::string dir = CHENS_SOURCE_DIR;
  return dir;
}

}  // namespace chens::test
