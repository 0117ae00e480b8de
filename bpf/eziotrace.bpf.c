// SPDX-License-Identifier: GPL-2.0-only
/* The BPF object of eziotrace: one compilation unit so that all layers share the ring buffer, the
 * drop counters and the target-process table. Each layer lives in its own header. */
#include "common.bpf.h"
#include "syscall.bpf.h"
#include "process.bpf.h"
#include "flight.bpf.h"
#include "vfs.bpf.h"
#include "fs.bpf.h"
#include "block.bpf.h"
#include "pagecache.bpf.h"
