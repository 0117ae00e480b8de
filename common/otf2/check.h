#pragma once
#include <otf2/otf2.h>

#include <string_view>

namespace ezio::otf2 {
// Turns an OTF2 error code into ezio::Error naming the operation that failed.
void check(OTF2_ErrorCode code, std::string_view what);
}  // namespace ezio::otf2
