// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/core/concurrent_close.h"

#include <bpf/libbpf.h>
#include <unistd.h>

#include <thread>

namespace ezio::recorder {
namespace {

template <typename T, typename Fn>
void each_in_a_thread(std::vector<T>& items, std::vector<T>& in_order, Fn fn) {
  std::vector<std::jthread> threads;
  threads.reserve(items.size() + 1);
  auto start = [&threads](auto&& work) {
    try {
      threads.emplace_back(work);
    } catch (const std::system_error&) {
      work();  // no thread to be had: this one waits its turn
    }
  };
  for (T item : in_order) fn(item);  // first, and alone: nothing else is unhooked meanwhile
  for (T item : items) start([item, fn] { fn(item); });
  threads.clear();  // the jthreads join here
  items.clear();
  in_order.clear();
}

}  // namespace

void close_concurrently(std::vector<int>& fds, std::vector<int>& in_order) {
  each_in_a_thread(fds, in_order, [](int fd) { close(fd); });
}

void destroy_concurrently(std::vector<bpf_link*>& links, std::vector<bpf_link*>& in_order) {
  each_in_a_thread(links, in_order, [](bpf_link* l) { bpf_link__destroy(l); });
}

}  // namespace ezio::recorder
