// The source tree's path, for tests that read its files (pinned outputs, docs/study-format.md,
// the example studies and models). It is compiled into one small unit (source_dir.cpp, with
// CHENS_SOURCE_DIR) rather than into the units that use it: a unit that expands an absolute path
// from its command line misses the compiler cache in every other checkout (CI's clean clone), so
// only that small unit compiles again there (docs/performance.md, "Test units in batches").
#pragma once

#include <string>

namespace chens::test {

const std::string& source_dir();

}  // namespace chens::test
