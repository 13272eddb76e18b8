#include "output/writer.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <chens/diagnostics/metrics.hpp>
#include <chens/version.hpp>

#include "output/growth.hpp"

namespace chens {

namespace fs = std::filesystem;

namespace {

std::string fmt(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

}  // namespace

nlohmann::json growth_exponents(const EnsembleResult& r) {
  nlohmann::json g;
  const double t_final = r.series.empty() ? 0.0 : r.series.back().t;
  const double t0 = t_final / 10, t1 = t_final;
  g["window"] = {t0, t1};
  g["statistic"] = "least-squares slope of log(running maximum) against log t, points weighted by their share of log t";
  std::vector<double> t;
  for (const auto& st : r.series) t.push_back(st.t);
  for (int m = 0; m < metric_count; ++m) {
    if (!r.metric_reported(m)) continue;
    std::vector<double> mx, p50;
    for (const auto& st : r.series) {
      const bool live = st.metric[m].count > 0;
      mx.push_back(live ? st.metric[m].max : NAN);
      p50.push_back(live ? st.quantile[m][quantile_p50] : NAN);
    }
    const auto fm = growth_exponent(t, mx, t0, t1), fp = growth_exponent(t, p50, t0, t1);
    g[metric_name(m)] = {{"max", fm ? number_or_null(fm->exponent) : nullptr},
                         {"p50", fp ? number_or_null(fp->exponent) : nullptr},
                         {"points", fm ? fm->points : 0}};
  }
  return g;
}

nlohmann::json make_summary(const Study& s, const RunParams<double>& rp, const EnsembleResult& r, const RunInfo& info) {
  nlohmann::json j;
  j["chens_version"] = CHENS_VERSION_STRING;
  j["backend"] = r.backend;
  j["backend_requested"] = info.backend_requested;
  if (!info.backend_note.empty()) j["backend_note"] = info.backend_note;
  j["device"] = r.device;
  j["study"] = to_json(s, rp);
  j["instances"] = r.instances;
  j["lost_instances"] = r.lost_total();
  j["lost"] = {{"non_finite", r.lost[int(LostReason::non_finite)]},
               {"step_size_underflow", r.lost[int(LostReason::step_size_underflow)]},
               {"max_steps", r.lost[int(LostReason::max_steps)]},
               {"initial_projection", r.lost[int(LostReason::initial_projection)]},
               {"reference_failed", r.lost[int(LostReason::reference_failed)]}};
  j["t_final"] = r.series.empty() ? 0.0 : r.series.back().t;
  j["samples"] = r.series.size();
  j["steps"] = r.totals.steps;
  j["rejected_steps"] = r.totals.rejected_steps;
  j["rhs_evaluations"] = r.totals.rhs_evaluations;
  j["fixed_point_iterations"] = r.totals.iterations;
  j["unconverged_steps"] = r.totals.unconverged_steps;
  j["projections"] = {{"momentum", r.totals.momentum_projections},
                      {"position", r.totals.position_projections},
                      {"position_newton_iterations", r.totals.position_newton_iterations},
                      {"unconverged_position", r.totals.unconverged_position_projections},
                      {"impetus_resets", r.totals.impetus_resets}};
  j["wall_seconds"] = r.wall_seconds;
  j["instance_steps_per_second"] =
      r.wall_seconds > 0 ? static_cast<double>(r.totals.steps) / r.wall_seconds : 0.0;
  nlohmann::json i0;
  i0["final_state"] = r.instance0_physical;
  if (r.instance0_state != r.instance0_physical) i0["final_state_variables"] = r.instance0_state;
  i0["lost"] = r.instance0_lost;
  j["instance0"] = i0;
  j["reference"] = {{"kind", r.reference_available ? r.reference_kind : std::string("none")},
                    {"instances_with_projected_initial_data", r.reference_projected},
                    {"steps", r.totals.reference_steps},
                    {"rhs_evaluations", r.totals.reference_rhs_evaluations}};
  for (int m = 0; m < metric_count; ++m) {
    const char* name = metric_name(m);
    if (!r.metric_reported(m)) {
      if (m == int(MetricId::integration_error)) j[name] = nullptr;  // asked for, but no reference
      continue;
    }
    double peak = 0.0;
    bool any = false;
    for (const auto& st : r.series) {
      if (st.metric[m].count == 0) continue;
      peak = any ? std::max(peak, st.metric[m].max) : st.metric[m].max;
      any = true;
    }
    const Accumulator& fin = r.series.back().metric[m];
    const bool live = fin.count > 0;
    j[name] = {{"final_mean", live ? number_or_null(fin.mean) : nullptr},
               {"final_rms", live ? number_or_null(fin.rms()) : nullptr},
               {"final_min", live ? number_or_null(fin.min) : nullptr},
               {"final_max", live ? number_or_null(fin.max) : nullptr},
               {"peak_max", any ? number_or_null(peak) : nullptr}};
    for (int q = 0; q < quantile_count; ++q)
      j[name][std::string("final_") + quantile_name[q]] = live ? number_or_null(r.series.back().quantile[m][q]) : nullptr;
  }
  j["growth_exponents"] = growth_exponents(r);
  return j;
}

std::string make_series_csv(const EnsembleResult& r) {
  std::ostringstream os;
  os << "t,live";
  for (int m = 0; m < metric_count; ++m) {
    if (!r.metric_reported(m)) continue;
    for (const char* stat : {"mean", "rms", "min", "max"}) os << ',' << metric_name(m) << '_' << stat;
    for (const char* q : quantile_name) os << ',' << metric_name(m) << '_' << q;
  }
  os << '\n';
  for (const auto& st : r.series) {
    os << fmt(st.t) << ',' << st.metric[0].count;
    for (int m = 0; m < metric_count; ++m) {
      if (!r.metric_reported(m)) continue;
      const Accumulator& a = st.metric[m];
      if (a.count == 0) {
        os << ",nan,nan,nan,nan";
        for (int q = 0; q < quantile_count; ++q) os << ",nan";
      } else {
        os << ',' << fmt(a.mean) << ',' << fmt(a.rms()) << ',' << fmt(a.min) << ',' << fmt(a.max);
        for (int q = 0; q < quantile_count; ++q) os << ',' << fmt(st.quantile[m][q]);
      }
    }
    os << '\n';
  }
  return os.str();
}

std::string make_trajectory_csv(const EnsembleResult& r) {
  std::ostringstream os;
  os << 't';
  for (const auto& n : r.state_names) os << ',' << n;
  if (r.reference_available)
    for (const auto& n : r.state_names) os << ',' << n << "_ref";
  os << '\n';
  for (const auto& row : r.trajectory) {
    for (std::size_t c = 0; c < row.size(); ++c) os << (c ? "," : "") << fmt(row[c]);
    os << '\n';
  }
  return os.str();
}

void check_output_dir(const std::string& dir, bool force) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return;
  if (!fs::is_directory(dir, ec)) throw std::runtime_error("--out " + dir + ": exists and is not a directory");
  if (force) return;
  for (const char* f : output_files) {
    if (fs::exists(fs::path(dir) / f, ec))
      throw std::runtime_error("--out " + dir + ": holds " + f +
                               " of an earlier run; choose another directory or pass --force to replace it");
  }
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const fs::path target(path);
  const fs::path tmp = target.parent_path() / (".chens-partial-" + std::to_string(::getpid()) + "-" + target.filename().string());
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    out.close();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw std::runtime_error("cannot write " + tmp.string());
    }
  }
  fs::rename(tmp, target);
}

