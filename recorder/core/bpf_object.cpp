// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/core/bpf_object.h"

#include <bpf/libbpf.h>

#include <cstdarg>
#include <cstdio>
#include <string>

#include "common/log.h"
#include "recorder/core/skeleton.h"

namespace ezio::recorder {
namespace {

// Called from the threads that open and load the programs' halves too (split_load.h): the log is
// thread-safe (common/log.cpp).
int libbpf_log(enum libbpf_print_level level, const char* fmt, va_list args) {
  // Warnings too at debug level: failures are reported by us, with context.
  if (level != LIBBPF_WARN && level != LIBBPF_INFO) return 0;
  va_list sizing;
  va_copy(sizing, args);
  int n = vsnprintf(nullptr, 0, fmt, sizing);
  va_end(sizing);
  std::string msg(n > 0 ? n : 0, '\0');
  if (n > 0) vsnprintf(msg.data(), msg.size() + 1, fmt, args);
  while (!msg.empty() && msg.back() == '\n') msg.pop_back();
  spdlog::debug("libbpf: {}", msg);
  return 0;
}

}  // namespace

void route_libbpf_logs() { libbpf_set_print(libbpf_log); }

std::string_view bpf_object_elf() {
  size_t size = 0;
  const void* data = eziotrace__elf_bytes(&size);
  return {static_cast<const char*>(data), size};
}

}  // namespace ezio::recorder
