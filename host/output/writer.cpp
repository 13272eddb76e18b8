#include "output/writer.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include <chens/diagnostics/metrics.hpp>
#include <chens/version.hpp>

#include "backends/cpu/cpu_isa.hpp"
#include "backends/live_fraction.hpp"
#include "backends/step_cost.hpp"
#include "output/durable_io.hpp"
#include "output/growth.hpp"
#include "output/periodogram.hpp"
#include "output/run_directory.hpp"
#include "output/states_h5.hpp"
#include "output/summary_parts.hpp"
#include "study/study_values.hpp"

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
  const double T = nominal_period(s);
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

// [parameters] (docs/parameter_ensembles.md): each varied parameter's law and the mean,
// minimum and maximum of the values its instances drew (in instance order, so the numbers do
// not depend on threads or ranks): the check that the ensemble is the one asked for.
nlohmann::json parameters_summary(const Study& s) {
  const ParameterEnsemble e = parameter_ensemble(s);
  const std::uint64_t n = s.only.empty() ? static_cast<std::uint64_t>(s.size) : s.only.size();
  nlohmann::json j = nlohmann::json::object();
  for (int q = 0; q < parameter_count; ++q) {
    const ParameterId id = ParameterId(q);
    if (!e.varies(id)) continue;
    double sum = 0, lo = INFINITY, hi = -INFINITY;
    for (std::uint64_t k = 0; k < n; ++k) {
      const double v = e.value(id, s.only.empty() ? k : static_cast<std::uint64_t>(s.only[k]));
      sum += v;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    const ParameterLaw& law = s.law(id);
    j[parameter_name(id)] = {{"law", law.kind == LawKind::list ? nlohmann::json(law.values) : nlohmann::json(law_text(law))},
                             {"instances", n},
                             {"mean", n > 0 ? number_or_null(sum / static_cast<double>(n)) : nullptr},
                             {"min", n > 0 ? number_or_null(lo) : nullptr},
                             {"max", n > 0 ? number_or_null(hi) : nullptr}};
  }
  return j;
}

namespace {

// Each reported metric's statistics at the last sample time and its peak over the run, into j
// (summary.json's own, and each group's).
void metric_summaries(const EnsembleResult& r, const std::vector<SampleStats>& series, nlohmann::json& j) {
  for (int m = 0; m < metric_count; ++m) {
    const char* name = metric_name(m);
    if (!r.metric_reported(m)) {
      if (m == int(MetricId::integration_error)) j[name] = nullptr;  // asked for, but no reference
      continue;
    }
    double peak = 0.0;
    bool any = false;
    for (const auto& st : series) {
      if (st.metric[m].count == 0) continue;
      peak = any ? std::max(peak, st.metric[m].max) : st.metric[m].max;
      any = true;
    }
    const Accumulator& fin = series.back().metric[m];
    const bool live = fin.count > 0;
    j[name] = {{"final_mean", live ? number_or_null(fin.mean) : nullptr},
               {"final_rms", live ? number_or_null(fin.rms()) : nullptr},
               {"final_min", live ? number_or_null(fin.min) : nullptr},
               {"final_max", live ? number_or_null(fin.max) : nullptr},
               {"peak_max", any ? number_or_null(peak) : nullptr}};
    for (int q = 0; q < quantile_count; ++q)
      j[name][std::string("final_") + quantile_name[q]] = live ? number_or_null(series.back().quantile[m][q]) : nullptr;
  }
}

// output.lyapunov_spectrum (docs/lyapunov.md): each exponent's statistics over the live
// instances (of the ensemble or of a group) at the last sample time, each a list from the
// first (largest) exponent down.
nlohmann::json spectrum_summary(const std::vector<ExponentStats>& spectrum) {
  nlohmann::json j;
  const std::uint64_t live = spectrum.front().value.count;
  j["exponents"] = spectrum.size();
  j["instances"] = live;  // the live instances the statistics are over
  const auto list = [&](auto of) {
    nlohmann::json a = nlohmann::json::array();
    for (const ExponentStats& e : spectrum) a.push_back(live > 0 ? number_or_null(of(e)) : nullptr);
    return a;
  };
  j["final_mean"] = list([](const ExponentStats& e) { return e.value.mean; });
  j["final_rms"] = list([](const ExponentStats& e) { return e.value.rms(); });
  j["final_min"] = list([](const ExponentStats& e) { return e.value.min; });
  j["final_max"] = list([](const ExponentStats& e) { return e.value.max; });
  for (int q = 0; q < quantile_count; ++q)
    j[std::string("final_") + quantile_name[q]] = list([q](const ExponentStats& e) { return e.quantile[q]; });
  // Symplectic pairing (docs/lyapunov.md): lambda_i + lambda_{K+1-i} of the means, 0 up to O(1/t)
  // for the Hamiltonian formulations on M, and the sum.
  nlohmann::json pairs = nlohmann::json::array();
  double sum = 0.0;
  const std::size_t K = spectrum.size();
  for (std::size_t i = 0; i < K; ++i) sum += spectrum[i].value.mean;
  for (std::size_t i = 0; i < K / 2; ++i)
    pairs.push_back(live > 0 ? number_or_null(spectrum[i].value.mean + spectrum[K - 1 - i].value.mean) : nullptr);
  j["pair_sums_of_means"] = pairs;
  j["sum_of_means"] = live > 0 ? number_or_null(sum) : nullptr;
  return j;
}

// [parameters] group_by (docs/parameter_ensembles.md): each group's values, size, losses and
// the statistics summary.json gives the ensemble.
nlohmann::json groups_summary(const Study& s, const RunParams<double>& rp, const EnsembleResult& r) {
  const ParameterEnsemble e = parameter_ensemble(s);
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t g = 0; g < r.groups.size(); ++g) {
    const GroupResult& gr = r.groups[g];
    nlohmann::json j;
    j["group"] = group_label(e, g);
    if (e.group_values.empty()) {
      j["min"] = e.group_lo(g);
      j["max"] = e.group_hi(g);
    } else {
      j["value"] = e.group_lo(g);
    }
    j["instances"] = gr.instances;
    j["lost_instances"] = gr.lost;
    j["live"] = live_summary(gr.series, gr.instances);
    metric_summaries(r, gr.series, j);
    if (gr.passage.any()) j["first_passage"] = first_passage_summary(rp, gr.passage, gr.instances);
    if (!gr.lyapunov_spectrum.empty()) j["lyapunov_spectrum"] = spectrum_summary(gr.lyapunov_spectrum);
    list.push_back(j);
  }
  return {{"by", s.group_by}, {"bins", e.group_values.empty()}, {"groups", list}};
}

}  // namespace

