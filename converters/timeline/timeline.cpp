// SPDX-License-Identifier: GPL-2.0-only
#include "converters/timeline/timeline.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <unordered_map>

#include "analysis/model/pagecache.h"
#include "common/error.h"
#include "common/schema/attributes.h"
#include "common/schema/properties.h"

namespace ezio::converters {
namespace {

constexpr std::string_view kCallId = schema::kCallId.name;
constexpr std::string_view kBlockTid = schema::block::kTid.name;

std::optional<Ref> attribute_ref(const analysis::Definitions& defs, std::string_view name) {
  for (const auto& [id, n] : defs.attributes) {
    if (n == name) return id;
  }
  return std::nullopt;
}

std::optional<uint64_t> attribute(const otf2::Event& e, std::optional<Ref> ref) {
  if (!ref) return std::nullopt;
  for (const otf2::Attribute& a : e.attributes) {
    if (a.id != *ref) continue;
    if (auto v = otf2::integer_value(a.type, a.value)) return static_cast<uint64_t>(*v);
  }
  return std::nullopt;
}

BlockOp block_op(uint32_t mode) {
  switch (mode) {
    case OTF2_IO_OPERATION_MODE_READ:
      return BlockOp::kRead;
    case OTF2_IO_OPERATION_MODE_FLUSH:
      return BlockOp::kFlush;
    default:
      return BlockOp::kWrite;
  }
}

// A block request that names the call that caused it.
struct LinkEntry {
  uint64_t call_id;
  OTF2_LocationRef device;
  uint64_t request;
  uint64_t queued;
  BlockOp op;
  bool drawn = false;  // its start was drawn (the call is in the window and selected)
};

struct Window {
  uint64_t lo = 0, hi = UINT64_MAX;
  bool contains(uint64_t t) const { return t >= lo && t <= hi; }
};

// Pass 1: the requests that name a call, sorted by call id for the threads' pass.
class LinkCollector : public otf2::EventVisitor {
 public:
  LinkCollector(const analysis::Definitions& defs, const TimelineOptions& o,
                std::vector<LinkEntry>& out)
      : call_id_(attribute_ref(defs, kCallId)),
        tid_(attribute_ref(defs, kBlockTid)),
        options_(o),
        out_(out) {}
  void event(OTF2_LocationRef loc, const otf2::Event& e) override {
    if (e.kind != otf2::EventKind::IoOperationBegin) return;
    auto call = attribute(e, call_id_);
    if (!call || *call == 0) return;
    if (options_.tid && attribute(e, tid_) != options_.tid) return;
    out_.push_back({*call, loc, e.b, e.time, block_op(e.f1)});
  }

 private:
  std::optional<Ref> call_id_, tid_;
  const TimelineOptions& options_;
  std::vector<LinkEntry>& out_;
};

// Pass 2: each thread's calls, one row per layer; calls that cross the window's edges are cut.
class ThreadWalker : public otf2::EventVisitor {
 public:
  ThreadWalker(const analysis::Definitions& defs, const TimelineOptions& o, Window w,
               std::vector<LinkEntry>& links, TimelineSink& sink)
      : defs_(defs),
        options_(o),
        window_(w),
        call_id_(attribute_ref(defs, kCallId)),
        links_(links),
        sink_(sink) {}

  void begin_location(OTF2_LocationRef loc) override {
    summary_ = {loc, defs_.locations.at(loc).group};
    stack_.clear();
    sink_.location_begin(loc);
  }
  void end_location(OTF2_LocationRef) override {
    for (size_t i = stack_.size(); i-- > 0;) close(stack_[i], std::min(last_, window_.hi));
    stack_.clear();
    sink_.location_end(summary_.location);
    sink_.thread_done(summary_);
  }
  void event(OTF2_LocationRef loc, const otf2::Event& e) override {
    if (e.kind != otf2::EventKind::Enter && e.kind != otf2::EventKind::Leave) return;
    last_ = e.time;
    if (e.time > window_.hi) return;
    if (e.time >= window_.lo) open_pending(loc);
    if (e.kind == otf2::EventKind::Enter) {
      enter(loc, e);
    } else if (!stack_.empty()) {
      close(stack_.back(), e.time);
      stack_.pop_back();
    }
  }

