// SPDX-License-Identifier: GPL-2.0-only
#include "figures.h"

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "loop_fs.h"
#include "run.h"

namespace ezio::test {
namespace {

using nlohmann::json;

json analyzer(const std::string& command, const std::filesystem::path& anchor) {
  return json::parse(must_run({EZIO_BIN, command, "--json", anchor.string()}));
}

int64_t number(const json& v) { return v.is_number() ? v.get<int64_t>() : 0; }

// The bytes of the file's row of `layer` in `eziotrace files --json`, 0 without a row.
const json* file_row(const json& files, const std::string& file, const std::string& layer) {
  for (const auto& row : files["files"]) {
    if (row["file"] == file && row["layer"] == layer) return &row;
  }
  return nullptr;
}

const json& layers_row(const json& layers, const std::string& title) {
  for (const auto& row : layers["layers"]) {
    if (row["layer"] == title) return row;
  }
  throw std::runtime_error("no " + title + " row in " + layers.dump());
}

// Requests on the device, as python3-otf2 reads them, and its unattributed bytes.
int64_t device_bytes(const json& dump, const std::string& dev) {
  int64_t bytes = 0;
  for (auto& [ref, loc] : dump["locations"].items()) {
    if (loc["name"] != "block " + dev) continue;
    bytes += number(loc["props"].value("EZIOTRACE::UNATTRIBUTED_BYTES", json()));
    for (const auto& io : loc.value("loose_io", json::array())) {
      if (io["kind"] == "IoOperationBegin") bytes += number(io.value("bytes_request", json()));
    }
  }
  return bytes;
}

// A property of the device's block location, when it has it.
std::optional<int64_t> device_property(const json& dump, const std::string& dev,
                                       const std::string& name) {
  for (auto& [ref, loc] : dump["locations"].items()) {
    if (loc["name"] != "block " + dev || !loc["props"].contains(name)) continue;
    return number(loc["props"][name]);
  }
  return std::nullopt;
}

}  // namespace

Recording analyze(const std::filesystem::path& anchor, const std::string& dev) {
  Recording r;
  r.files = analyzer("files", anchor);
  r.layers = analyzer("layers", anchor);
  json dump = dump_archive(anchor);
  r.fs_probe = dump["properties"].value("EZIOTRACE::PROBE::fs", "");
  r.vfs_probe = dump["properties"].value("EZIOTRACE::PROBE::vfs", "");
  r.device_bytes = device_bytes(dump, dev);
  r.window_start = device_property(dump, dev, "EZIOTRACE::DEVICE_BYTES_AT_START");
  r.window_end = device_property(dump, dev, "EZIOTRACE::DEVICE_BYTES_AT_END");
  return r;
}

json Recording::fs_layer_bytes(bool write) const {
  return layers_row(layers, "FS")[write ? "write_bytes" : "read_bytes"];
}

json Recording::pages_dirtied() const { return layers_row(layers, "Page cache")["writes"]; }

LayerBytes Recording::file(const std::string& file, bool write) const {
  std::string bytes_key = write ? "write_bytes" : "read_bytes";
  std::string count_key = write ? "writes" : "reads";
  LayerBytes b;
  auto bytes_of = [&](const std::string& layer) {
    const json* row = file_row(files, file, layer);
    return row ? number((*row)[bytes_key]) : 0;
  };
  b.syscall = bytes_of("syscall");
  b.vfs = bytes_of("vfs");
  const json* fs = file_row(files, file, "fs");
  if (fs) b.fs_events = number((*fs)[count_key]);
  if (!fs || (*fs)[bytes_key] != "not observed") b.fs = bytes_of("fs");
  return b;
}

int64_t device_stat_bytes(const std::string& dev) {
  std::ifstream in("/sys/block/" + dev + "/stat");
  int64_t v[17] = {};
  for (auto& x : v) {
    if (!(in >> x)) throw std::runtime_error("/sys/block/" + dev + "/stat: fewer than 17 fields");
  }
  // Sectors read, written and discarded (Documentation/block/stat.rst).
  return (v[2] + v[6] + v[13]) * 512;
}

int64_t quiet_device_stat_bytes(const std::string& dev) {
  int64_t before = device_stat_bytes(dev);
  for (int i = 0; i < 50; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    int64_t now = device_stat_bytes(dev);
    if (now == before) return now;
    before = now;
  }
  throw std::runtime_error("/sys/block/" + dev + "/stat: the device never went quiet");
}

}  // namespace ezio::test
