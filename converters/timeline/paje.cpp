// SPDX-License-Identifier: GPL-2.0-only
#include "converters/timeline/paje.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string>

#include "common/output_file.h"
#include "common/schema/properties.h"
#include "converters/timeline/spool.h"

namespace ezio::converters {
namespace {

// The 18 standard Pajé event definitions, with the fields ViTE and PajeNG expect.
constexpr std::string_view kHeader = R"(%EventDef PajeDefineContainerType 0
% Alias string
% Type string
% Name string
%EndEventDef
%EventDef PajeDefineStateType 1
% Alias string
% Type string
% Name string
%EndEventDef
%EventDef PajeDefineEventType 2
% Alias string
% Type string
% Name string
%EndEventDef
%EventDef PajeDefineVariableType 3
% Alias string
% Type string
% Name string
% Color color
%EndEventDef
%EventDef PajeDefineLinkType 4
% Alias string
% Type string
% StartContainerType string
% EndContainerType string
% Name string
%EndEventDef
%EventDef PajeDefineEntityValue 5
% Alias string
% Type string
% Name string
% Color color
%EndEventDef
%EventDef PajeCreateContainer 6
% Time date
% Alias string
% Type string
% Container string
% Name string
%EndEventDef
%EventDef PajeDestroyContainer 7
% Time date
% Type string
% Name string
%EndEventDef
%EventDef PajeSetState 8
% Time date
% Type string
% Container string
% Value string
%EndEventDef
%EventDef PajePushState 9
% Time date
% Type string
% Container string
% Value string
%EndEventDef
%EventDef PajePopState 10
% Time date
% Type string
% Container string
%EndEventDef
%EventDef PajeResetState 11
% Time date
% Type string
% Container string
%EndEventDef
%EventDef PajeNewEvent 12
% Time date
% Type string
% Container string
% Value string
%EndEventDef
%EventDef PajeSetVariable 13
% Time date
% Type string
% Container string
% Value double
%EndEventDef
%EventDef PajeAddVariable 14
% Time date
% Type string
% Container string
% Value double
%EndEventDef
%EventDef PajeSubVariable 15
% Time date
% Type string
% Container string
% Value double
%EndEventDef
%EventDef PajeStartLink 16
% Time date
% Type string
% Container string
% StartContainer string
% Value string
% Key string
%EndEventDef
%EventDef PajeEndLink 17
% Time date
% Type string
% Container string
% EndContainer string
% Value string
% Key string
%EndEventDef
)";

// Container and type aliases (docs/timeline.md).
std::string paje_string(std::string_view s) {
  std::string q = "\"";
  for (char c : s) q += (c == '"' || c == '\n') ? '\'' : c;
  return q + '"';
}
// ViTE turns a component c into int(c * 256): (v + 0.5) / 256 gives back exactly v.
std::string colour(Rgb c) {
  auto f = [](uint8_t v) { return (v + 0.5) / 256.0; };
  return fmt::format("\"{:.6f} {:.6f} {:.6f}\"", f(c.r), f(c.g), f(c.b));
}
std::string row_alias(OTF2_LocationRef t, Layer l) {
  return fmt::format("t{}_{}", t, analysis::layer_key(l));
}
std::string lane_alias(OTF2_LocationRef d, unsigned lane) { return fmt::format("d{}_{}", d, lane); }
std::string link_key(LinkKey k) { return fmt::format("r{}_{}", k.device, k.request); }
std::string request_value(BlockOp op, bool in_service) {
  return fmt::format("{}{}", in_service ? "s_" : "q_", block_op_name(op));
}

class PajeSink : public TimelineSink {
 public:
  PajeSink(const Timeline& t, Spool& spool) : t_(t), spool_(spool) {}

  std::string time(uint64_t ticks) const {
    uint64_t rel = ticks > t_.begin() ? ticks - t_.begin() : 0;
    uint64_t res = t_.defs().resolution;
    uint64_t ns = (rel % res) * 1'000'000'000 / res;
    return fmt::format("{}.{:09}", rel / res, ns);
  }
  // Each location's lines are one time-ordered segment of the spool.
  void location_begin(OTF2_LocationRef loc) override {
    spool_.begin_segment();
    for (size_t r = 0; r < kRowLayers.size(); ++r) rows_[r] = row_alias(loc, kRowLayers[r]);
  }
  void location_end(OTF2_LocationRef) override { spool_.end_segment(); }
  void line(uint64_t at, std::string s) {
    spool_.add(std::max(at, t_.begin()), s);
    ++counts.lines;
  }

