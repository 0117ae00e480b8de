// SPDX-License-Identifier: GPL-2.0-only
#pragma once

namespace ezio::otf2 {

// Makes the chunks OTF2 allocates and zeroes for its readers and writers cheap to touch (see
// chunk_memory.cpp). Once per process; call before the first archive opens.
void prepare_chunk_memory();

}  // namespace ezio::otf2
