// series_long.csv (docs/study-format.md): every complete run's series.csv of a study stacked
// into one long table, a row per (run, [group,] time, metric, statistic).
#include "output/series_long.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "output/csv_cells.hpp"

namespace chens {

std::string series_long_csv(const std::string& dir, const nlohmann::json& index) {
  std::vector<std::pair<std::string, std::filesystem::path>> runs;
  for (const auto& run : index.at("runs")) {
    if (run.value("status", "") != "complete") continue;
    const std::string name = run.at("name").get<std::string>();
    runs.emplace_back(name, std::filesystem::path(dir) / run.value("directory", name) / "series.csv");
  }
  // Runs with [parameters] group_by start their series.csv with a group column: then every
  // row says its group ("all" for an ungrouped run's).
  bool grouped = false;
  for (const auto& [name, path] : runs) {
    std::ifstream in(path);
    std::string line;
    grouped = grouped || (in && std::getline(in, line) && line.rfind("group,", 0) == 0);
  }
  std::ostringstream os;
  os << (grouped ? "run,group,time,metric,statistic,value\n" : "run,time,metric,statistic,value\n");
  for (const auto& [name, path] : runs) {
    std::ifstream in(path);
    std::string line;
    if (!in || !std::getline(in, line)) throw std::runtime_error(path.string() + ": cannot be read (run \"" + name + "\")");
    // Columns [group,] t, live, then <metric>_<statistic> (writer.cpp's make_series_csv); a
    // statistic name holds no '_'; then surviving_<metric or lost> ([first_passage]), whose
    // statistic is "surviving".
    const std::vector<std::string> head = csv_split(line);
    const std::size_t t_at = !head.empty() && head[0] == "group" ? 1 : 0;
    std::vector<std::pair<std::string, std::string>> what(head.size());
    const std::string surviving = "surviving_";
    for (std::size_t c = t_at + 1; c < head.size(); ++c) {
      const std::size_t cut = head[c].rfind('_');
      what[c] = head[c] == "live" ? std::pair<std::string, std::string>{"live", "count"}
                : head[c].rfind(surviving, 0) == 0
                    ? std::pair<std::string, std::string>{head[c].substr(surviving.size()), "surviving"}
                : cut == std::string::npos
                    ? std::pair<std::string, std::string>{head[c], ""}
                    : std::pair<std::string, std::string>{head[c].substr(0, cut), head[c].substr(cut + 1)};
    }
    const std::string run_cell = csv_text(name);
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      const std::vector<std::string> cells = csv_split(line);
      if (cells.size() != head.size())
        throw std::runtime_error(path.string() + ": a row has " + std::to_string(cells.size()) + " cells, the header " +
                                 std::to_string(head.size()));
      const std::string group = grouped ? (t_at == 1 ? cells[0] : std::string("all")) + "," : std::string();
      for (std::size_t c = t_at + 1; c < cells.size(); ++c)
        os << run_cell << ',' << group << cells[t_at] << ',' << what[c].first << ',' << what[c].second << ',' << cells[c]
           << '\n';
    }
  }
  return os.str();
}

}  // namespace chens
