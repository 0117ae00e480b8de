// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Closing a BPF link waits until the kernel has unhooked the program (docs/costs.md, Teardown);
// closing twenty links one after the other adds those waits up along start-up and teardown. These
// close them all at once, each in its own thread, so the waits overlap.
#include <vector>

struct bpf_link;

namespace ezio::recorder {

// Kprobes are the exception: they are unhooked one after another, before the others, as
// unregistering many kretprobes at once soft-locked both CPUs of Debian's 6.1 kernel in our qemu
// test (docs/qemu-test.md).

// Closes the file descriptors of in_order one after another, then those of fds concurrently, and
// empties both.
void close_concurrently(std::vector<int>& fds, std::vector<int>& in_order);
// Destroys the links of in_order one after another, then those of links concurrently
// (bpf_link__destroy), and empties both.
void destroy_concurrently(std::vector<bpf_link*>& links, std::vector<bpf_link*>& in_order);

}  // namespace ezio::recorder
