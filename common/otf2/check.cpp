// SPDX-License-Identifier: GPL-2.0-only
#include "common/otf2/check.h"

#include <cstdarg>
#include <cstdio>
#include <mutex>

#include "common/error.h"

namespace ezio::otf2 {
namespace {

struct Captured {
  std::string first, last;
};
thread_local Captured captured;

// OTF2's error callback is one for the process: the first capture on any thread installs it, the
// last one to end puts OTF2's back (threads that capture at once, the merge's readers, would
// otherwise restore each other's callback mid-read). Messages stay per thread.
std::mutex install_mutex;
int installed = 0;
OTF2_ErrorCallback original = nullptr;

OTF2_ErrorCode remember_error(void*, const char*, uint64_t, const char*, OTF2_ErrorCode code,
                              const char* format, va_list va) {
  char buf[512];
  std::vsnprintf(buf, sizeof buf, format, va);
  // As OTF2 prints it: the code says what failed ("No space left on device"), the text where.
  std::string message = fmt::format("{}: {}", OTF2_Error_GetDescription(code), buf);
  if (captured.first.empty()) captured.first = message;
  captured.last = std::move(message);
  return code;
}

}  // namespace

void check(OTF2_ErrorCode code, std::string_view what) {
  if (code != OTF2_SUCCESS) {
    fail("OTF2: {} failed: {} ({})", what, OTF2_Error_GetName(code),
         OTF2_Error_GetDescription(code));
  }
}

ErrorCapture::ErrorCapture()
    : saved_first_(std::move(captured.first)), saved_last_(std::move(captured.last)) {
  captured = {};
  std::lock_guard lock(install_mutex);
  if (installed++ == 0) original = OTF2_Error_RegisterCallback(remember_error, nullptr);
}

ErrorCapture::~ErrorCapture() {
  {
    std::lock_guard lock(install_mutex);
    if (--installed == 0) OTF2_Error_RegisterCallback(original, nullptr);
  }
  captured = {std::move(saved_first_), std::move(saved_last_)};
}

const std::string& ErrorCapture::first() { return captured.first; }
const std::string& ErrorCapture::last() { return captured.last; }

}  // namespace ezio::otf2