  void call_begin(OTF2_LocationRef, Layer l, uint64_t at, Ref region) override {
    line(at, fmt::format("9 {} ST_Call {} r{}\n", time(at), rows_[row_index(l)], region));
    ++counts.states;
  }
  void call_end(OTF2_LocationRef, Layer l, uint64_t, uint64_t end, Ref) override {
    line(end, fmt::format("10 {} ST_Call {}\n", time(end), rows_[row_index(l)]));
  }
  void link_start(OTF2_LocationRef th, uint64_t at, LinkKey key, BlockOp op) override {
    line(at, fmt::format("16 {} L_{} m {} {} {}\n", time(at), block_op_name(op),
                         row_alias(th, Layer::kSyscall), block_op_name(op), link_key(key)));
  }
  void request_queued(OTF2_LocationRef dev, unsigned lane, uint64_t at, uint64_t request,
                      BlockOp op, bool linked) override {
    std::string lane_name = lane_alias(dev, lane);
    line(at, fmt::format("9 {} ST_Request {} {}\n", time(at), lane_name, request_value(op, false)));
    ++counts.requests;
    if (linked) {
      line(at, fmt::format("17 {} L_{} m {} {} {}\n", time(at), block_op_name(op), lane_name,
                           block_op_name(op), link_key({dev, request})));
      ++counts.links;
    }
  }
  void request_issued(OTF2_LocationRef dev, unsigned lane, uint64_t at, BlockOp op) override {
    std::string lane_name = lane_alias(dev, lane);
    line(at, fmt::format("10 {} ST_Request {}\n9 {} ST_Request {} {}\n", time(at), lane_name,
                         time(at), lane_name, request_value(op, true)));
  }
  void request_done(OTF2_LocationRef dev, unsigned lane, uint64_t, uint64_t, uint64_t done, BlockOp,
                    uint64_t) override {
    line(done, fmt::format("10 {} ST_Request {}\n", time(done), lane_alias(dev, lane)));
  }
  void cache_grew(Ref group, uint64_t, uint64_t at, const std::array<uint64_t, kCacheVarCount>&,
                  const std::array<uint64_t, kCacheVarCount>& growth) override {
    for (size_t v = 0; v < kCacheVarCount; ++v) {
      if (growth[v] == 0) continue;
      line(at, fmt::format("14 {} V_{} p{}_pc {}\n", time(at),
                           cache_var_title(static_cast<CacheVar>(v)), group, growth[v]));
    }
  }

  void thread_done(const ThreadSummary& s) override {
    if (!s.drawn()) return;
    Ref g = s.group;
    note_process(g, s.first);
    const auto& name = t_.defs().locations.at(s.location).name;
    creations_.push_back({s.first, 2,
                          fmt::format("6 {} t{} CT_Thread p{} {}\n", time(s.first), s.location, g,
                                      paje_string(name))});
    for (size_t r = 0; r < kRowLayers.size(); ++r) {
      if (s.states[r] == 0) continue;
      Layer l = kRowLayers[r];
      creations_.push_back(
          {s.first, 3 + r,
           fmt::format("6 {} {} CT_Row t{} {}\n", time(s.first), row_alias(s.location, l),
                       s.location, paje_string(analysis::layer_title(l)))});
    }
  }
  void device_done(const DeviceSummary& s) override {
    if (s.requests == 0) return;
    creations_.push_back({s.first, 1,
                          fmt::format("6 {} d{} CT_Device m {}\n", time(s.first), s.location,
                                      paje_string(t_.defs().locations.at(s.location).name))});
    for (unsigned lane = 0; lane < s.lanes; ++lane) {
      creations_.push_back({s.first, 2,
                            fmt::format("6 {} {} CT_Lane d{} \"lane {}\"\n", time(s.first),
                                        lane_alias(s.location, lane), s.location, lane)});
    }
  }
  void cache_done(const CacheSummary& s) override {
    note_process(s.group, s.first);
    auto [it, fresh] = cache_first_.emplace(s.group, s.first);
    if (!fresh) it->second = std::min(it->second, s.first);
  }

  // Container creations sorted by time, a parent before its children.
  std::vector<std::pair<uint64_t, std::string>> creations() {
    for (const auto& [g, first] : processes_) {
      creations_.push_back({first, 1,
                            fmt::format("6 {} p{} CT_Process m {}\n", time(first), g,
                                        paje_string(t_.defs().location_groups.at(g)))});
    }
    for (const auto& [g, first] : cache_first_) {
      creations_.push_back(
          {first, 2, fmt::format("6 {} p{}_pc CT_Cache p{} \"page cache\"\n", time(first), g, g)});
    }
    std::stable_sort(creations_.begin(), creations_.end(),
                     [](const Creation& a, const Creation& b) {
                       return std::tie(a.time, a.depth) < std::tie(b.time, b.depth);
                     });
    std::vector<std::pair<uint64_t, std::string>> out;
    for (Creation& c : creations_)
      out.emplace_back(std::max(c.time, t_.begin()), std::move(c.text));
    return out;
  }

  ExportCounts counts;

