#include "output/study_index.hpp"

#include "output/writer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace chens {

namespace {

// Final median and maximum of the metrics a comparison shows; wedge_error (output.wedge)
// only where some run reports it.
const char* const compared_metrics[] = {"integration_error", "energy_error", "phi", "psi", "wedge_error"};

bool wedge_reported(const std::vector<nlohmann::json>& digests) {
  for (const auto& d : digests)
    if (d.contains("final") && d["final"].contains("wedge_error") && !d["final"]["wedge_error"].is_null()) return true;
  return false;
}

// The compared metrics of these runs.
std::vector<const char*> shown_metrics(const std::vector<nlohmann::json>& digests) {
  std::vector<const char*> out;
  for (const char* m : compared_metrics)
    if (std::string(m) != "wedge_error" || wedge_reported(digests)) out.push_back(m);
  return out;
}

nlohmann::json final_stats(const EnsembleResult& r, int m) {
  const SampleStats& fin = r.series.back();
  if (!r.metric_reported(m) || fin.metric[m].count == 0) return nullptr;
  return {{"p50", number_or_null(fin.quantile[m][quantile_p50])}, {"max", number_or_null(fin.metric[m].max)}};
}

// A number for the table (4 significant digits) or the CSV file (every digit).
std::string cell(const nlohmann::json& v, bool full = false) {
  if (v.is_null()) return "-";
  if (v.is_number_float()) {
    char buf[40];
    std::snprintf(buf, sizeof buf, full ? "%.17g" : "%.3e", v.get<double>());
    return buf;
  }
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

std::string fixed(double x, const char* format) {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, x);
  return buf;
}

// Wall time relative to the fastest run (002 §6 compares formulations' computing time so).
nlohmann::json relative_cost(const std::vector<nlohmann::json>& digests, const nlohmann::json& d) {
  double fastest = INFINITY;
  for (const auto& e : digests) fastest = std::min(fastest, e["wall_seconds"].get<double>());
  return fastest > 0 ? nlohmann::json(d["wall_seconds"].get<double>() / fastest) : nlohmann::json(nullptr);
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

// comparison.csv: one row per run, every number in full precision.
std::vector<std::vector<std::string>> rows_of(const std::vector<nlohmann::json>& digests) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = {"run",   "formulation", "method",      "h",      "lost",
                                   "steps", "rhs_evals",   "projections", "wall_s", "wall_relative"};
  const std::vector<const char*> metrics = shown_metrics(digests);
  for (const char* m : metrics) {
    head.push_back(std::string(m) + "_p50");
    head.push_back(std::string(m) + "_max");
    head.push_back(std::string(m) + "_growth");
  }
  const std::vector<std::int64_t> ks = phase_periods(digests);
  for (std::int64_t k : ks) head.push_back("phase_error_" + std::to_string(k) + "T");
  rows.push_back(head);
  for (const auto& d : digests) {
    std::vector<std::string> row = {d["name"].get<std::string>(), d["formulation"].get<std::string>(),
                                    d["method"].get<std::string>(), cell(d["h"], true), cell(d["lost"]), cell(d["steps"]),
                                    cell(d["rhs_evaluations"]), cell(d["projections"]), cell(d["wall_seconds"], true),
                                    cell(relative_cost(digests, d), true)};
    for (const char* m : metrics) {
      const auto& st = d["final"][m];
      row.push_back(st.is_null() ? "-" : cell(st["p50"], true));
      row.push_back(st.is_null() ? "-" : cell(st["max"], true));
      const auto& g = d["growth_of_max"];
      row.push_back(g.contains(m) && g[m].is_number() ? cell(g[m], true) : "-");
    }
    for (std::int64_t k : ks) row.push_back(cell(phase_error_at(d, k), true));
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

}  // namespace

nlohmann::json run_digest(const std::string& name, const Study& s, const RunParams<double>& rp, const EnsembleResult& r) {
  nlohmann::json d;
  d["name"] = name;
  d["formulation"] = formulation_name(s.formulation);
  d["method"] = method_name(s.method);
  d["h"] = rp.h;  // resolved (the penalty model derives it from steps_per_oscillation)
  d["t_end"] = rp.t_end;
  d["precision"] = s.precision;
  d["instances"] = r.instances;
  d["lost"] = r.lost_total();
  d["steps"] = r.totals.steps;
  d["rhs_evaluations"] = r.totals.rhs_evaluations;
  d["projections"] = r.totals.momentum_projections + r.totals.position_projections;
  d["wall_seconds"] = r.wall_seconds;
  d["backend"] = r.backend;
  const nlohmann::json growth = growth_exponents(r);
  d["growth_window"] = growth["window"];
  if (!s.phase_error.empty()) d["phase_error"] = phase_error_table(s, rp, r)["rows"];
  d["growth_of_max"] = nlohmann::json::object();
  for (const char* c : compared_metrics)
    if (growth.contains(c)) d["growth_of_max"][c] = growth[c]["max"];
  d["final"] = nlohmann::json::object();
  for (int m = 0; m < metric_count; ++m)
    for (const char* c : compared_metrics)
      if (std::string(c) == metric_name(m)) d["final"][c] = final_stats(r, m);
  return d;
}

std::string comparison_table(const std::vector<nlohmann::json>& digests) {
  std::ostringstream os;
  const std::string window =
      digests.empty() || !digests[0].contains("growth_window")
          ? std::string()
          : " over t in [" + fixed(digests[0]["growth_window"][0].get<double>(), "%.4g") + ", " +
                fixed(digests[0]["growth_window"][1].get<double>(), "%.4g") + "]";
  os << "Work and cost (wall time relative to the fastest run):\n";
  std::vector<std::vector<std::string>> work = {
      {"run", "formulation", "method", "h", "lost", "steps", "rhs_evals", "projections", "wall_s", "relative"}};
  for (const auto& d : digests)
    work.push_back({d["name"].get<std::string>(), d["formulation"].get<std::string>(), d["method"].get<std::string>(),
                    fixed(d["h"].get<double>(), "%.6g"), cell(d["lost"]), cell(d["steps"]), cell(d["rhs_evaluations"]),
                    cell(d["projections"]), fixed(d["wall_seconds"].get<double>(), "%.3g"),
                    relative_cost(digests, d).is_null() ? "-" : fixed(relative_cost(digests, d).get<double>(), "%.2f")});
  aligned(os, work);
  os << "\nErrors at t_final over the ensemble: median (p50), maximum, and the growth exponent of the maximum"
     << window << ":\n";
  std::vector<std::vector<std::string>> errors = {{"run"}};
  const std::vector<const char*> metrics = shown_metrics(digests);
  for (const char* m : metrics)
    for (const char* what : {"p50", "max", "growth"}) errors[0].push_back(std::string(m) + " " + what);
  for (const auto& d : digests) {
    std::vector<std::string> row = {d["name"].get<std::string>()};
    for (const char* m : metrics) {
      const auto& st = d["final"][m];
      row.push_back(st.is_null() ? "-" : cell(st["p50"]));
      row.push_back(st.is_null() ? "-" : cell(st["max"]));
      const auto& g = d["growth_of_max"];
      row.push_back(g.contains(m) && g[m].is_number() ? fixed(g[m].get<double>(), "%.2f") : "-");
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
  const std::vector<std::int64_t> ks = phase_periods(digests);
  if (!ks.empty()) {
    os << "\nPhase error |y(kT) - y_exact(kT)| of instance 0 (002 Table 1):\n";
    std::vector<std::vector<std::string>> phase = {{"run"}};
    for (std::int64_t k : ks) phase[0].push_back(std::to_string(k) + "T");
    for (const auto& d : digests) {
      std::vector<std::string> row = {d["name"].get<std::string>()};
      for (std::int64_t k : ks) row.push_back(cell(phase_error_at(d, k)));
      phase.push_back(row);
    }
    aligned(os, phase);
  }
  return os.str();
}

std::string comparison_csv(const std::vector<nlohmann::json>& digests) {
  std::ostringstream os;
  for (const auto& row : rows_of(digests)) {
    for (std::size_t c = 0; c < row.size(); ++c) os << (c ? "," : "") << (row[c] == "-" ? "nan" : row[c]);
    os << '\n';
  }
  return os.str();
}

}  // namespace chens
