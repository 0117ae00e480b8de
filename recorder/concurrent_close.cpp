#include "recorder/concurrent_close.h"

#include <bpf/libbpf.h>
#include <unistd.h>

#include <thread>

namespace ezio::recorder {
namespace {

template <typename T, typename Fn>
void each_in_a_thread(std::vector<T>& items, Fn fn) {
  std::vector<std::jthread> threads;
  threads.reserve(items.size());
  for (T item : items) {
    try {
      threads.emplace_back(fn, item);
    } catch (const std::system_error&) {
      fn(item);  // no thread to be had: this one waits its turn
    }
  }
  items.clear();
}  // the jthreads join here

}  // namespace

void close_concurrently(std::vector<int>& fds) {
  each_in_a_thread(fds, [](int fd) { close(fd); });
}

void destroy_concurrently(std::vector<bpf_link*>& links) {
  each_in_a_thread(links, [](bpf_link* l) { bpf_link__destroy(l); });
}

}  // namespace ezio::recorder
