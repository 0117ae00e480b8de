// SPDX-License-Identifier: GPL-2.0-only
#include "kernel_trace.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace ezio::test {

using nlohmann::json;

long value_of(const std::string& out, const std::string& key) {
  auto at = out.find(key + "=");
  if (at == std::string::npos)
    throw std::runtime_error("workload did not print " + key + ": " + out);
  return std::stol(out.substr(at + key.size() + 1));
}

std::filesystem::path trace_dir(const LoopFs& fs) {
  return fs.mount_point().parent_path() / "trace";
}

json read_trace(const LoopFs& fs) {
  json dump = ezio::test::dump_archive(trace_dir(fs) / "eziotrace.otf2");
  json t = {{"block", json::array()},
            {"unattributed", json::object()},
            {"unattributed_bytes", json::object()},
            {"pagecache", json::object()},
            {"calls", json::object()},
            {"properties", dump["properties"]},
            {"files", dump["files"]},
            {"writes", json::object()}};
  auto count_write = [&](const json& io) {
    if (io["kind"] == "IoOperationBegin" && io.value("mode", "") == "IoOperationMode.WRITE" &&
        io.contains("file")) {
      t["writes"][io["file"].get<std::string>()] = t["writes"].value(io["file"], 0) + 1;
    }
  };
  for (auto& [ref, loc] : dump["locations"].items()) {
    std::string name = loc["name"];
    if (loc["props"].contains("EZIOTRACE::UNATTRIBUTED_REQUESTS")) {
      t["unattributed"][name] = loc["props"]["EZIOTRACE::UNATTRIBUTED_REQUESTS"];
      t["unattributed_bytes"][name] = loc["props"]["EZIOTRACE::UNATTRIBUTED_BYTES"];
      t["not_issued"][name] = loc["props"].value("EZIOTRACE::NOT_ISSUED_REQUESTS", json());
    }
    for (const auto& io : loc.value("loose_io", json::array())) {
      if (!name.starts_with("block ")) {
        count_write(io);
      } else if (io["kind"] == "IoOperationBegin") {
        t["block"].push_back({{"device", name.substr(6)},
                              {"pid", io["block.pid"]},
                              {"tid", io["block.tid"]},
                              {"call_id", io["call.id"]},
                              {"op", io["block.op"]},
                              {"flags", io["block.flags"]},
                              {"cause", io["block.cause"]},
                              {"shared_bytes", io["block.shared_bytes"]},
                              {"bytes", io["bytes_request"]},
                              {"sector", io["block.sector"]}});
      }
    }
    for (const auto& call : loc["calls"]) {
      for (const auto& io : call["io"]) count_write(io);
      if (call.contains("call.id")) {
        t["calls"][std::to_string(call["call.id"].get<uint64_t>())] = {
            {"tid", loc["props"].value("EZIOTRACE::TID", 0)}, {"region", call["name"]}};
      }
    }
    if (!loc.contains("metrics") || !name.starts_with("pagecache ")) continue;
    // The process's pages absorbed (its one member) are its threads' hits and dirtied pages.
    long absorbed = 0;
    for (auto& [tid, counters] : loc["metrics"]["threads"].items()) {
      json thread = {{"reclaimed", loc["props"].value("EZIOTRACE::RECLAIMED_PAGES", 0)}};
      for (auto& [k, v] : counters.items()) thread["pagecache." + k] = v;
      absorbed += counters["hits"].get<long>() + counters["dirtied"].get<long>();
      t["pagecache"][tid] = thread;
    }
    EXPECT_EQ(loc["metrics"]["members"], json::array({"pagecache.absorbed"})) << name;
    EXPECT_EQ(loc["metrics"]["last"][0].get<long>(), absorbed) << name;
  }
  return t;
}

Run record_command(const LoopFs& fs, const std::vector<std::string>& options,
                   const std::vector<std::string>& command) {
  std::vector<std::string> argv{EZIO_RECORDER, "record", "-f", "-o", trace_dir(fs).string()};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  Run r = run(argv);
  if (r.status != 0) throw std::runtime_error("eziotrace record failed: " + r.err + r.out);
  return r;
}

Recording record(const LoopFs& fs, const std::vector<std::string>& args) {
  std::vector<std::string> command{EZIO_WORKLOAD};
  command.insert(command.end(), args.begin(), args.end());
  Run r = record_command(fs, {}, command);
  Recording rec;
  rec.tid = value_of(r.out, "tid");
  if (r.out.find("stat_ios=") != std::string::npos) rec.stat_ios = value_of(r.out, "stat_ios");
  rec.trace = read_trace(fs);
  rec.out = r.out;
  return rec;
}

json layers_row(const LoopFs& fs, const std::string& layer) {
  json j = json::parse(
      must_run({EZIO_RECORDER, "layers", "--json", (trace_dir(fs) / "eziotrace.otf2").string()}));
  for (const auto& row : j["layers"]) {
    if (row["layer"] == layer) return row;
  }
  throw std::runtime_error("no " + layer + " row in " + j.dump());
}

void workload(const std::vector<std::string>& args) {
  std::vector<std::string> argv{EZIO_WORKLOAD};
  argv.insert(argv.end(), args.begin(), args.end());
  must_run(argv);
}

std::vector<json> requests(const json& trace, const std::string& op) {
  std::vector<json> out;
  for (const auto& b : trace["block"]) {
    if (b["op"] == op) out.push_back(b);
  }
  return out;
}

json pagecache_of(const Recording& r) {
  auto key = std::to_string(r.tid);
  if (!r.trace["pagecache"].contains(key)) throw std::runtime_error("no page-cache counters");
  return r.trace["pagecache"][key];
}

}  // namespace ezio::test
