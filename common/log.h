// SPDX-License-Identifier: GPL-2.0-only
#pragma once
#include <spdlog/spdlog.h>

namespace ezio {
// All diagnostics go to stderr as "eziotrace: <message>", so stdout stays for analyzer output.
void init_logging(bool verbose);
}  // namespace ezio
