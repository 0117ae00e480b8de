#pragma once

namespace ezio::otf2 {

// Makes the zeroed chunks OTF2 allocates for its readers cheap to touch (see chunk_memory.cpp).
// Once per process; call before the first reader opens.
void prepare_chunk_memory();

}  // namespace ezio::otf2
