// Parts of summary.json (writer.cpp) that a study's comparison (study_index.cpp) shows too,
// computed once for both.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "backends/ensemble_result.hpp"

namespace chens {

// summary.json's "first_passage" ([first_passage]): each level's counts and crossing times.
nlohmann::json first_passage_summary(const RunParams<double>& rp, const PassageResult& passage, std::uint64_t instances);
// summary.json's "live" (backends/live_fraction.hpp): how many instances the statistics are
// over at t_final, and from when fewer than few_live_fraction, or none, were live.
nlohmann::json live_summary(const std::vector<SampleStats>& series, std::uint64_t instances);

}  // namespace chens
