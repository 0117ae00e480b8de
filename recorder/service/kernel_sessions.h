// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The daemon's SessionKernel over the programs loaded once (KernelPrograms, recorder/load/).
#include <memory>
#include <string>

#include "recorder/service/daemon.h"

namespace ezio::recorder::service {

// Probes the hooks of `layers` (--layers syntax) as `eziotrace record` does and loads the
// programs for every session to come; SessionKernel::attach() hooks them.
std::unique_ptr<SessionKernel> load_kernel_sessions(const std::string& layers);

}  // namespace ezio::recorder::service
