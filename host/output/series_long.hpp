// series_long.csv of a study of several runs (docs/study-format.md).
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace chens {

// series_long.csv: every complete run's series.csv (in dir/<directory>/, the runs of the
// index study.json) as rows run,time,metric,statistic,value; a run's live instance count
// is metric "live", statistic "count". Throws std::runtime_error naming a complete run
// whose series.csv cannot be read.
std::string series_long_csv(const std::string& dir, const nlohmann::json& index);

}  // namespace chens
