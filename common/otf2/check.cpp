#include "common/otf2/check.h"

#include "common/error.h"

namespace ezio::otf2 {
void check(OTF2_ErrorCode code, std::string_view what) {
  if (code != OTF2_SUCCESS) {
    fail("OTF2: {} failed: {} ({})", what, OTF2_Error_GetName(code),
         OTF2_Error_GetDescription(code));
  }
}
}  // namespace ezio::otf2