void write_outputs(const std::string& dir, const Study& s, const RunParams<double>& rp, const EnsembleResult& r,
                   const RunInfo& info) {
  fs::create_directories(dir);
  const fs::path partial = fs::path(dir) / (".chens-partial-" + std::to_string(::getpid()));
  fs::create_directories(partial);
  // summary.json goes last: its presence marks a complete result.
  std::vector<std::pair<std::string, std::string>> files = {{"series.csv", make_series_csv(r)}};
  if (!r.trajectory.empty()) files.emplace_back("trajectory.csv", make_trajectory_csv(r));
  files.emplace_back("summary.json", make_summary(s, rp, r, info).dump(2) + "\n");
  try {
    for (const auto& [name, text] : files) {
      std::ofstream out(partial / name, std::ios::binary);
      out << text;
      out.close();
      if (!out) throw std::runtime_error("cannot write " + (partial / name).string());
    }
    // Remove stale files of an earlier run (--force) that this run does not produce.
    for (const char* f : output_files) {
      bool produced = false;
      for (const auto& p : files) produced = produced || p.first == f;
      if (!produced) fs::remove(fs::path(dir) / f);
    }
    for (const auto& [name, text] : files) fs::rename(partial / name, fs::path(dir) / name);
    fs::remove_all(partial);
  } catch (...) {
    std::error_code ec;
    fs::remove_all(partial, ec);
    throw;
  }
}

}  // namespace chens
