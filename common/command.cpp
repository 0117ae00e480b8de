// SPDX-License-Identifier: GPL-2.0-only
#include "common/command.h"

namespace ezio {
int& command_status() {
  static int status = 0;
  return status;
}
}  // namespace ezio
