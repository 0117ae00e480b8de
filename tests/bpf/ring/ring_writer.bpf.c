// SPDX-License-Identifier: GPL-2.0-only
// Writes one record of a chosen size into a ring buffer per run (BPF_PROG_TEST_RUN): the bytes are
// what the test put in `payload` beforehand. For the tests of RingReader (ring_reader_test.cpp).
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

#define RING_WRITER_MAX_RECORD 8192

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 65536); /* the test sets its own size before loading */
} ring SEC(".maps");

char payload[RING_WRITER_MAX_RECORD];

struct ring_writer_ask {
	__u32 size;
};

/* Returns bpf_ringbuf_output's result: 0, or -EAGAIN when the ring is full. */
SEC("syscall")
int write_record(struct ring_writer_ask *ask)
{
	__u32 size = ask->size;

	if (size > RING_WRITER_MAX_RECORD)
		return -22;
	return bpf_ringbuf_output(&ring, payload, size, 0);
}
