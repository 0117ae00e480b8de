#include "converters/kernel_spans.h"

namespace ezio::converters {

std::vector<Span> cut_spans(const Definitions& defs, const std::vector<Event>& events) {
  std::vector<Span> spans;
  int depth = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    if (depth == 0) {
      Span s;
      s.begin = i;
      s.t0 = e.time;
      if (e.kind == EventKind::Enter) {
        if (auto r = defs.regions.find(e.ref); r != defs.regions.end()) {
          s.call = defs.str(r->second.canonical);
        }
      }
      spans.push_back(s);
    }
    if (e.kind == EventKind::Enter) ++depth;
    if (e.kind == EventKind::Leave && depth > 0) --depth;
    if (depth == 0) {
      spans.back().end = i + 1;
      spans.back().t1 = e.time;
    }
  }
  // A span left open at the end of the location (a call still running) ends with its last event.
  if (!spans.empty() && spans.back().end == 0) {
    spans.back().end = events.size();
    spans.back().t1 = events.back().time;
  }
  return spans;
}

}  // namespace ezio::converters
