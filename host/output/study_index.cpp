#include "output/study_index.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "backends/live_fraction.hpp"
#include "backends/step_cost.hpp"
#include "output/csv_cells.hpp"
#include "output/growth.hpp"
#include "output/summary_parts.hpp"
#include "output/writer.hpp"

namespace chens {

namespace {

// Final median and maximum of the metrics a comparison shows; wedge_error (output.wedge) and
// lyapunov (output.lyapunov) only where some run reports them.
const char* const compared_metrics[] = {"integration_error", "energy_error", "phi", "psi", "wedge_error", "lyapunov"};

// The sections of a study in the order of the study file (docs/study-format.md).
const char* const section_order[] = {"model", "integrator", "projection", "ensemble", "output"};

// A field of a digest, null where it is missing (digests of runs completed by an earlier
// chens come back from study.json on --resume).
nlohmann::json field(const nlohmann::json& d, const char* key) { return d.contains(key) ? d[key] : nlohmann::json(); }

bool reported_by_some(const std::vector<nlohmann::json>& digests, const char* m) {
  for (const auto& d : digests)
    if (d.contains("final") && d["final"].contains(m) && !d["final"][m].is_null()) return true;
  return false;
}

// The compared metrics of these runs.
std::vector<const char*> shown_metrics(const std::vector<nlohmann::json>& digests) {
  std::vector<const char*> out;
  for (const char* m : compared_metrics)
    if ((std::string(m) != "wedge_error" && std::string(m) != "lyapunov") || reported_by_some(digests, m)) out.push_back(m);
  return out;
}

nlohmann::json final_stats(const EnsembleResult& r, int m) {
  const SampleStats& fin = r.series.back();
  if (!r.metric_reported(m) || fin.metric[m].count == 0) return nullptr;
  return {{"p50", number_or_null(fin.quantile[m][quantile_p50])}, {"max", number_or_null(fin.metric[m].max)}};
}

// Every key of the resolved study, "section.key": value, typed as in summary.json's study.
nlohmann::json resolved_keys(const Study& s, const RunParams<double>& rp) {
  nlohmann::json flat = nlohmann::json::object();
  const nlohmann::json study = to_json(s, rp);
  for (const auto& [section, keys] : study.items())
    for (const auto& [key, value] : keys.items()) flat[section + "." + key] = value;
  return flat;
}

// An override's value as the study file wrote it (TOML's numbers, booleans and arrays are
// JSON's), for a key that the resolved study does not list.
nlohmann::json typed(const std::string& text) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    return text;
  }
}

// Union of the keys of a digest object field over the runs, in the order of the sections
// and then alphabetically; except: keys left out.
std::vector<std::string> keys_of(const std::vector<nlohmann::json>& digests, const char* what,
                                 const std::vector<std::string>& except = {}) {
  std::vector<std::string> keys;
  for (const char* section : section_order)
    for (const auto& d : digests)
      if (d.contains(what))
        for (const auto& [k, v] : d[what].items())
          if (k.rfind(std::string(section) + ".", 0) == 0 && std::find(keys.begin(), keys.end(), k) == keys.end() &&
              std::find(except.begin(), except.end(), k) == except.end())
            keys.push_back(k);
  // Keys of no known section last (none today).
  for (const auto& d : digests)
    if (d.contains(what))
      for (const auto& [k, v] : d[what].items())
        if (std::find(keys.begin(), keys.end(), k) == keys.end() &&
            std::find(except.begin(), except.end(), k) == except.end())
          keys.push_back(k);
  return keys;
}

nlohmann::json value_of(const nlohmann::json& d, const char* what, const std::string& key) {
  return d.contains(what) && d[what].contains(key) ? d[what][key] : nlohmann::json();
}

// A typed CSV cell: numbers as the shortest text that reads back to the same double,
// booleans true / false, text as is, arrays as JSON text; null as null_text.
std::string csv_cell(const nlohmann::json& v, const char* null_text) {
  if (v.is_null()) return null_text;
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number()) return v.dump();
  if (v.is_string()) return csv_text(v.get<std::string>());
  return csv_text(v.dump());
}

