// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// What a recording could observe, per layer and operation, read from the hooks the recorder wrote
// into the archive (EZIOTRACE::PROBE::<layer>): a count of 0 where the kernel offered no hook is
// "not observed", not "none happened" (docs/kernel-layers.md, "What each layer observes").
#include <cstdint>
#include <map>
#include <string>

#include "analysis/model/definitions.h"
#include "analysis/model/layer.h"

namespace ezio::analysis {

enum class Observed {
  kUnknown,  // the archive says nothing (EZTrace's own, or older than the PROBE properties)
  kAll,
  kPartial,  // some of the kind only (one file system's tracepoints, direct I/O only…)
  kNone,     // the layer was not recorded, or no hook saw this kind of operation
};

// props: the archive's string properties of the machine (Definitions::node_string_properties).
// HDF5 and MPI-IO are kUnknown here: what says whether they were recorded is in the definitions.
Observed observed(const std::map<std::string, std::string>& props, Layer layer, Op op);
// The same for every layer: HDF5 and MPI-IO are kAll when the archive defines their IoParadigm
// or regions (their module was loaded), kNone otherwise: a layer absent from the recording is
// "not observed", not 0.
Observed observed(const Definitions& defs, Layer layer, Op op);

// A count of 0 that no hook (or only some hooks) could have made larger is shown as "not
// observed", never as 0.
inline bool shown_as_not_observed(uint64_t count, Observed seen) {
  return count == 0 && (seen == Observed::kNone || seen == Observed::kPartial);
}

// A whole layer, for views that show one verdict per layer (the report's funnel).
struct LayerObservation {
  bool observed = false;
  std::string probe;  // the hook used ("tp_btf/sys_enter+sys_exit"), "EZTrace", or ""
  std::string
      accuracy;  // exact, derived, mixed, partial, none, or "" when the archive says nothing
};

// Observed when observed() sees any of its operations, or when the archive says nothing
// (kUnknown: EZTrace's own archive, an older recording) and the trace holds events of the layer
// (`events_seen`); events seen always count as observed.
LayerObservation layer_observation(const Definitions& defs, Layer layer, bool events_seen);

}  // namespace ezio::analysis
