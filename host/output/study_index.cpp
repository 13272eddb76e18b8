#include "output/study_index.hpp"

#include "output/writer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace chens {

namespace {

// Final median and maximum of the metrics a comparison shows.
const char* const compared_metrics[] = {"integration_error", "energy_error", "phi", "psi"};

nlohmann::json final_stats(const EnsembleResult& r, int m) {
  const SampleStats& fin = r.series.back();
  if (!r.metric_reported(m) || fin.metric[m].count == 0) return nullptr;
  return {{"p50", number_or_null(fin.quantile[m][quantile_p50])}, {"max", number_or_null(fin.metric[m].max)}};
}

std::string cell(const nlohmann::json& v) {
  if (v.is_null()) return "-";
  char buf[40];
  if (v.is_number_float()) {
    std::snprintf(buf, sizeof buf, "%.3e", v.get<double>());
    return buf;
  }
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

std::string growth_cell(double p) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%.2f", p);
  return buf;
}

std::vector<std::vector<std::string>> rows_of(const std::vector<nlohmann::json>& digests) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = {"run", "formulation", "method", "h", "lost", "steps", "rhs_evals", "projections", "wall_s"};
  for (const char* m : compared_metrics) {
    head.push_back(std::string(m) + "_p50");
    head.push_back(std::string(m) + "_max");
    head.push_back(std::string(m) + "_growth");
  }
  rows.push_back(head);
  for (const auto& d : digests) {
    std::vector<std::string> row = {d["name"].get<std::string>(), d["formulation"].get<std::string>(),
                                    d["method"].get<std::string>(), cell(d["h"]), cell(d["lost"]), cell(d["steps"]),
                                    cell(d["rhs_evaluations"]), cell(d["projections"]), cell(d["wall_seconds"])};
    for (const char* m : compared_metrics) {
      const auto& st = d["final"][m];
      row.push_back(st.is_null() ? "-" : cell(st["p50"]));
      row.push_back(st.is_null() ? "-" : cell(st["max"]));
      const auto& g = d["growth_of_max"];
      row.push_back(g.contains(m) && g[m].is_number() ? growth_cell(g[m].get<double>()) : "-");
    }
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

nlohmann::json run_digest(const std::string& name, const Study& s, const RunParams<double>& rp, const EnsembleResult& r) {
  nlohmann::json d;
  d["name"] = name;
  d["formulation"] = formulation_name(s.formulation);
  d["method"] = method_name(s.method);
  d["h"] = s.h;
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
  const auto rows = rows_of(digests);
  std::vector<std::size_t> width(rows[0].size(), 0);
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::ostringstream os;
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      os << (c ? "  " : "") << (c == 0 ? row[c] + pad : pad + row[c]);
    }
    os << '\n';
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
