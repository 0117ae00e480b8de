#pragma once
// Whether the recording could observe a layer at all, so that a layer it could not see is shown as
// "not observed" rather than as zero operations.
#include <string>

#include "analysis/definitions.h"
#include "analysis/layer.h"

namespace ezio::analysis {

struct LayerObservation {
  bool observed = false;
  std::string probe;  // the hook used ("tp_btf/sys_enter+sys_exit"), "EZTrace", or ""
  std::string
      accuracy;  // exact, derived, mixed, partial, none, or "" when the archive says nothing
};

// From `EZIOTRACE::PROBE::<layer>` (docs/trace-model.md): observed unless its accuracy is `none`.
// A layer without that property (not selected with --layers, or a plain EZTrace archive) is
// observed only if the trace holds events of it (`events_seen`). The user layer is EZTrace's.
LayerObservation layer_observation(const Definitions& defs, Layer layer, bool events_seen);

}  // namespace ezio::analysis
