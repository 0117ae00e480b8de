// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The OTF2 I/O flags of a call's arguments: open(2) flags and lseek(2) whence.
#include <otf2/otf2.h>

#include <cstdint>

namespace ezio::recorder {

OTF2_IoAccessMode access_mode(uint32_t flags);
OTF2_IoCreationFlag creation_flags(uint32_t flags);
OTF2_IoStatusFlag status_flags(uint32_t flags);
OTF2_IoSeekOption seek_option(uint64_t whence);

}  // namespace ezio::recorder
