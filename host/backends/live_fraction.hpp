// How many of an ensemble's instances its statistics are over. Lost instances are frozen and
// leave the statistics (docs/study-format.md, "Lost instances"), so once most of an ensemble
// is lost its median is that of the few survivors — the instances that happened not to
// diverge — and reads better than an ensemble that kept them all. Every result a person reads
// says how many were live: summary.json's "live", the tables' live/N, the figures' marks
// (scripts/plot_study.py --min-live), and chens run's closing message.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/ensemble_result.hpp"

namespace chens {

// Below this fraction of its instances live, an ensemble's statistics are marked as those of
// the survivors (the plots' default of --min-live is the same).
inline constexpr double few_live_fraction = 0.5;

// The instances measured at sample k: every metric is measured on every live instance, so
// the first metric's count is the live count (series.csv's "live").
inline std::uint64_t live_at(const SampleStats& st) { return st.metric[0].count; }

struct LiveFraction {
  std::uint64_t instances = 0;  // the ensemble's (or a group's) size
  std::uint64_t final = 0;      // live at t_final
  double below_t = -1;          // the first sample time with fewer than few_live_fraction live, or -1
  double none_t = -1;           // the first sample time with none live, or -1
  double last_live_t = -1;      // the last sample time with any live, or -1

  double fraction() const { return instances == 0 ? 0.0 : static_cast<double>(final) / static_cast<double>(instances); }
  bool few() const { return below_t >= 0; }
  bool all_lost() const { return instances > 0 && final == 0; }
};

inline LiveFraction live_fraction(const std::vector<SampleStats>& series, std::uint64_t instances) {
  LiveFraction f;
  f.instances = instances;
  if (series.empty()) return f;
  f.final = live_at(series.back());
  for (const SampleStats& st : series) {
    const std::uint64_t live = live_at(st);
    if (f.below_t < 0 && static_cast<double>(live) < few_live_fraction * static_cast<double>(instances)) f.below_t = st.t;
    if (f.none_t < 0 && live == 0 && instances > 0) f.none_t = st.t;
    if (live > 0) f.last_live_t = st.t;
  }
  return f;
}

}  // namespace chens