// output's [first_passage] (docs/first_passage.md): per level, how many instances crossed it,
// were lost first or never did, and the crossing times' statistics.
nlohmann::json first_passage_summary(const RunParams<double>& rp, const PassageResult& passage, std::uint64_t instances) {
  nlohmann::json j = nlohmann::json::object();
  for (int s = 0; s < passage_slots; ++s) {
    if (!passage.on(s)) continue;
    const PassageStats& p = passage.slot[s];
    const bool any = p.time.count > 0;
    nlohmann::json e;
    // Every entry has every key (the loss has no level, and is never preceded by itself).
    e["level"] = s != passage_lost ? nlohmann::json(p.level) : nlohmann::json();
    e["checked"] = s == passage_lost || !passage_per_step(s) ? "at sample times" : "after every step";
    e["crossed"] = p.crossed;
    e["lost_first"] = s != passage_lost ? p.lost_first : 0;
    e["never"] = p.never;
    e["time_mean"] = any ? number_or_null(p.time.mean) : nullptr;
    e["time_min"] = any ? number_or_null(p.time.min) : nullptr;
    e["time_max"] = any ? number_or_null(p.time.max) : nullptr;
    for (int q = 0; q < quantile_count; ++q)
      e[std::string("time_") + quantile_name[q]] = any ? number_or_null(p.quantile[q]) : nullptr;
    e["surviving_final"] = passage.surviving(s, static_cast<std::size_t>(rp.samples), instances);
    j[passage_slot_name(s)] = e;
  }
  return j;
}

// How many instances the statistics are over (backends/live_fraction.hpp).
nlohmann::json live_summary(const std::vector<SampleStats>& series, std::uint64_t instances) {
  const LiveFraction f = live_fraction(series, instances);
  const auto time_or_null = [](double t) { return t >= 0 ? nlohmann::json(t) : nlohmann::json(); };
  return {{"final", f.final},
          {"final_fraction", f.fraction()},
          {"threshold", few_live_fraction},
          {"below_threshold_from", time_or_null(f.below_t)},
          {"none_from", time_or_null(f.none_t)}};
}

std::string group_label(const ParameterEnsemble& e, std::size_t g) {
  const std::string name = parameter_name(ParameterId(e.group_by));
  if (!e.group_values.empty()) return name + "=" + shortest(e.group_values[g]);
  return name + "=" + shortest(e.group_lo(g)) + ".." + shortest(e.group_hi(g));
}