std::string printf_cell(const char* format, double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, format, x);
  return buf;
}

// A cell of the stdout tables: errors to 4 significant digits, other real numbers
// (tolerances, step sizes) to 3, exactly as they are in the CSV file otherwise.
std::string table_cell(const nlohmann::json& v, const char* real_format = "%.3g") {
  if (v.is_null()) return "-";
  if (v.is_number_float()) return printf_cell(real_format, v.get<double>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

// The time a cost comparison compares: where every run sampled its cost per instance-step
// (the CPU backend, backends/step_cost.hpp), the integration at its median pace, which a cold
// start or another process taking a core for a while does not move, with the median's notch
// as its noise; else the integration's share of the wall time where every run measured it
// (issue 17), so that a numerical reference or the diagnostics do not weigh on the
// integrator's cost; the wall time otherwise.
const char* cost_key(const std::vector<nlohmann::json>& digests) {
  bool paced = true, integration = true;
  for (const auto& e : digests) {
    paced = paced && e.contains("cost_seconds") && e["cost_seconds"].is_number() && e["cost_seconds"].get<double>() > 0;
    integration = integration && e.contains("integration_seconds") && e["integration_seconds"].is_number();
  }
  return paced ? "cost_seconds" : integration ? "integration_seconds" : "wall_seconds";
}

double fastest_cost(const std::vector<nlohmann::json>& digests, const char* key) {
  double fastest = INFINITY;
  for (const auto& e : digests) fastest = std::min(fastest, e[key].get<double>());
  return fastest;
}

// That time relative to the fastest run (002 §6 compares formulations' computing time so).
nlohmann::json relative_cost(const std::vector<nlohmann::json>& digests, const nlohmann::json& d) {
  const char* key = cost_key(digests);
  const double fastest = fastest_cost(digests, key);
  return fastest > 0 ? nlohmann::json(d[key].get<double>() / fastest) : nlohmann::json(nullptr);
}

// What a run's median pace is known to within, as the cost comparison uses it: its notch,
// but not less than the spread of identical runs' medians, which no measurement inside one
// run sees (each run's memory placement and the core's state at its start are its own). On
// a 2-vCPU Zen guest, six identical runs of the default study's size, three times over, had
// medians up to 1.07 times the fastest's, within 0.96-1.04 of their study's mean
// (docs/performance.md, "Results that say what they are").
constexpr double between_runs_noise = 0.04;

// A run's relative noise, or null where it was not measured.
nlohmann::json cost_noise(const nlohmann::json& d) {
  return d.contains("cost_noise") && d["cost_noise"].is_number() ? d["cost_noise"] : nlohmann::json();
}

// Whether d's cost and the fastest run's are within their measured noise: their medians'
// notches overlap (McGill, Tukey & Larsen 1978), so the table cannot tell them apart.
bool within_noise_of_fastest(const std::vector<nlohmann::json>& digests, const nlohmann::json& d) {
  if (std::string(cost_key(digests)) != "cost_seconds") return false;
  const double fastest = fastest_cost(digests, "cost_seconds");
  for (const auto& e : digests)
    if (e["cost_seconds"].get<double>() == fastest) {
      const double c = d["cost_seconds"].get<double>();
      return c * (1 - cost_noise(d).get<double>()) <= fastest * (1 + cost_noise(e).get<double>());
    }
  return false;
}

// "73/100000", with "*" where fewer than few_live_fraction of the instances were live.
std::string live_cell(const nlohmann::json& d) {
  if (!d.contains("live_final") || !d.contains("instances")) return "-";
  const std::uint64_t live = d["live_final"].get<std::uint64_t>(), n = d["instances"].get<std::uint64_t>();
  return std::to_string(live) + "/" + std::to_string(n) +
         (static_cast<double>(live) < few_live_fraction * static_cast<double>(n) ? "*" : "");
}

// The periods k of the runs' phase-error tables, in order of first appearance.
std::vector<std::int64_t> phase_periods(const std::vector<nlohmann::json>& digests) {
  std::vector<std::int64_t> ks;
  for (const auto& d : digests)
    if (d.contains("phase_error"))
      for (const auto& row : d["phase_error"])
        if (std::find(ks.begin(), ks.end(), row["periods"].get<std::int64_t>()) == ks.end())
          ks.push_back(row["periods"].get<std::int64_t>());
  return ks;
}

nlohmann::json phase_error_at(const nlohmann::json& d, std::int64_t k) {
  if (d.contains("phase_error"))
    for (const auto& row : d["phase_error"])
      if (row["periods"].get<std::int64_t>() == k) return row["phase_error"];
  return nullptr;
}

nlohmann::json growth_of(const nlohmann::json& d, const char* m) {
  return d.contains("growth_of_max") && d["growth_of_max"].contains(m) ? d["growth_of_max"][m] : nlohmann::json();
}

std::string growth_reason_of(const nlohmann::json& d, const char* m) {
  const nlohmann::json r = value_of(d, "growth_of_max_reason", m);
  return r.is_string() ? r.get<std::string>() : std::string();
}

// The table's word for a withheld exponent (assess_growth's reasons).
std::string growth_tag(const std::string& reason) {
  if (reason.rfind("at rounding level", 0) == 0) return "rounding";
  if (reason.rfind("saturated", 0) == 0) return "saturated";
  if (reason.rfind("growth stops", 0) == 0) return "stops";
  if (reason.rfind("no live", 0) == 0) return "lost";
  return "-";
}

bool any_reference_work(const std::vector<nlohmann::json>& digests) {
  for (const auto& d : digests)
    if (field(d, "reference_rhs_evaluations").is_number() && d["reference_rhs_evaluations"].get<double>() > 0) return true;
  return false;
}

// The keys of summary.json's study that the Work table already shows under its own name.
const std::vector<std::string> shown_in_work = {"integrator.formulation", "integrator.method", "integrator.h"};

// comparison.csv: one row per run.
std::vector<std::vector<std::string>> rows_of(const std::vector<nlohmann::json>& digests) {
  const std::vector<std::string> varied = keys_of(digests, "varied");
  const std::vector<std::string> resolved = keys_of(digests, "resolved", varied);
  const std::vector<const char*> metrics = shown_metrics(digests);
  const std::vector<std::int64_t> ks = phase_periods(digests);
  std::vector<std::string> head = {"run"};
  head.insert(head.end(), varied.begin(), varied.end());
  for (const char* c : {"formulation",
                        "method",
                        "h",
                        "instances",
                        "lost",
                        "live_final",
                        "steps",
                        "rhs_evals",
                        "reference_rhs_evals",
                        "projections",
                        "wall_s",
                        "integrate_s",
                        "measure_s",
                        "cost_s",
                        "cost_noise",
                        "cost_relative",
                        "cost_within_noise_of_fastest",
                        "device_s",
                        "setup_s",
                        "finish_s"})
    head.push_back(c);
  for (const char* m : metrics)
    for (const char* what : {"_p50", "_max", "_growth", "_growth_reason"}) head.push_back(std::string(m) + what);
  for (std::int64_t k : ks) head.push_back("phase_error_" + std::to_string(k) + "T");
  head.insert(head.end(), resolved.begin(), resolved.end());
  std::vector<std::vector<std::string>> rows = {head};
  for (const auto& d : digests) {
    std::vector<std::string> row = {csv_cell(d["name"], "")};
    for (const auto& k : varied) row.push_back(csv_cell(value_of(d, "varied", k), ""));
    for (const char* c : {"formulation", "method"}) row.push_back(csv_cell(field(d, c), ""));
    for (const char* c :
         {"h", "instances", "lost", "live_final", "steps", "rhs_evaluations", "reference_rhs_evaluations", "projections",
          "wall_seconds", "integration_seconds", "measurement_seconds", "cost_seconds", "cost_noise"})
      row.push_back(csv_cell(field(d, c), "nan"));
    row.push_back(csv_cell(relative_cost(digests, d), "nan"));
    row.push_back(std::string(cost_key(digests)) == "cost_seconds" ? (within_noise_of_fastest(digests, d) ? "true" : "false")
                                                                   : "");
    for (const char* c : {"device_seconds", "setup_seconds", "finish_seconds"}) row.push_back(csv_cell(field(d, c), "nan"));
    for (const char* m : metrics) {
      const nlohmann::json st = value_of(d, "final", m);
      row.push_back(csv_cell(st.is_null() ? st : field(st, "p50"), "nan"));
      row.push_back(csv_cell(st.is_null() ? st : field(st, "max"), "nan"));
      row.push_back(csv_cell(growth_of(d, m), "nan"));
      row.push_back(csv_text(growth_reason_of(d, m)));
    }
    for (std::int64_t k : ks) row.push_back(csv_cell(phase_error_at(d, k), "nan"));
    for (const auto& k : resolved) row.push_back(csv_cell(value_of(d, "resolved", k), ""));
    rows.push_back(row);
  }
  return rows;
}

// Columns aligned: the first left, the others right.
void aligned(std::ostringstream& os, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(rows[0].size(), 0);
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      os << "  " << (c == 0 ? row[c] + pad : pad + row[c]);
    }
    os << '\n';
  }
}

