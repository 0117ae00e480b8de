// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Applies a ProbePlan to the opened (not yet loaded) BPF skeleton: unchosen programs get
// autoload=false, the derived VFS mode is switched on or off.
struct eziotrace;

namespace ezio::recorder {

struct ProbePlan;
void apply_probe_plan(eziotrace* skel, const ProbePlan& plan);

}  // namespace ezio::recorder
