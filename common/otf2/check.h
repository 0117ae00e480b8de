#pragma once
#include <otf2/otf2.h>

#include <string_view>

namespace ezio::otf2 {
// Turns an OTF2 error code into ezio::Error naming the operation that failed.
void check(OTF2_ErrorCode code, std::string_view what);
// For event writes: a failed flush (a full disk) is reported by the event that needed room, and
// OTF2 must not be asked to write to that writer again.
inline void written(OTF2_ErrorCode code) {
  if (code != OTF2_SUCCESS) check(code, "writing events");
}
}  // namespace ezio::otf2
