// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The one error-reporting path: code throws ezio::Error with the message the user should read and
// the exit status the process should end with; main() catches it, prints it once, and exits.
#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace ezio {

class Error : public std::runtime_error {
 public:
  explicit Error(std::string message, int exit_code = 1)
      : std::runtime_error(std::move(message)), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format(f, std::forward<Args>(args)...));
}

template <typename... Args>
[[noreturn]] void fail_with(int exit_code, fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format(f, std::forward<Args>(args)...), exit_code);
}

// errno as text, for messages about failed system calls.
std::string errno_text(int err);

}  // namespace ezio
