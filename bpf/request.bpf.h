// SPDX-License-Identifier: GPL-2.0-only
/* Block requests as the kernel holds them: their device, whether they ask for a cache flush. No
 * maps: shared by the recorder's block layer (block.bpf.h) and the always-on metrics
 * (metrics.bpf.c). */
#ifndef EZIO_REQUEST_BPF_H
#define EZIO_REQUEST_BPF_H

#include "vmlinux.h"
/* After the kernel's types, which it uses. */
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#define EZIO_REQ_OP_MASK 0xff

static __always_inline __u32 rq_dev(struct request* rq) {
  struct block_device* part = BPF_CORE_READ(rq, part);
  if (part) return BPF_CORE_READ(part, bd_dev);
  return BPF_CORE_READ(rq, q, disk, part0, bd_dev);
}

static __always_inline bool rq_wants_flush(__u32 cmd_flags) {
  __u32 preflush = 1u << bpf_core_enum_value(enum req_flag_bits, __REQ_PREFLUSH);
  __u32 fua = 1u << bpf_core_enum_value(enum req_flag_bits, __REQ_FUA);
  return (cmd_flags & EZIO_REQ_OP_MASK) == REQ_OP_FLUSH || (cmd_flags & (preflush | fua));
}

#endif
