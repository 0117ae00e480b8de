// SPDX-License-Identifier: GPL-2.0-only
#include "converters/timeline/perfetto.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <unordered_map>

#include "common/output_file.h"

namespace ezio::converters {
namespace {

// Track ids: a thread's row is tid * 8 + row (TIDs are below 2^22); devices and their lanes get
// ids of their own above every TID.
constexpr uint64_t kDevicePid = 0x60000000;
uint64_t row_track(uint64_t tid, Layer l) { return tid * 8 + row_index(l); }
uint64_t device_pid(OTF2_LocationRef dev) { return kDevicePid + (dev & 0xffff); }
uint64_t lane_track(OTF2_LocationRef dev, unsigned lane) { return (device_pid(dev) << 8) + lane; }
// Flow ids below 2^53, so that a JavaScript reader keeps them exact.
uint64_t flow_id(LinkKey k) { return ((k.device & 0xfff) << 40) | (k.request & 0xffffffffffULL); }

class PerfettoSink : public TimelineSink {
 public:
  PerfettoSink(const Timeline& t, OutputFile& out) : t_(t), out_(out) {}

  // Microseconds from the start, with the nanoseconds kept as three decimals.
  std::string us(uint64_t ticks) const {
    uint64_t rel = ticks > t_.begin() ? ticks - t_.begin() : 0;
    uint64_t ns = rel * 1'000'000'000 / t_.defs().resolution;
    return fmt::format("{}.{:03}", ns / 1000, ns % 1000);
  }
  void event(const std::string& json) {
    out_.write(first_ ? "\n" : ",\n");
    first_ = false;
    out_.write(json);
  }
  uint64_t pid(OTF2_LocationRef thread) const {
    return t_.pid_of(t_.defs().locations.at(thread).group);
  }