 private:
  struct Creation {
    uint64_t time;
    size_t depth;
    std::string text;
  };
  void note_process(Ref g, uint64_t first) {
    auto [it, fresh] = processes_.emplace(g, first);
    if (!fresh) it->second = std::min(it->second, first);
  }
  const Timeline& t_;
  Spool& spool_;
  std::vector<Creation> creations_;
  std::array<std::string, kRowLayers.size()> rows_;  // row aliases of the location being read
  std::map<Ref, uint64_t> processes_, cache_first_;
};

// Types, entity values (one per region of a row layer, coloured by layer and kind), the
// machine and its run-events container.
std::string definitions(const Timeline& t, const PajeSink& sink) {
  std::string s(kHeader);
  s += fmt::format("{}\n", kPajeSignature);
  s += R"(0 CT_Machine 0 "Machine"
0 CT_Process CT_Machine "Process"
0 CT_Thread CT_Process "Thread"
0 CT_Row CT_Thread "Layer"
0 CT_Cache CT_Process "Page cache"
0 CT_Device CT_Machine "Block device"
0 CT_Lane CT_Device "Lane"
0 CT_Run CT_Machine "Run"
1 ST_Call CT_Row "Call"
1 ST_Request CT_Lane "Block request"
2 E_Run CT_Run "Run event"
)";
  for (size_t v = 0; v < kCacheVarCount; ++v) {
    auto var = static_cast<CacheVar>(v);
    s += fmt::format("3 V_{} CT_Cache {} {}\n", cache_var_title(var),
                     paje_string(fmt::format("pages {}", cache_var_title(var))),
                     colour(cache_var_colour(var)));
  }
  for (size_t o = 0; o < kBlockOpCount; ++o) {
    auto op = static_cast<BlockOp>(o);
    s += fmt::format("4 L_{0} CT_Machine CT_Row CT_Lane \"{0} I/O\"\n", block_op_name(op));
    for (bool service : {false, true}) {
      s += fmt::format("5 {} ST_Request \"{} {}\" {}\n", request_value(op, service),
                       block_op_name(op), service ? "in service" : "queued",
                       colour(request_colour(op, service)));
    }
  }
  for (const auto& [id, r] : t.defs().regions) {
    Layer l = analysis::layer_of(r.canonical);
    if (row_index(l) >= kRowLayers.size()) continue;
    std::string_view name = analysis::short_name(r.canonical);
    s += fmt::format("5 r{} ST_Call {} {}\n", id,
                     paje_string(fmt::format("{}:{}", analysis::layer_key(l), name)),
                     colour(call_colour(l, op_kind_of(name))));
  }
  (void)sink;
  return s;
}

// Start and end of the application, and what was lost, as events of the run. Their values are
// the text itself: ViTE takes entity values for state types only (it complains about others).
void run_events(const Timeline& t, std::vector<std::pair<uint64_t, std::string>>& tail,
                const PajeSink& sink) {
  const auto& props = t.defs().node_string_properties;
  auto end_it = props.find(schema::kApplicationEnd);
  std::string end_text = end_it != props.end() ? end_it->second : "end of the recording";
  uint64_t end = t.end();
  auto event = [&](const std::string& text) {
    tail.push_back({end, fmt::format("12 {} E_Run run {}\n", sink.time(end), paje_string(text))});
  };
  event("application end: " + end_text);
  for (const auto& [name, count] : t.defs().node_uint_properties) {
    if (name.starts_with(schema::kLostPrefix) && count > 0) {
      event(fmt::format("lost {} {} events", count, name.substr(17)));
    }
  }
}

std::string machine_name(const Timeline& t) {
  const auto& nodes = t.raw_defs().nodes;
  return nodes.empty() ? "machine" : t.raw_defs().str(nodes.begin()->second.name);
}

}  // namespace

ExportCounts export_paje(Timeline& timeline, const std::filesystem::path& out, bool force) {
  OutputFile file(out, kPajeSignature, force);
  Spool spool(out.parent_path());
  PajeSink sink(timeline, spool);
  timeline.run(sink);
  std::string defs = definitions(timeline, sink);
  std::vector<std::pair<uint64_t, std::string>> tail;
  run_events(timeline, tail, sink);
  file.write(defs);
  uint64_t begin = timeline.begin();
  auto first = sink.creations();
  first.insert(first.begin(),
               {begin, fmt::format("6 {} run CT_Run m \"run\"\n", sink.time(begin))});
  first.insert(first.begin(), {begin, fmt::format("6 {} m CT_Machine 0 {}\n", sink.time(begin),
                                                  paje_string(machine_name(timeline)))});
  first.insert(first.begin() + 2,
               {begin, fmt::format("12 {} E_Run run \"application start\"\n", sink.time(begin))});
  spool.merge(first, [&](std::string_view l) { file.write(l); });
  for (const auto& [t, l] : tail) file.write(l);
  file.commit();
  return sink.counts;
}

}  // namespace ezio::converters
