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
#include "output/periodogram.hpp"
#include "output/states_h5.hpp"

namespace chens {

namespace fs = std::filesystem;

namespace {

std::string fmt(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

}  // namespace

Instance0Series instance0_series(const EnsembleResult& r, const std::string& component, double sample_dt) {
  Instance0Series out;
  const RecordedTrajectories& rec = r.recorded;
  const std::int64_t slot = rec.slot(0);
  std::size_t c = 0;
  while (c < r.state_names.size() && r.state_names[c] != component) ++c;
  if (slot < 0 || c == r.state_names.size()) return out;
  const std::size_t R = rec.instances.size(), S = static_cast<std::size_t>(rec.state_size);
  for (std::size_t k = 0; k < rec.samples(); ++k) {
    // Equal spacing only: a shorter last interval (t_end not a multiple of sample_dt) ends it.
    const double tk = static_cast<double>(k) * sample_dt;
    if (std::fabs(rec.t[k] - tk) > 1e-9 * std::max(1.0, tk)) break;
    if (!rec.measured[k * R + static_cast<std::size_t>(slot)]) {
      out.lost = true;
      break;
    }
    const std::size_t at = (k * R + static_cast<std::size_t>(slot)) * S + c;
    out.t.push_back(rec.t[k]);
    out.value.push_back(rec.state[at]);
    if (rec.has_reference) out.reference.push_back(rec.reference[at]);
  }
  return out;
}

nlohmann::json phase_error_table(const Study& s, const RunParams<double>& rp, const EnsembleResult& r) {
  nlohmann::json rows = nlohmann::json::array();
  const double T = pendulum_nominal_period(s);
  const Instance0Series y = instance0_series(r, "y", rp.sample_dt);
  for (std::int64_t k : s.phase_error) {
    const auto m = static_cast<std::size_t>(std::llround(static_cast<double>(k) * T / rp.sample_dt));
    nlohmann::json row = {{"periods", k}, {"t", static_cast<double>(k) * T}};
    if (m < y.value.size() && m < y.reference.size()) {
      row["t"] = y.t[m];
      row["y"] = number_or_null(y.value[m]);
      row["y_exact"] = number_or_null(y.reference[m]);
      row["phase_error"] = number_or_null(std::fabs(y.value[m] - y.reference[m]));
    } else {
      row["y"] = row["y_exact"] = row["phase_error"] = nullptr;  // instance 0 was lost before kT
    }
    rows.push_back(row);
  }
  return {{"period", T},
          {"instance", 0},
          {"definition", "|y(kT) - y_exact(kT)| of instance 0 (the nominal initial data) at t = kT, T its exact period "
                         "(002 Table 1: y_exact(kT) = y(0))"},
          {"rows", rows}};
}

Instance0Spectrum instance0_spectrum(const Study& s, const RunParams<double>& rp, const EnsembleResult& r) {
  Instance0Spectrum sp;
  sp.series = instance0_series(r, s.periodogram, rp.sample_dt);
  sp.value = periodogram(sp.series.value, rp.sample_dt);
  if (!sp.series.reference.empty()) sp.reference = periodogram(sp.series.reference, rp.sample_dt);
  return sp;
}

nlohmann::json periodogram_summary(const Study& s, const RunParams<double>& rp, const Instance0Spectrum& sp) {
  const Instance0Series& y = sp.series;
  nlohmann::json j = {{"component", s.periodogram},
                      {"instance", 0},
                      {"samples", y.value.size()},
                      {"dt", rp.sample_dt},
                      {"normalization",
                       "amplitude_j = |sum_n y_n exp(-2 pi i j n / N)| * 2 / N at f_j = j / (N dt), j = 1..N/2 (the "
                       "amplitude of a sinusoid on f_j); power = amplitude^2 / 2"}};
  if (y.lost) j["note"] = "instance 0 was lost; the periodogram covers the samples before";
  if (y.value.size() < 4) {
    j["peak"] = nullptr;
    return j;
  }
  j["peak"] = to_json(periodogram_peak(sp.value));
  if (!y.reference.empty()) j["reference_peak"] = to_json(periodogram_peak(sp.reference));
  return j;
}

std::string make_periodogram_csv(const Instance0Spectrum& sp) {
  const Periodogram& p = sp.value;
  const Periodogram& pr = sp.reference;
  std::ostringstream os;
  os << "f,amplitude,power" << (pr.f.empty() ? "" : ",amplitude_exact,power_exact") << '\n';
  for (std::size_t j = 0; j < p.f.size(); ++j) {
    os << fmt(p.f[j]) << ',' << fmt(p.amplitude[j]) << ',' << fmt(p.amplitude[j] * p.amplitude[j] / 2);
    if (!pr.f.empty()) os << ',' << fmt(pr.amplitude[j]) << ',' << fmt(pr.amplitude[j] * pr.amplitude[j] / 2);
    os << '\n';
  }
  return os.str();
}

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

nlohmann::json make_summary(const Study& s, const RunParams<double>& rp, const EnsembleResult& r, const RunInfo& info,
                            const Instance0Spectrum* spectrum) {
  nlohmann::json j;
  j["chens_version"] = CHENS_VERSION_STRING;
  j["backend"] = r.backend;
  j["backend_requested"] = info.backend_requested;
  if (!info.backend_note.empty()) j["backend_note"] = info.backend_note;
  j["device"] = r.device;
  j["study"] = to_json(s, rp);
  j["instances"] = r.instances;
  j["lost_instances"] = r.lost_total();
  j["lost"] = nlohmann::json::object();
  for (int q = 1; q < lost_reason_count; ++q) j["lost"][lost_reason_name(q)] = r.lost[q];
  j["lost_examples"] = nlohmann::json::array();  // the first lost instances, to rerun or record alone
  for (std::size_t q = 0; q < r.lost_examples.size(); ++q)
    j["lost_examples"].push_back({{"instance", r.lost_examples[q]}, {"reason", lost_reason_name(r.lost_example_reasons[q])}});
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
  if (!s.phase_error.empty()) j["phase_error"] = phase_error_table(s, rp, r);
  if (!s.periodogram.empty())
    j["periodogram"] = periodogram_summary(s, rp, spectrum ? *spectrum : instance0_spectrum(s, rp, r));
  nlohmann::json files = {"summary.json", "series.csv"};
  if (s.trajectory) files.push_back("trajectory.csv");
  if (!s.periodogram.empty()) files.push_back("periodogram.csv");
  if (s.states || !s.record.empty()) files.push_back("states.h5");
  j["files"] = files;
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
  const std::int64_t slot = r.recorded.slot(0);
  if (slot < 0) return os.str();
  for (std::size_t k = 0; k < r.recorded.samples(); ++k) {
    const std::vector<double> row = r.recorded.row(k, static_cast<std::size_t>(slot));
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
  for (const char* f : {"resume.json", "checkpoint.chk"})  // docs/checkpoints.md
    if (fs::exists(fs::path(dir) / f, ec))
      throw std::runtime_error("--out " + dir + ": holds " + f + " of an interrupted run; continue it with chens run " +
                               "--resume " + dir + ", choose another directory, or pass --force to replace it");
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
  if (s.trajectory) files.emplace_back("trajectory.csv", make_trajectory_csv(r));
  // The periodogram once for periodogram.csv and summary.json (a direct DFT, O(N^2)).
  const Instance0Spectrum spectrum = s.periodogram.empty() ? Instance0Spectrum{} : instance0_spectrum(s, rp, r);
  if (!s.periodogram.empty()) files.emplace_back("periodogram.csv", make_periodogram_csv(spectrum));
  const bool states = s.states || !s.record.empty();
  files.emplace_back("summary.json", make_summary(s, rp, r, info, &spectrum).dump(2) + "\n");
  try {
    if (states) write_states_h5((partial / "states.h5").string(), s, rp, r);
    for (const auto& [name, text] : files) {
      std::ofstream out(partial / name, std::ios::binary);
      out << text;
      out.close();
      if (!out) throw std::runtime_error("cannot write " + (partial / name).string());
    }
    if (states) files.insert(files.begin(), {"states.h5", ""});  // renamed with the others, before summary.json
    // Remove stale files of an earlier run (--force) that this run does not produce.
    for (const char* f : output_files) {
      bool produced = false;
      for (const auto& p : files) produced = produced || p.first == f;  // (states.h5 included)
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