 private:
  struct Frame {
    Ref region;
    Layer layer;
    uint64_t start;
    bool shown;  // a row of this export
    bool open;   // drawn (begun inside the window, or cut at its start)
  };

  void enter(OTF2_LocationRef loc, const otf2::Event& e) {
    auto [layer, shown] = layer_of(e.ref);
    Frame f{e.ref, layer, e.time, shown, false};
    if (shown && window_.contains(e.time)) begin(loc, f, e.time);
    stack_.push_back(f);
    if (layer == Layer::kSyscall && window_.contains(e.time)) start_links(loc, e);
  }
  void begin(OTF2_LocationRef loc, Frame& f, uint64_t time) {
    if (summary_.first == 0 && !summary_.drawn()) summary_.first = time;
    f.open = true;
    f.start = time;
    ++summary_.states[row_index(f.layer)];
    sink_.call_begin(loc, f.layer, time, f.region);
  }
  // The calls begun before the window and still running when it opens are cut at its start.
  void open_pending(OTF2_LocationRef loc) {
    for (Frame& f : stack_) {
      if (f.shown && !f.open) begin(loc, f, window_.lo);
    }
  }
  void close(const Frame& f, uint64_t time) {
    if (f.open)
      sink_.call_end(summary_.location, f.layer, f.start, std::max(time, f.start), f.region);
  }
  void start_links(OTF2_LocationRef loc, const otf2::Event& e) {
    auto call = attribute(e, call_id_);
    if (!call || !options_.has(Layer::kSyscall)) return;
    auto [lo, hi] = std::equal_range(
        links_.begin(), links_.end(), LinkEntry{*call, 0, 0, 0, BlockOp::kRead},
        [](const LinkEntry& a, const LinkEntry& b) { return a.call_id < b.call_id; });
    for (auto it = lo; it != hi; ++it) {
      if (!window_.contains(it->queued)) continue;
      it->drawn = true;
      sink_.link_start(loc, e.time, {it->device, it->request}, it->op);
    }
  }

  // A region's layer and whether it has a row here, parsed from its name once.
  std::pair<Layer, bool> layer_of(Ref region) {
    auto it = layers_.find(region);
    if (it != layers_.end()) return it->second;
    const analysis::RegionDef* r = defs_.region(region);
    Layer layer = r ? analysis::layer_of(r->canonical) : Layer::kUser;
    bool shown = row_index(layer) < kRowLayers.size() && options_.has(layer);
    return layers_[region] = {layer, shown};
  }