// [parameters] group_by: each group's live count and final median and maximum, as the errors
// table gives the runs'.
void groups_table(std::ostringstream& os, const std::vector<nlohmann::json>& digests,
                  const std::vector<const char*>& metrics) {
  std::vector<std::vector<std::string>> rows = {{"run", "group", "live"}};
  for (const char* m : metrics)
    for (const char* what : {"p50", "max"}) rows[0].push_back(std::string(m) + " " + what);
  for (const auto& d : digests) {
    if (!d.contains("groups")) continue;
    for (const auto& g : d["groups"]) {
      std::vector<std::string> row = {d["name"].get<std::string>(), g["group"].get<std::string>(), live_cell(g)};
      for (const char* m : metrics) {
        const nlohmann::json st = value_of(g, "final", m);
        row.push_back(st.is_null() ? "-" : table_cell(field(st, "p50"), "%.3e"));
        row.push_back(st.is_null() ? "-" : table_cell(field(st, "max"), "%.3e"));
      }
      rows.push_back(row);
    }
  }
  if (rows.size() == 1) return;
  os << "\nGroups ([parameters] group_by): each group's live instances and its errors at t_final (median, maximum):\n";
  aligned(os, rows);
}

// [first_passage]: per run and level, the instances that crossed it, were lost before they
// did or never did, and the median crossing time (summary.json's first_passage).
void first_passage_table(std::ostringstream& os, const std::vector<nlohmann::json>& digests) {
  std::vector<std::vector<std::string>> rows = {
      {"run", "passage of", "level", "crossed", "lost_first", "never", "time p50"}};
  for (const auto& d : digests) {
    if (!d.contains("first_passage")) continue;
    for (const auto& [what, e] : d["first_passage"].items())
      rows.push_back({d["name"].get<std::string>(), what, table_cell(field(e, "level"), "%.3g"),
                      table_cell(field(e, "crossed")), table_cell(field(e, "lost_first")), table_cell(field(e, "never")),
                      table_cell(field(e, "time_p50"), "%.4g")});
  }
  if (rows.size() == 1) return;
  os << "\nFirst passages ([first_passage]): instances whose metric crossed its level, were lost first or never did, "
        "and the median crossing time (lost: the instances lost, and when):\n";
  aligned(os, rows);
}

}  // namespace

