// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The result of an analyzer as named tables of typed cells, printed as aligned text (default),
// JSON or CSV. Every cell carries its machine value (JSON/CSV) and its human text.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace ezio::analysis {

enum class Format { kText, kJson, kCsv };

struct Cell {
  nlohmann::json value;
  std::string text;
  bool right = true;  // numbers align right, names left
};

Cell text_cell(std::string s);
Cell count_cell(uint64_t n);
Cell bytes_cell(uint64_t n);    // human: 1.5 MiB
Cell seconds_cell(double s);    // human: adaptive unit (s, ms, us, ns)
Cell percent_cell(double pct);  // value in percent
Cell number_cell(double x, int precision = 3);
Cell no_value_cell();  // null in JSON, empty in CSV, "-" in text: the figure has no meaning here

struct Column {
  std::string key;    // JSON / CSV name
  std::string title;  // human header
};

struct Table {
  std::string name;   // JSON key of the table
  std::string title;  // printed above the human table ("" for none)
  std::vector<Column> columns;
  // Rows may be grouped in sections (e.g. one per thread); section_key names the JSON/CSV field.
  std::string section_key;
  std::string section_prefix;      // human header of a section: prefix + section + ":"
  std::string unprefixed_section;  // a section printed without the prefix ("all threads")
  std::vector<std::string> row_sections;
  std::vector<std::vector<Cell>> rows;
  std::string footer;  // printed after the human table only (terminal histograms)

  void add(std::vector<Cell> row, std::string section = {});
};

struct Report {
  nlohmann::json meta = nlohmann::json::object();  // trace path, losses, anomalies
  std::string archive_version;  // the trace's EZIOTRACE::VERSION, "" when it has none
  std::vector<Table> tables;
  std::vector<std::string> notes;  // printed after the human tables
};

void print(const Report& report, Format format, std::ostream& out);

// The JSON outputs' "eziotrace_version": {"analyzer": this program's version, "archive": the
// version that wrote the trace (archive_version), null when the trace does not say}.
nlohmann::json version_json(const std::string& archive_version);

// Human formatting helpers shared by the analyzers.
std::string human_bytes(uint64_t n);
std::string human_seconds(double s);

}  // namespace ezio::analysis
