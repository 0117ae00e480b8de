// SPDX-License-Identifier: GPL-2.0-only
#include "log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace ezio {
void init_logging(bool verbose) {
  // Thread-safe: the BPF programs' halves load on two threads, libbpf logging from both
  // (recorder/load/split_load.h), while the main thread may log too.
  auto logger = spdlog::stderr_color_mt("eziotrace");
  logger->set_pattern("eziotrace: %^%v%$");
  logger->set_level(verbose ? spdlog::level::debug : spdlog::level::info);
  spdlog::set_default_logger(logger);
}
}  // namespace ezio