nlohmann::json run_digest(const std::string& name, const Study& s, const RunParams<double>& rp, const EnsembleResult& r,
                          const std::vector<std::pair<std::string, std::string>>& overrides) {
  nlohmann::json d;
  d["name"] = name;
  d["formulation"] = formulation_name(s.formulation);
  d["method"] = method_name(s.method);
  d["h"] = rp.h;  // resolved (the penalty model derives it from steps_per_oscillation)
  d["t_end"] = rp.t_end;
  d["precision"] = precision_name(s.precision);
  d["instances"] = r.instances;
  d["lost"] = r.lost_total();
  d["steps"] = r.totals.steps;
  d["rhs_evaluations"] = r.totals.rhs_evaluations;
  // The reference solution's work: wall_seconds includes it, and the drivers do not time it
  // apart (a closed-form reference counts no evaluations).
  d["reference_steps"] = r.totals.reference_steps;
  d["reference_rhs_evaluations"] = r.totals.reference_rhs_evaluations;
  d["projections"] = r.totals.momentum_projections + r.totals.position_projections;
  d["wall_seconds"] = r.wall_seconds;
  // The CPU's split of the segments' wall time into integrating and measuring (the
  // reference, diagnostics, statistics: ensemble_result.hpp); null where not measured.
  d["integration_seconds"] = r.integration_seconds >= 0 ? nlohmann::json(r.integration_seconds) : nlohmann::json();
  d["measurement_seconds"] = r.measurement_seconds >= 0 ? nlohmann::json(r.measurement_seconds) : nlohmann::json();
  // The GPU's split of wall_seconds (ensemble_result.hpp); the CPU does not measure one.
  const bool gpu = r.backend == "cuda";
  d["device_seconds"] = gpu ? nlohmann::json(r.device_seconds) : nlohmann::json();
  d["setup_seconds"] = gpu ? nlohmann::json(r.setup_seconds) : nlohmann::json();
  d["finish_seconds"] = gpu ? nlohmann::json(r.finish_seconds) : nlohmann::json();
  d["backend"] = r.backend;
  // The integration at its median pace (backends/step_cost.hpp), in the wall time of the
  // run's threads, and its relative noise: what the cost comparison compares.
  const StepCost cost = StepCost::of(r.step_cost);
  const bool paced = cost.samples > 0 && r.totals.steps > 0;
  d["cost_seconds"] = paced ? nlohmann::json(cost.p50 * static_cast<double>(r.totals.steps) / std::max(1, r.threads))
                            : nlohmann::json();
  d["cost_noise"] = paced ? nlohmann::json(std::max(cost.relative_notch(), between_runs_noise)) : nlohmann::json();
  // How many instances the final statistics are over (backends/live_fraction.hpp).
  const LiveFraction live = live_fraction(r.series, r.instances);
  d["live_final"] = live.final;
  d["live_below_threshold_from"] = live.below_t >= 0 ? nlohmann::json(live.below_t) : nlohmann::json();
  // [parameters] group_by: each group's size, live count and final statistics; [first_passage]:
  // each level's counts and times (summary.json's, for the printed tables).
  if (!r.groups.empty()) {
    const ParameterEnsemble e = parameter_ensemble(s);
    d["groups"] = nlohmann::json::array();
    for (std::size_t g = 0; g < r.groups.size(); ++g) {
      nlohmann::json gj = {{"group", group_label(e, g)},
                           {"instances", r.groups[g].instances},
                           {"live_final", r.groups[g].series.empty() ? 0 : live_at(r.groups[g].series.back())}};
      gj["final"] = nlohmann::json::object();
      for (int m = 0; m < metric_count; ++m)
        for (const char* c : compared_metrics)
          if (std::string(c) == metric_name(m) && r.metric_reported(m) && !r.groups[g].series.empty()) {
            const SampleStats& fin = r.groups[g].series.back();
            gj["final"][c] = fin.metric[m].count == 0
                                 ? nlohmann::json()
                                 : nlohmann::json{{"p50", number_or_null(fin.quantile[m][quantile_p50])},
                                                  {"max", number_or_null(fin.metric[m].max)}};
          }
      d["groups"].push_back(gj);
    }
  }
  if (r.passage.any()) d["first_passage"] = first_passage_summary(rp, r.passage, r.instances);
  const nlohmann::json resolved = resolved_keys(s, rp);
  d["varied"] = nlohmann::json::object();
  for (const auto& [key, text] : overrides) d["varied"][key] = resolved.contains(key) ? resolved[key] : typed(text);
  d["resolved"] = resolved;
  const nlohmann::json growth = growth_summary(r, s);
  d["growth_window"] = growth["window"];
  d["growth_limits"] = growth["limits"];
  if (!s.phase_error.empty()) d["phase_error"] = phase_error_table(s, rp, r)["rows"];
  d["growth_of_max"] = nlohmann::json::object();
  d["growth_of_max_reason"] = nlohmann::json::object();
  for (const char* c : compared_metrics) {
    if (!growth.contains(c)) continue;
    d["growth_of_max"][c] = growth[c]["max"];
    if (growth[c].contains("max_reason")) d["growth_of_max_reason"][c] = growth[c]["max_reason"];
  }
  d["final"] = nlohmann::json::object();
  for (int m = 0; m < metric_count; ++m)
    for (const char* c : compared_metrics)
      if (std::string(c) == metric_name(m)) d["final"][c] = final_stats(r, m);
  return d;
}