nlohmann::json make_summary(const Study& s, const RunParams<double>& rp, const EnsembleResult& r, const RunInfo& info,
                            const Instance0Spectrum* spectrum) {
  nlohmann::json j;
  j["chens_version"] = CHENS_VERSION_STRING;
  j["backend"] = r.backend;
  j["backend_requested"] = info.backend_requested;
  if (!info.backend_note.empty()) j["backend_note"] = info.backend_note;
  j["device"] = r.device;
  // The CPU lanes' instruction set (backends/cpu/cpu_isa.hpp), which changes no result;
  // device says how this run's method used it.
  if (r.backend == "cpu") {
    const CpuIsa isa = cpu_isa_in_use();
    j["cpu_isa"] = {
        {"isa", cpu_isa_name(isa)}, {"doubles_per_register", cpu_isa_width(isa)}, {"chosen_by", cpu_isa_chosen_by()}};
  }
  j["study"] = to_json(s, rp);
  j["instances"] = r.instances;
  j["lost_instances"] = r.lost_total();
  j["lost"] = nlohmann::json::object();
  for (int q = 1; q < lost_reason_count; ++q) j["lost"][lost_reason_name(q)] = r.lost[q];
  j["lost_examples"] = nlohmann::json::array();  // the first lost instances, to rerun or record alone
  for (std::size_t q = 0; q < r.lost_examples.size(); ++q)
    j["lost_examples"].push_back({{"instance", r.lost_examples[q]},
                                  {"reason", lost_reason_name(r.lost_example_reasons[q])}});
  j["live"] = live_summary(r.series, r.instances);
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
  // Of the segments' wall time: integrating, and measuring (reference, diagnostics,
  // statistics); null where the backend does not time them apart (the GPU).
  j["integration_seconds"] = r.integration_seconds >= 0 ? nlohmann::json(r.integration_seconds) : nlohmann::json();
  j["measurement_seconds"] = r.measurement_seconds >= 0 ? nlohmann::json(r.measurement_seconds) : nlohmann::json();
  // The cost per instance-step sampled on the timed blocks (backends/step_cost.hpp): its
  // median and the median's notch, which a study's cost comparison uses; null where not measured.
  const StepCost cost = StepCost::of(r.step_cost);
  j["step_cost"] = cost.samples == 0 ? nlohmann::json()
                                     : nlohmann::json{{"median_seconds", cost.p50},
                                                      {"p25_seconds", cost.p25},
                                                      {"p75_seconds", cost.p75},
                                                      {"samples", cost.samples},
                                                      {"median_relative_notch", cost.relative_notch()}};
  j["instance_steps_per_second"] = r.wall_seconds > 0 ? static_cast<double>(r.totals.steps) / r.wall_seconds : 0.0;
  nlohmann::json i0;
  i0["final_state"] = r.instance0_physical;
  if (r.instance0_state != r.instance0_physical) i0["final_state_variables"] = r.instance0_state;
  i0["lost"] = r.instance0_lost;
  j["instance0"] = i0;
  j["reference"] = {{"kind", r.reference_available ? r.reference_kind : std::string("none")},
                    {"instances_with_projected_initial_data", r.reference_projected},
                    {"steps", r.totals.reference_steps},
                    {"rhs_evaluations", r.totals.reference_rhs_evaluations}};
  metric_summaries(r, r.series, j);
  if (!r.lyapunov_spectrum.empty()) j["lyapunov_spectrum"] = spectrum_summary(r.lyapunov_spectrum);
  if (r.passage.any()) j["first_passage"] = first_passage_summary(rp, r.passage, r.instances);
  if (s.varies_parameters()) j["parameters"] = parameters_summary(s);
  if (!r.groups.empty()) j["groups"] = groups_summary(s, rp, r);
  j["growth_exponents"] = growth_summary(r, s);
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

namespace {

// One statistics series' rows of series.csv (the ensemble's, or a group's, whose rows begin
// with its label).
void series_rows(std::ostream& os, const EnsembleResult& r, const std::vector<SampleStats>& series,
                 const PassageResult& passage, std::uint64_t instances, const std::string* group) {
  // [first_passage]: the instances whose passage is at or before t_k, summed as k goes (what
  // PassageResult::surviving sums for one k).
  std::uint64_t ended[passage_slots] = {};
  for (std::size_t k = 0; k < series.size(); ++k) {
    const SampleStats& st = series[k];
    if (group) os << *group << ',';
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
    for (int s = 0; s < passage_slots; ++s) {
      if (!r.passage.on(s)) continue;
      if (k < passage.slot[s].ended.size()) ended[s] += passage.slot[s].ended[k];
      os << ',' << fmt(PassageResult::surviving_fraction(instances, ended[s]));
    }
    os << '\n';
  }
}

}  // namespace

std::string make_series_csv(const Study& s, const EnsembleResult& r) {
  std::ostringstream os;
  // [parameters] group_by: a first column, "all" for the ensemble's rows, then each group's
  // rows under its label (group_label).
  if (!r.groups.empty()) os << "group,";
  os << "t,live";
  for (int m = 0; m < metric_count; ++m) {
    if (!r.metric_reported(m)) continue;
    for (const char* stat : {"mean", "rms", "min", "max"}) os << ',' << metric_name(m) << '_' << stat;
    for (const char* q : quantile_name) os << ',' << metric_name(m) << '_' << q;
  }
  for (int slot = 0; slot < passage_slots; ++slot)
    if (r.passage.on(slot)) os << ",surviving_" << passage_slot_name(slot);
  os << '\n';
  if (r.groups.empty()) {
    series_rows(os, r, r.series, r.passage, r.instances, nullptr);
    return os.str();
  }
  const std::string all = "all";
  series_rows(os, r, r.series, r.passage, r.instances, &all);
  const ParameterEnsemble e = parameter_ensemble(s);
  for (std::size_t g = 0; g < r.groups.size(); ++g) {
    const std::string label = group_label(e, g);
    series_rows(os, r, r.groups[g].series, r.groups[g].passage, r.groups[g].instances, &label);
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

std::vector<std::pair<std::string, std::string>> output_file_bytes(const Study& s, const RunParams<double>& rp,
                                                                   const EnsembleResult& r, const RunInfo& info) {
  // summary.json goes last: its presence marks a complete result.
  std::vector<std::pair<std::string, std::string>> files;
  if (s.states || !s.record.empty()) files.emplace_back("states.h5", states_h5_image(s, rp, r));
  files.emplace_back("series.csv", make_series_csv(s, r));
  if (s.trajectory) files.emplace_back("trajectory.csv", make_trajectory_csv(r));
  // The periodogram once for periodogram.csv and summary.json (a direct DFT, O(N^2)).
  const Instance0Spectrum spectrum = s.periodogram.empty() ? Instance0Spectrum{} : instance0_spectrum(s, rp, r);
  if (!s.periodogram.empty()) files.emplace_back("periodogram.csv", make_periodogram_csv(spectrum));
  files.emplace_back("summary.json", make_summary(s, rp, r, info, &spectrum).dump(2) + "\n");
  return files;
}

void write_outputs(const std::string& dir, const Study& s, const RunParams<double>& rp, const EnsembleResult& r,
                   const RunInfo& info) {
  const fs::path partial = fs::path(dir) / (".chens-partial-" + std::to_string(::getpid()));
  std::vector<std::pair<std::string, std::string>> files = output_file_bytes(s, rp, r, info);
  std::vector<fs::path> placed;  // this run's files already renamed into dir
  std::error_code ec;
  const bool created = !fs::exists(dir, ec);
  try {
    fs::create_directories(partial);
    for (auto& [name, bytes] : files) {
      write_file_checked(partial / name, bytes, (fs::path(dir) / name).string());
      std::string().swap(bytes);  // written: its memory back before the next file's write
    }
    // Remove stale files of an earlier run (--force) that this run does not produce.
    for (const char* f : output_files) {
      bool produced = false;
      for (const auto& p : files) produced = produced || p.first == f;
      if (!produced) fs::remove(fs::path(dir) / f);
    }
    for (const auto& [name, bytes] : files) {
      fs::rename(partial / name, fs::path(dir) / name, ec);
      if (ec)
        throw std::runtime_error("cannot write " + (fs::path(dir) / name).string() +
                                 ": renaming the complete file into place failed: " + ec.message());
      placed.push_back(fs::path(dir) / name);
    }
    fs::remove_all(partial);
    sync_directory(dir);
  } catch (...) {
    // Nothing of this run stays: a set of files without its summary.json would look like a
    // result (the caller saves the result elsewhere).
    std::error_code ignored;
    for (const fs::path& p : placed) fs::remove(p, ignored);
    fs::remove_all(partial, ignored);
    if (created && fs::is_empty(dir, ignored)) fs::remove(dir, ignored);
    throw;
  }
}

}  // namespace chens
