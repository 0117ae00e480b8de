#pragma once
// A kernel archive written the way docs/trace-model.md says the recorder writes it, built from a
// real EZTrace run: every user call that always reaches the kernel gets its system call strictly
// inside its time span, plus the calls a recording also holds (fsync, EZTrace's own I/O).
#include <filesystem>
#include <vector>

#include "converters/merge.h"

namespace ezio::test {

struct SyntheticCounts {
  size_t syscalls_in_user_calls = 0;
  size_t own_io_calls = 0;  // written on traced threads, to be filtered by the merge
};

SyntheticCounts write_synthetic_kernel(const std::vector<converters::EztraceInput>& inputs,
                                       const std::filesystem::path& dir);

}  // namespace ezio::test
