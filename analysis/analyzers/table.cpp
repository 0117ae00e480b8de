// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/analyzers/table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/version.h"

namespace ezio::analysis {

Cell text_cell(std::string s) { return Cell{s, s, false}; }
Cell count_cell(uint64_t n) { return Cell{n, fmt::format("{}", n), true}; }
Cell bytes_cell(uint64_t n) { return Cell{n, human_bytes(n), true}; }
Cell seconds_cell(double s) { return Cell{s, human_seconds(s), true}; }
Cell no_value_cell() { return Cell{nullptr, "-", true}; }
Cell percent_cell(double pct) { return Cell{pct, fmt::format("{:.2f}", pct), true}; }
Cell number_cell(double x, int precision) {
  return Cell{x, fmt::format("{:.{}f}", x, precision), true};
}

void Table::add(std::vector<Cell> row, std::string section) {
  rows.push_back(std::move(row));
  row_sections.push_back(std::move(section));
}

std::string human_bytes(uint64_t n) {
  static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (n < 1024) return fmt::format("{} B", n);
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 6) v /= 1024, ++u;
  return fmt::format("{:.1f} {}", v, units[u]);
}

std::string human_seconds(double s) {
  if (s == 0) return "0";
  double a = std::fabs(s);
  if (a >= 1) return fmt::format("{:.3f} s", s);
  if (a >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  if (a >= 1e-6) return fmt::format("{:.3f} us", s * 1e6);
  return fmt::format("{:.0f} ns", s * 1e9);
}

namespace {

void print_text(const Table& t, std::ostream& out) {
  std::vector<size_t> width(t.columns.size());
  for (size_t c = 0; c < t.columns.size(); ++c) width[c] = t.columns[c].title.size();
  for (auto& row : t.rows) {
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) {
      width[c] = std::max(width[c], row[c].text.size());
    }
  }
  auto header = [&] {
    std::string line;
    for (size_t c = 0; c < t.columns.size(); ++c) {
      bool right = !t.rows.empty() && c < t.rows[0].size() ? t.rows[0][c].right : c > 0;
      line += right ? fmt::format("{:>{}}", t.columns[c].title, width[c])
                    : fmt::format("{:<{}}", t.columns[c].title, width[c]);
      if (c + 1 < t.columns.size()) line += "  ";
    }
    out << line << '\n' << std::string(line.size(), '-') << '\n';
  };
  if (!t.title.empty()) out << t.title << '\n';
  std::string section;
  bool first = true;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    if (first || t.row_sections[r] != section) {
      if (!first) out << '\n';
      section = t.row_sections[r];
      if (!section.empty()) {
        out << (section == t.unprefixed_section ? "" : t.section_prefix) << section << ":\n";
      }
      header();
      first = false;
    }
    std::string line;
    auto& row = t.rows[r];
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) {
      line += row[c].right ? fmt::format("{:>{}}", row[c].text, width[c])
                           : fmt::format("{:<{}}", row[c].text, width[c]);
      if (c + 1 < row.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  }
  if (first) {
    header();
    out << "(no data)\n";
  }
  if (!t.footer.empty()) out << '\n' << t.footer;
}

std::string csv_escape(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + '"';
}

std::string csv_value(const nlohmann::json& v) {
  if (v.is_string()) return csv_escape(v.get<std::string>());
  if (v.is_null()) return "";
  if (v.is_number_float()) return fmt::format("{}", v.get<double>());
  if (v.is_object() || v.is_array()) return csv_escape(v.dump());
  return v.dump();
}

void print_csv(const Table& t, std::ostream& out) {
  std::string line;
  if (!t.section_key.empty()) line = csv_escape(t.section_key) + ",";
  for (size_t c = 0; c < t.columns.size(); ++c) {
    line += csv_escape(t.columns[c].key);
    if (c + 1 < t.columns.size()) line += ',';
  }
  out << line << '\n';
  for (size_t r = 0; r < t.rows.size(); ++r) {
    line.clear();
    if (!t.section_key.empty()) line = csv_escape(t.row_sections[r]) + ",";
    for (size_t c = 0; c < t.rows[r].size(); ++c) {
      line += csv_value(t.rows[r][c].value);
      if (c + 1 < t.rows[r].size()) line += ',';
    }
    out << line << '\n';
  }
}

nlohmann::json table_json(const Table& t) {
  auto rows = nlohmann::json::array();
  for (size_t r = 0; r < t.rows.size(); ++r) {
    nlohmann::json row = nlohmann::json::object();
    if (!t.section_key.empty()) row[t.section_key] = t.row_sections[r];
    for (size_t c = 0; c < t.rows[r].size() && c < t.columns.size(); ++c) {
      row[t.columns[c].key] = t.rows[r][c].value;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

nlohmann::json version_json(const std::string& archive_version) {
  return {
      {"analyzer", version_string()},
      {"archive", archive_version.empty() ? nlohmann::json() : nlohmann::json(archive_version)}};
}

void print(const Report& report, Format format, std::ostream& out) {
  switch (format) {
    case Format::kJson: {
      nlohmann::json j = nlohmann::json::object();
      j["eziotrace_version"] = version_json(report.archive_version);
      j["meta"] = report.meta;
      for (auto& t : report.tables) j[t.name] = table_json(t);
      out << j.dump(2) << '\n';
      break;
    }
    case Format::kCsv:
      // One table: plain CSV. Several: blocks separated by a blank line, each introduced by a
      // "# <table name>" line, so that a script can split them.
      for (size_t i = 0; i < report.tables.size(); ++i) {
        if (report.tables.size() > 1) {
          if (i > 0) out << '\n';
          out << "# " << report.tables[i].name << '\n';
        }
        print_csv(report.tables[i], out);
      }
      break;
    case Format::kText:
      for (size_t i = 0; i < report.tables.size(); ++i) {
        if (i > 0) out << '\n';
        print_text(report.tables[i], out);
      }
      if (!report.notes.empty()) out << '\n';
      for (auto& n : report.notes) out << n << '\n';
      break;
  }
}

}  // namespace ezio::analysis
