#include "common/otf2/check.h"

#include <cstdarg>
#include <cstdio>

#include "common/error.h"

namespace ezio::otf2 {
namespace {

struct Captured {
  std::string first, last;
};
thread_local Captured captured;

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
    : previous_(OTF2_Error_RegisterCallback(remember_error, nullptr)),
      saved_first_(std::move(captured.first)),
      saved_last_(std::move(captured.last)) {
  captured = {};
}

ErrorCapture::~ErrorCapture() {
  OTF2_Error_RegisterCallback(previous_, nullptr);
  captured = {std::move(saved_first_), std::move(saved_last_)};
}

const std::string& ErrorCapture::first() { return captured.first; }
const std::string& ErrorCapture::last() { return captured.last; }

}  // namespace ezio::otf2
