// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Subcommands are CLI11 callbacks; each stores the exit status of the process here.
namespace ezio {
int& command_status();
}  // namespace ezio