  const analysis::Definitions& defs_;
  const TimelineOptions& options_;
  Window window_;
  std::optional<Ref> call_id_;
  std::unordered_map<Ref, std::pair<Layer, bool>> layers_;
  std::vector<LinkEntry>& links_;
  TimelineSink& sink_;
  std::vector<Frame> stack_;
  ThreadSummary summary_{};
  uint64_t last_ = 0;
};

// Pass 3: each device's requests on lanes, a request on the first lane free at its creation.
class DeviceWalker : public otf2::EventVisitor {
 public:
  DeviceWalker(const analysis::Definitions& defs, const TimelineOptions& o, Window w,
               const std::vector<LinkEntry>& links, TimelineSink& sink)
      : options_(o), window_(w), tid_(attribute_ref(defs, kBlockTid)), sink_(sink) {
    for (const LinkEntry& l : links) {
      if (l.drawn) drawn_[l.device].push_back(l.request);
    }
    for (auto& [dev, v] : drawn_) std::sort(v.begin(), v.end());
  }
  void begin_location(OTF2_LocationRef loc) override {
    summary_ = {loc};
    busy_.clear();
    in_flight_.clear();
    last_ = 0;
    sink_.location_begin(loc);
  }
  // Requests still in flight at the end of the window (or of the recording) are cut there.
  void end_location(OTF2_LocationRef loc) override {
    uint64_t end = std::min(last_, window_.hi);
    for (const auto& [id, r] : in_flight_) {
      sink_.request_done(loc, r.lane, r.queued, r.issued ? r.issued : r.queued,
                         std::max(end, r.issued), r.op, 0);
    }
    sink_.location_end(loc);
    sink_.device_done(summary_);
  }
  void event(OTF2_LocationRef loc, const otf2::Event& e) override {
    using K = otf2::EventKind;
    last_ = std::max(last_, e.time);
    if (e.kind == K::IoOperationBegin) {
      queued(loc, e);
      return;
    }
    auto it = in_flight_.find(e.b);
    if (it == in_flight_.end()) return;
    Request& r = it->second;
    if (e.time > window_.hi) return;
    if (e.kind == K::IoOperationIssued) {
      r.issued = e.time;
      sink_.request_issued(loc, r.lane, e.time, r.op);
    } else if (e.kind == K::IoOperationComplete || e.kind == K::IoOperationCancelled) {
      uint64_t bytes = e.kind == K::IoOperationComplete ? e.a : 0;
      sink_.request_done(loc, r.lane, r.queued, r.issued ? r.issued : r.queued, e.time, r.op,
                         bytes);
      busy_[r.lane] = false;
      in_flight_.erase(it);
    }
  }

 private:
  struct Request {
    unsigned lane;
    uint64_t queued, issued;
    BlockOp op;
  };
  void queued(OTF2_LocationRef loc, const otf2::Event& e) {
    if (!window_.contains(e.time)) return;
    if (options_.tid && attribute(e, tid_) != options_.tid) return;
    auto free = std::find(busy_.begin(), busy_.end(), false);
    unsigned lane = static_cast<unsigned>(free - busy_.begin());
    if (free == busy_.end())
      busy_.push_back(true);
    else
      *free = true;
    summary_.lanes = std::max<unsigned>(summary_.lanes, lane + 1);
    if (summary_.requests++ == 0) summary_.first = e.time;
    const auto& drawn = drawn_[loc];
    bool linked = std::binary_search(drawn.begin(), drawn.end(), e.b);
    summary_.links += linked;
    Request r{lane, e.time, 0, block_op(e.f1)};
    in_flight_[e.b] = r;
    sink_.request_queued(loc, lane, e.time, e.b, r.op, linked);
  }

  const TimelineOptions& options_;
  Window window_;
  std::optional<Ref> tid_;
  TimelineSink& sink_;
  std::map<OTF2_LocationRef, std::vector<uint64_t>> drawn_;  // requests whose link was started
  std::vector<bool> busy_;
  std::unordered_map<uint64_t, Request> in_flight_;
  DeviceSummary summary_{};
  uint64_t last_ = 0;
};

// Pass 4: page-cache totals, as the growth of each thread's totals (which the Pajé export adds up
// per process).
class CacheWalker : public otf2::EventVisitor {
 public:
  CacheWalker(const analysis::Definitions& defs, const TimelineOptions& o, Window w,
              TimelineSink& sink)
      : defs_(defs), decoder_(defs), tid_(o.tid), window_(w), sink_(sink) {}
  void begin_location(OTF2_LocationRef loc) override {
    previous_.clear();
    summary_ = {defs_.locations.at(loc).group};
    sink_.location_begin(loc);
  }
  void end_location(OTF2_LocationRef loc) override {
    sink_.location_end(loc);
    if (summary_.first) sink_.cache_done(summary_);
  }
  void event(OTF2_LocationRef loc, const otf2::Event& e) override {
    auto s = decoder_.decode(loc, e);
    if (!s || (tid_ && s->tid != *tid_)) return;
    std::array<uint64_t, kCacheVarCount>& previous = previous_[s->tid];
    std::array<uint64_t, kCacheVarCount> totals{}, growth{};
    for (size_t v = 0; v < kCacheVarCount; ++v) {
      totals[v] = s->totals[cache_var_counter(static_cast<CacheVar>(v))];
      growth[v] = totals[v] > previous[v] ? totals[v] - previous[v] : 0;
    }
    previous = totals;
    if (!window_.contains(e.time)) return;
    if (!summary_.first) summary_.first = e.time;
    sink_.cache_grew(summary_.group, s->tid, e.time, totals, growth);
  }

