// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// `eziotrace advise`: findings from rules over a trace's evidence (evidence.h), each with a level,
// the numbers that triggered it, where it happened and what to do. Thresholds have documented
// defaults (docs/analysis.md, `advise`) and are overridden by a JSON file (--config).
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/analyzers/evidence.h"

namespace ezio::analysis {

// Every threshold by name, with its default; --config FILE replaces some of them.
struct Thresholds {
  std::map<std::string, double> values;
  bool all = false;  // --all: the launcher's and start-up I/O is the application's too
  Thresholds();
  double operator[](const std::string& name) const;
  // Reads {"name": number, ...}; throws ezio::Error naming the file on unknown names or bad JSON.
  void load(const std::string& path);
};

enum class Level { kHigh, kWarn, kInfo };
std::string_view level_name(Level l);

struct Finding {
  Finding(std::string r, Level l, std::string t)
      : rule(std::move(r)), level(l), title(std::move(t)) {}
  std::string rule;  // "small-requests"
  Level level = Level::kInfo;
  std::string title;     // one line
  std::string evidence;  // the numbers, in words
  nlohmann::json numbers = nlohmann::json::object();
  std::vector<std::string> where;  // files, devices, threads
  std::string advice;
  std::string section;  // the report section holding the evidence ("files", "devices"...)
};

// A rule that could not be evaluated on this trace, and why (a layer not observed...).
struct Unobserved {
  std::string rule, reason;
};

// A file no rule looked at: not the application's (file_origin()).
struct LeftOut {
  std::string path;
  FileOrigin origin;
};

struct Advice {
  std::vector<Finding> findings;  // most severe first
  std::vector<Unobserved> unobserved;
  std::vector<LeftOut> left_out;
  std::vector<std::string> rules;  // every rule evaluated, in order
};

// The evidence options the thresholds imply (the small-request size, the crowded depth).
EvidenceOptions evidence_options(const Thresholds& t);

Advice advise(const Evidence& ev, const Thresholds& t);
nlohmann::json advice_json(const Advice& a, const Evidence& ev, const Thresholds& t);

// What `eziotrace advise` is told (app/advise.cpp).
struct AdviseOptions {
  std::string trace, config;  // config: a JSON file of thresholds, or ""
  bool json = false;
  bool all = false;  // --all: findings about the launcher and start-up too
};

// The findings of o.trace on stdout, as text or JSON.
void advise_command(const AdviseOptions& o);

}  // namespace ezio::analysis
