#pragma once
// Closing a BPF link waits until the kernel has unhooked the program (about 15 ms per link on the
// 6.18 kernels here); closing twenty links one after the other adds those waits up to a third of a
// second of start-up and teardown. These close them all at once, each in its own thread, so the
// waits overlap.
#include <vector>

struct bpf_link;

namespace ezio::recorder {

// Closes every file descriptor of fds, concurrently, and empties fds.
void close_concurrently(std::vector<int>& fds);
// Destroys every link of links (bpf_link__destroy), concurrently, and empties links.
void destroy_concurrently(std::vector<bpf_link*>& links);

}  // namespace ezio::recorder
