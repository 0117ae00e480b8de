// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Figures of the loaded BPF programs for `record -v`.
#include "recorder/load/split_load.h"

namespace ezio::recorder {

// What the verifier went through (bpf_prog_info.verified_insns), in all and for the syscall
// layer's programs by role; nothing unless debug logging is on.
void log_verified_instructions(const HalfLoaders& loaders);

}  // namespace ezio::recorder