 private:
  const analysis::Definitions& defs_;
  analysis::PageCacheDecoder decoder_;
  std::optional<uint64_t> tid_;
  Window window_;
  TimelineSink& sink_;
  std::map<uint64_t, std::array<uint64_t, kCacheVarCount>> previous_;  // by thread
  CacheSummary summary_{};
};

}  // namespace

size_t row_index(Layer l) {
  return static_cast<size_t>(std::find(kRowLayers.begin(), kRowLayers.end(), l) -
                             kRowLayers.begin());
}

Timeline::Timeline(const std::filesystem::path& archive, TimelineOptions options)
    : reader_(archive), defs_(analysis::resolve(reader_.defs())), options_(std::move(options)) {}

LocationRole Timeline::role(OTF2_LocationRef loc) const {
  const otf2::Definitions& raw = reader_.defs();
  auto it = raw.locations.find(loc);
  if (it == raw.locations.end()) return LocationRole::kOther;
  if (it->second.type == OTF2_LOCATION_TYPE_METRIC) return LocationRole::kCache;
  if (raw.location_property(loc, schema::kDevMajor)) return LocationRole::kDevice;
  if (it->second.type == OTF2_LOCATION_TYPE_CPU_THREAD) return LocationRole::kThread;
  return LocationRole::kOther;
}

uint64_t Timeline::tid_of(OTF2_LocationRef loc) const {
  auto it = defs_.location_tids.find(loc);
  return it != defs_.location_tids.end() ? it->second : loc;
}

uint64_t Timeline::pid_of(Ref group) const {
  return reader_.defs().group_property(group, schema::kPid).value_or(group);
}

bool Timeline::selected(OTF2_LocationRef loc) const {
  switch (role(loc)) {
    case LocationRole::kThread:
      return !options_.tid || tid_of(loc) == *options_.tid;
    case LocationRole::kCache:
      return options_.has(Layer::kPageCache);  // a process's: its samples name their thread
    case LocationRole::kDevice:
      return options_.has(Layer::kBlock);
    default:
      return false;
  }
}

uint64_t Timeline::estimated_events() const {
  uint64_t total = 0;
  for (const auto& [loc, def] : reader_.defs().locations) {
    if (selected(loc)) total += def.events;
  }
  if (!options_.window || defs_.trace_length == 0) return total;
  double share = static_cast<double>(options_.window->second - options_.window->first) /
                 static_cast<double>(defs_.trace_length);
  return static_cast<uint64_t>(static_cast<double>(total) * std::min(share, 1.0));
}

void Timeline::run(TimelineSink& sink) {
  Window w;
  if (options_.window) w = {options_.window->first, options_.window->second};
  auto only = [this](LocationRole r) {
    otf2::ReadOptions o;
    o.select = [this, r](OTF2_LocationRef loc) { return role(loc) == r && selected(loc); };
    return o;
  };
  std::vector<LinkEntry> links;
  if (options_.has(Layer::kBlock) && options_.has(Layer::kSyscall)) {
    LinkCollector collect(defs_, options_, links);
    reader_.read_events(collect, only(LocationRole::kDevice));
    std::sort(links.begin(), links.end(),
              [](const LinkEntry& a, const LinkEntry& b) { return a.call_id < b.call_id; });
  }
  ThreadWalker threads(defs_, options_, w, links, sink);
  reader_.read_events(threads, only(LocationRole::kThread));
  DeviceWalker devices(defs_, options_, w, links, sink);
  reader_.read_events(devices, only(LocationRole::kDevice));
  CacheWalker cache(defs_, options_, w, sink);
  reader_.read_events(cache, only(LocationRole::kCache));
}

}  // namespace ezio::converters
