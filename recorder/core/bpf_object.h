// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The embedded BPF object and libbpf, as every stage of the recorder uses them: the probe cuts the
// kernel's BTF down to the object's types (recorder/probe/core_btf.h), load opens it.
#include <string_view>

namespace ezio::recorder {

// The embedded BPF object (ELF), as the skeleton loads it.
std::string_view bpf_object_elf();

// Routes libbpf's messages to our log (debug level).
void route_libbpf_logs();

}  // namespace ezio::recorder