std::string comparison_table(const std::vector<nlohmann::json>& digests) {
  std::ostringstream os;
  const std::string window = digests.empty() || !digests[0].contains("growth_window")
                                 ? std::string()
                                 : " over t in [" + printf_cell("%.4g", digests[0]["growth_window"][0].get<double>()) +
                                       ", " + printf_cell("%.4g", digests[0]["growth_window"][1].get<double>()) + "]";
  const std::vector<std::string> varied = keys_of(digests, "varied", shown_in_work);
  const bool reference_work = any_reference_work(digests);
  const std::string key = cost_key(digests);
  const bool paced = key == "cost_seconds";
  const bool integration = paced || key == "integration_seconds";
  os << (paced ? "Work and cost (cost_s: the integration at its median pace per instance-step, without the reference "
                 "solution, the diagnostics, a cold start or a busy moment; noise: what the median is known to within; "
                 "relative: cost_s "
                 "to the fastest run's, ~ where the two are within their noise):\n"
         : integration ? "Work and cost (integrate_s: the integration's share of the wall time, without the reference "
                         "solution and the diagnostics; relative: integrate_s to the fastest run's):\n"
                       : "Work and cost (wall time, the reference solution's included, relative to the fastest run):\n");
  std::vector<std::vector<std::string>> work = {{"run"}};
  work[0].insert(work[0].end(), varied.begin(), varied.end());
  for (const char* c : {"formulation", "method", "h", "lost", "steps", "rhs_evals"}) work[0].push_back(c);
  if (reference_work) work[0].push_back("ref_rhs_evals");
  for (const char* c : {"projections", "wall_s"}) work[0].push_back(c);
  if (integration) work[0].push_back("integrate_s");
  if (paced) {
    work[0].push_back("cost_s");
    work[0].push_back("noise");
  }
  work[0].push_back("relative");
  for (const auto& d : digests) {
    std::vector<std::string> row = {d["name"].get<std::string>()};
    for (const auto& k : varied) row.push_back(table_cell(value_of(d, "varied", k)));
    row.push_back(table_cell(field(d, "formulation")));
    row.push_back(table_cell(field(d, "method")));
    row.push_back(table_cell(field(d, "h"), "%.6g"));
    for (const char* c : {"lost", "steps", "rhs_evaluations"}) row.push_back(table_cell(field(d, c)));
    if (reference_work) row.push_back(table_cell(field(d, "reference_rhs_evaluations")));
    row.push_back(table_cell(field(d, "projections")));
    row.push_back(table_cell(field(d, "wall_seconds")));
    if (integration) row.push_back(table_cell(field(d, "integration_seconds")));
    if (paced) {
      row.push_back(table_cell(field(d, "cost_seconds")));
      row.push_back(printf_cell("+-%.1f%%", 100 * cost_noise(d).get<double>()));
    }
    const nlohmann::json rel = relative_cost(digests, d);
    const bool tied = rel.is_number() && rel.get<double>() > 1 && within_noise_of_fastest(digests, d);
    row.push_back(rel.is_null() ? "-" : printf_cell(tied ? "~%.2f" : "%.2f", rel.get<double>()));
    work.push_back(row);
  }
  aligned(os, work);
  os << "\nErrors at t_final over the ensemble: median (p50), maximum, and the growth exponent of the maximum" << window
     << ":\n";
  std::vector<std::vector<std::string>> errors = {{"run", "live"}};
  const std::vector<const char*> metrics = shown_metrics(digests);
  bool few = false;
  for (const char* m : metrics)
    for (const char* what : {"p50", "max", "growth"}) errors[0].push_back(std::string(m) + " " + what);
  bool withheld = false;
  for (const auto& d : digests) {
    std::vector<std::string> row = {d["name"].get<std::string>(), live_cell(d)};
    few = few || row[1].back() == '*';
    for (const char* m : metrics) {
      const nlohmann::json st = value_of(d, "final", m);
      row.push_back(st.is_null() ? "-" : table_cell(field(st, "p50"), "%.3e"));
      row.push_back(st.is_null() ? "-" : table_cell(field(st, "max"), "%.3e"));
      const nlohmann::json g = growth_of(d, m);
      const std::string tag = growth_tag(growth_reason_of(d, m));
      withheld = withheld || tag != "-";
      row.push_back(g.is_number() ? printf_cell("%.2f", g.get<double>()) : tag);
    }
    errors.push_back(row);
  }
  // Abbreviated headers: the metric names are long.
  for (std::string& h : errors[0]) {
    for (const auto& [from, to] : {std::pair<std::string, std::string>{"integration_error", "error"},
                                   {"energy_error", "energy"},
                                   {"wedge_error", "wedge"}}) {
      if (h.rfind(from, 0) == 0) h = to + h.substr(from.size());
    }
  }
  aligned(os, errors);
  if (few)
    os << "  (* fewer than " << few_live_fraction * 100
       << " % of the instances live at t_final: the statistics are those of the survivors, not of the ensemble; "
          "live_below_threshold_from in study.json says since when)\n";
  if (withheld)
    os << "  (growth withheld: rounding = the maximum stays at round-off level, saturated = it reaches the size of the "
          "state, stops = it stops growing within the window, lost = no live instance at t_final; the reasons in "
          "study.json and comparison.csv)\n";
  const std::vector<std::int64_t> ks = phase_periods(digests);
  if (!ks.empty()) {
    os << "\nPhase error |y(kT) - y_exact(kT)| of instance 0 (002 Table 1):\n";
    std::vector<std::vector<std::string>> phase = {{"run"}};
    for (std::int64_t k : ks) phase[0].push_back(std::to_string(k) + "T");
    for (const auto& d : digests) {
      std::vector<std::string> row = {d["name"].get<std::string>()};
      for (std::int64_t k : ks) row.push_back(table_cell(phase_error_at(d, k), "%.3e"));
      phase.push_back(row);
    }
    aligned(os, phase);
  }
  groups_table(os, digests, metrics);
  first_passage_table(os, digests);
  return os.str();
}

std::string comparison_csv(const std::vector<nlohmann::json>& digests) {
  std::ostringstream os;
  for (const auto& row : rows_of(digests)) {
    for (std::size_t c = 0; c < row.size(); ++c) os << (c ? "," : "") << row[c];
    os << '\n';
  }
  return os.str();
}

}  // namespace chens
