#include "analysis/observed.h"

namespace ezio::analysis {

LayerObservation layer_observation(const Definitions& defs, Layer layer, bool events_seen) {
  LayerObservation o;
  if (layer == Layer::kUser) {
    bool eztrace = defs.node_uint_properties.contains("EZIOTRACE::EZTRACE_PROCESSES");
    o.observed = eztrace || events_seen;
    if (o.observed) o.probe = "EZTrace";
    return o;
  }
  auto it = defs.node_string_properties.find("EZIOTRACE::PROBE::" + std::string(layer_key(layer)));
  if (it == defs.node_string_properties.end()) {
    o.observed = events_seen;
    return o;
  }
  const std::string& v = it->second;
  auto open = v.rfind(" (");
  if (open != std::string::npos && v.ends_with(")")) {
    o.probe = v.substr(0, open);
    o.accuracy = v.substr(open + 2, v.size() - open - 3);
  } else {
    o.probe = v;
  }
  o.observed = o.accuracy != "none";
  return o;
}

}  // namespace ezio::analysis
