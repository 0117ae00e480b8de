// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Walks the keys of a BPF hash map from user space (the tables read at the end of a recording).
#include <bpf/bpf.h>

#include <cerrno>
#include <cstdint>

#include "common/error.h"

namespace ezio::recorder {

// Calls fn(key) for every key of a hash map whose keys are Keys. fn must not delete the key it is
// given (the walk would start again from the first): collect, then delete.
template <typename Key = uint32_t, typename Fn>
void for_each_key(int fd, Fn fn) {
  Key key{};
  Key next{};
  const void* prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    fn(next);
    key = next;
    prev = &key;
  }
  if (errno != ENOENT) fail("cannot walk a BPF map: {}", errno_text(errno));
}

}  // namespace ezio::recorder
