// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// A merged archive of an MPI-IO program, read for the mpiio module's tests: each rank's outermost
// MPI_File_* calls with what happened inside them, the AIO threads' writes, the device's requests
// and the recording's status properties.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/otf2/reader.h"

namespace ezio::test {

// One outermost MPI_File_* call with what happened inside it.
struct MpiioCall {
  std::string name;
  bool has_op = false;
  uint32_t mode = 0, flags = 0;
  uint64_t bytes_request = 0, bytes_result = UINT64_MAX;
  int64_t offset = -1;            // the mpiio.offset attribute, -1 without
  std::set<std::string> nested;   // every region entered inside it (EZTrace's and the kernel's)
  uint64_t enter = 0;             // its ENTER's time
  uint64_t wait_end = 0;          // the end of the first MPI_Wait after it, 0 without
  bool complete_outside = false;  // for `_end`: a completion without a begin inside
  bool completed_after = false;   // its operation completed outside any MPI_File_* call
  std::map<std::string, uint64_t> create_attributes;  // of an IoCreateHandle inside it
};

class MpiioArchive {
 public:
  explicit MpiioArchive(const std::filesystem::path& anchor);

  // The outermost MPI_File_* calls of one location, in order.
  std::vector<MpiioCall> calls(uint64_t location) const;

  // Whether some thread made a pwrite64 system call of these bytes at this offset between t0 and
  // t1 (ROMIO's non-blocking writes go through glibc's POSIX AIO: its own thread writes).
  bool pwrite_between(uint64_t t0, uint64_t t1, int64_t offset, uint64_t bytes) const;

  // How many times location `location` entered region `name`.
  size_t entered(uint64_t location, const std::string& name) const;

  // The block requests recorded on device `dev` ("loop3"): bytes read and written by its requests,
  // and the bytes the recorder counted without a request (EZIOTRACE::UNATTRIBUTED_BYTES).
  struct DeviceBytes {
    uint64_t read = 0, written = 0, unattributed = 0;
  };
  DeviceBytes device_bytes(const std::string& dev) const;

  // A string / UINT64 property of the machine node ("" / nullopt without).
  std::string node_string(const std::string& name) const;
  std::optional<uint64_t> node_uint(const std::string& name) const {
    return a_.defs.node_property(name);
  }

 private:
  bool is_mpiio(uint64_t handle) const;
  void record(MpiioCall& c, const ezio::otf2::Event& e) const;

  ezio::otf2::Archive a_;
};

// Bytes device `dev` read, and wrote or discarded, so far (/sys/block/<dev>/stat).
struct DeviceStat {
  int64_t read = 0, written = 0;
};
DeviceStat device_bytes_served(const std::string& dev);

}  // namespace ezio::test
