#include "log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace ezio {
void init_logging(bool verbose) {
  auto logger = spdlog::stderr_color_st("eziotrace");
  logger->set_pattern("eziotrace: %^%v%$");
  logger->set_level(verbose ? spdlog::level::debug : spdlog::level::info);
  spdlog::set_default_logger(logger);
}
}  // namespace ezio