  void call_begin(OTF2_LocationRef, Layer, uint64_t, Ref) override {}
  void call_end(OTF2_LocationRef th, Layer l, uint64_t start, uint64_t end, Ref region) override {
    const analysis::RegionDef* r = t_.defs().region(region);
    std::string name =
        r ? std::string(analysis::short_name(r->canonical)) : fmt::format("region {}", region);
    event(fmt::format(R"({{"ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"name":{},"cat":"{}"}})",
                      pid(th), row_track(t_.tid_of(th), l), us(start), duration(start, end),
                      nlohmann::json(name).dump(), analysis::layer_key(l)));
    ++counts.states;
  }
  void link_start(OTF2_LocationRef th, uint64_t at, LinkKey key, BlockOp op) override {
    event(fmt::format(
        R"({{"ph":"s","id":{},"pid":{},"tid":{},"ts":{},"name":"{} I/O","cat":"link"}})",
        flow_id(key), pid(th), row_track(t_.tid_of(th), Layer::kSyscall), us(at),
        block_op_name(op)));
  }
  void request_queued(OTF2_LocationRef dev, unsigned lane, uint64_t at, uint64_t request,
                      BlockOp op, bool linked) override {
    if (!linked) return;
    event(fmt::format(
        R"({{"ph":"f","bp":"e","id":{},"pid":{},"tid":{},"ts":{},"name":"{} I/O","cat":"link"}})",
        flow_id({dev, request}), device_pid(dev), lane_track(dev, lane), us(at),
        block_op_name(op)));
    ++counts.links;
  }
  void request_issued(OTF2_LocationRef, unsigned, uint64_t, BlockOp) override {}
  void request_done(OTF2_LocationRef dev, unsigned lane, uint64_t queued, uint64_t issued,
                    uint64_t done, BlockOp op, uint64_t bytes) override {
    uint64_t p = device_pid(dev), track = lane_track(dev, lane);
    event(fmt::format(
        R"({{"ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"name":"{}","cat":"block","args":{{"bytes":{}}}}})",
        p, track, us(queued), duration(queued, done), block_op_name(op), bytes));
    event(fmt::format(
        R"({{"ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"name":"in service","cat":"block"}})", p,
        track, us(issued), duration(issued, done)));
    ++counts.requests;
  }
  void cache_grew(Ref group, uint64_t tid, uint64_t at,
                  const std::array<uint64_t, kCacheVarCount>& totals,
                  const std::array<uint64_t, kCacheVarCount>&) override {
    nlohmann::json args;
    for (size_t v = 0; v < kCacheVarCount; ++v)
      args[std::string(cache_var_title(static_cast<CacheVar>(v)))] = totals[v];
    event(fmt::format(R"({{"ph":"C","pid":{},"name":"page cache [{}]","ts":{},"args":{}}})",
                      t_.pid_of(group), tid, us(at), args.dump()));
  }

  void thread_done(const ThreadSummary& s) override {
    if (!s.drawn()) return;
    uint64_t p = pid(s.location), tid = t_.tid_of(s.location);
    name_process(p, t_.defs().location_groups.at(s.group));
    for (size_t r = 0; r < kRowLayers.size(); ++r) {
      if (s.states[r] == 0) continue;
      uint64_t track = row_track(tid, kRowLayers[r]);
      name_track(p, track,
                 fmt::format("{} {}", t_.defs().locations.at(s.location).name,
                             analysis::layer_title(kRowLayers[r])),
                 track);
    }
  }
  void device_done(const DeviceSummary& s) override {
    if (s.requests == 0) return;
    uint64_t p = device_pid(s.location);
    name_process(p, t_.defs().locations.at(s.location).name);
    for (unsigned lane = 0; lane < s.lanes; ++lane) {
      name_track(p, lane_track(s.location, lane), fmt::format("lane {}", lane), lane);
    }
  }

  ExportCounts counts;

 private:
  // A region's name as a JSON string, escaped once.
  const std::string& name_of(Ref region) {
    auto it = names_.find(region);
    if (it != names_.end()) return it->second;
    const analysis::RegionDef* r = t_.defs().region(region);
    std::string name =
        r ? std::string(analysis::short_name(r->canonical)) : fmt::format("region {}", region);
    return names_[region] = nlohmann::json(name).dump();
  }
  std::string duration(uint64_t a, uint64_t b) const {
    return us(t_.begin() + (b > a ? b - a : 0));
  }
  void name_process(uint64_t p, const std::string& name) {
    if (!named_.insert(p).second) return;
    event(fmt::format(R"({{"ph":"M","pid":{},"name":"process_name","args":{{"name":{}}}}})", p,
                      nlohmann::json(name).dump()));
  }
  void name_track(uint64_t p, uint64_t track, const std::string& name, uint64_t order) {
    event(fmt::format(R"({{"ph":"M","pid":{},"tid":{},"name":"thread_name","args":{{"name":{}}}}})",
                      p, track, nlohmann::json(name).dump()));
    event(fmt::format(
        R"({{"ph":"M","pid":{},"tid":{},"name":"thread_sort_index","args":{{"sort_index":{}}}}})",
        p, track, order));
  }
  const Timeline& t_;
  OutputFile& out_;
  bool first_ = true;
  std::set<uint64_t> named_;  // processes, a few
  std::unordered_map<Ref, std::string> names_;
  uint64_t pid_ = 0, tid_ = 0;
};

}  // namespace

ExportCounts export_perfetto(Timeline& timeline, const std::filesystem::path& out, bool force) {
  OutputFile file(out, kPerfettoSignature, force);
  file.write(kPerfettoSignature);
  file.write(fmt::format(R"(,"archive":{}}},"displayTimeUnit":"ns","traceEvents":[)",
                         nlohmann::json(timeline.anchor().string()).dump()));
  PerfettoSink sink(timeline, file);
  timeline.run(sink);
  file.write("\n]}\n");
  file.commit();
  return sink.counts;
}

}  // namespace ezio::converters
