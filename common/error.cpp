// SPDX-License-Identifier: GPL-2.0-only
#include "error.h"

#include <cstring>

namespace ezio {
std::string errno_text(int err) { return std::strerror(err); }
}  // namespace ezio
