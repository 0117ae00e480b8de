// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The kernel types the BPF programs read, cut out of the kernel's BTF by `bpftool gen
// min_core_btf` (BTFGen): handed to libbpf as btf_custom_path, it makes the same CO-RE relocations
// as the full BTF at a fraction of the cost.
#include <filesystem>

namespace ezio::recorder {

// Writes the cut-down BTF of this kernel for the embedded BPF object to `out`; false (with a debug
// message) when it cannot be made or would not be equivalent: with a custom BTF libbpf no longer
// looks into the modules' BTF, so a program type found only in a module rules it out.
bool make_core_btf(const std::filesystem::path& out);

}  // namespace ezio::recorder
