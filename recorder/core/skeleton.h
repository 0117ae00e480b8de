// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The BPF skeleton bpftool generates (eziotrace.skel.h) names the record layout's types
// (bpf/record.h) in its declarations without including it: the recorder includes it through this
// header only, so that no file depends on the order of its includes.
#include "record.h"
// After the layout it needs.
#include "eziotrace.skel.h"
