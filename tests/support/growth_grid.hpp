// The sample times on which test_growth.cpp and test_study_outputs.cpp build synthetic error
// series with known growth: t = 0, 0.5, ..., 100 (201 samples, as a study's series.csv has them).
#pragma once

#include <vector>

namespace chens::test {

inline std::vector<double> growth_grid() {
  std::vector<double> t;
  for (int k = 0; k <= 200; ++k) t.push_back(0.5 * k);
  return t;
}

}  // namespace chens::test
