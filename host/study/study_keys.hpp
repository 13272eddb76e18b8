// The study keys' documentation, generated from their declarations (study_key_table.hpp):
// docs/study-format.md holds these tables (tests/test_study_keys.cpp checks them), and
// `chens keys --markdown` prints them.
#pragma once

#include <string>
#include <vector>

namespace chens {

// One markdown table of keys: the keys of one section that apply to one kind of study.
struct KeyTable {
  std::string marker;    // the line before the table in the docs: "<!-- keys [model] chain -->"
  std::string markdown;  // "| key | default | allowed | meaning |" and a line per key
};
std::vector<KeyTable> key_tables();

// Every table, each after its marker line and followed by a blank line.
std::string key_tables_markdown();

}  // namespace chens
