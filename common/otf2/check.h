// SPDX-License-Identifier: GPL-2.0-only
#pragma once
#include <otf2/otf2.h>

#include <string>
#include <string_view>

namespace ezio::otf2 {
// Turns an OTF2 error code into ezio::Error naming the operation that failed.
void check(OTF2_ErrorCode code, std::string_view what);
// For event writes: a failed flush (a full disk) is reported by the event that needed room, and
// OTF2 must not be asked to write to that writer again.
inline void written(OTF2_ErrorCode code) {
  if (code != OTF2_SUCCESS) check(code, "writing events");
}

// Keeps OTF2's error messages while it lives, instead of letting OTF2 print them: some failures
// reach the caller only this way (OTF2_Archive_Close returns success when the anchor file could
// not be written). Captures nest (the outer one's messages come back when the inner one ends);
// messages are kept per thread, and while any thread captures, OTF2 prints nothing.
class ErrorCapture {
 public:
  ErrorCapture();
  ~ErrorCapture();
  ErrorCapture(const ErrorCapture&) = delete;
  ErrorCapture& operator=(const ErrorCapture&) = delete;
  // The first and the latest message OTF2 reported since the capture began ("" when none).
  static const std::string& first();
  static const std::string& last();

 private:
  std::string saved_first_, saved_last_;
};
}  // namespace ezio::otf2
