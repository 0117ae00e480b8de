// SPDX-License-Identifier: GPL-2.0-only
/* The program generators of the hook table (bpf/hooks.h): from one line, the programs of every
 * kind of hook that can serve it, written once here for all layers.
 *
 * An exact hook (a kernel function) gets four programs, of which the recorder loads one pair
 * (recorder/probe/probe.cpp): fentry/fexit, else kprobe/kretprobe, for kernels that have kprobes
 * but refuse fentry (no BPF trampoline on that kernel, architecture or configuration, or a policy
 * that forbids it). Both pairs run the same handlers on the same arguments, so the records, their
 * real entry and exit times and their nesting are the same; never both pairs, as a call seen twice
 * would be recorded twice. A kretprobe only sees the return value: what the exit needs besides it
 * comes from the entry's pending record, keyed by thread (VFS) or thread and operation (FS), so the
 * fexit program hands the exit what it sees (`seen`, the struct file for the VFS) and the kretprobe
 * hands 0.
 *
 * A shape says how a hook is called: EZIO_<shape>_PARAMS, the kernel function's (or tracepoint's)
 * parameters, all of them (fexit's return value comes after the last), EZIO_<shape>_RET its return
 * type, EZIO_<shape>_ENTRY(op) the handler call on those parameters, EZIO_<shape>_SEEN (below);
 * the layers define theirs (bpf/vfs.bpf.h, bpf/fs.bpf.h) next to the handlers. */
#ifndef EZIO_VARIANTS_BPF_H
#define EZIO_VARIANTS_BPF_H

/* Not common.bpf.h: the metrics' object (no rings, no sessions) uses these generators too. */
#include "vmlinux.h"
/* After vmlinux.h, whose types they use. */
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "hooks.h"

/* BPF_PROG and BPF_KPROBE paste their parameter list (", ##args"), which leaves a macro naming
 * it unexpanded when they count the parameters: these expand it first. */
#define EZIO_BPF_PROG(...) BPF_PROG(__VA_ARGS__)
#define EZIO_BPF_KPROBE(...) BPF_KPROBE(__VA_ARGS__)
#define EZIO_BPF_KRETPROBE(...) BPF_KRETPROBE(__VA_ARGS__)

/* name: the programs' stem; fn: the kernel function; op: the event (enum value); shape: its
 * parameters, return type and entry handler (above), and EZIO_<shape>_SEEN, what the fexit program
 * hands the exit besides the return value; exit(op, seen, ret): the layer's exit handler. */
#define EZIO_EXACT_PROGS(name, ...) EZIO_EXACT_PROGS_(name, __VA_ARGS__) /* name expanded */
#define EZIO_EXACT_PROGS_(name, fn, op, shape, exit) \
  EZIO_FENTRY_PROGS_(name, fn, op, shape, exit)      \
  EZIO_KPROBE_PROGS_(name, fn, op, shape, exit)

/* The fentry/fexit pair alone, for a user that falls back to tracepoints, not kprobes (the
 * metrics' FS layer: bpf/metrics_fs.bpf.h). */
#define EZIO_FENTRY_PROGS(name, ...) EZIO_FENTRY_PROGS_(name, __VA_ARGS__)
#define EZIO_FENTRY_PROGS_(name, fn, op, shape, exit)                             \
  SEC("fentry/" #fn)                                                              \
  int EZIO_BPF_PROG(name##_entry, EZIO_##shape##_PARAMS) {                        \
    EZIO_##shape##_ENTRY(op);                                                     \
    return 0;                                                                     \
  }                                                                               \
  SEC("fexit/" #fn)                                                               \
  int EZIO_BPF_PROG(name##_exit, EZIO_##shape##_PARAMS, EZIO_##shape##_RET ret) { \
    exit(op, EZIO_##shape##_SEEN, ret);                                           \
    return 0;                                                                     \
  }

#define EZIO_KPROBE_PROGS_(name, fn, op, shape, exit)                \
  SEC("kprobe/" #fn)                                                 \
  int EZIO_BPF_KPROBE(name##_kprobe, EZIO_##shape##_PARAMS) {        \
    EZIO_##shape##_ENTRY(op);                                        \
    return 0;                                                        \
  }                                                                  \
  SEC("kretprobe/" #fn)                                              \
  int EZIO_BPF_KRETPROBE(name##_kretprobe, EZIO_##shape##_RET ret) { \
    exit(op, 0, ret);                                                \
    return 0;                                                        \
  }

/* A tracepoint's one program, as tp_btf (typed arguments, no tracefs needed): the shape's entry
 * handler on its arguments. */
#define EZIO_TP_PROG(name, tp, op, shape)          \
  SEC("tp_btf/" #tp)                               \
  int EZIO_BPF_PROG(name, EZIO_##shape##_PARAMS) { \
    EZIO_##shape##_ENTRY(op);                      \
    return 0;                                      \
  }

#endif
