// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The hdf5 module's calls (docs/hdf5.md) read back from a merged or EZTrace archive: each
// outermost H5* region of a location with the HDF5 events and attributes it holds and what was
// called inside it.
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/otf2/reader.h"

namespace ezio::test {

struct Hdf5Call {
  std::string name;
  std::map<std::string, std::string> enter;   // string attributes of its ENTER
  std::map<std::string, std::string> leave;   // string attributes of its LEAVE
  std::map<std::string, std::string> op;      // string attributes of its IoOperationBegin
  std::map<std::string, uint64_t> op_number;  // integer attributes of its IoOperationBegin
  std::map<std::string, uint64_t> enter_number;
  bool has_op = false;
  uint32_t mode = 0, flags = 0;
  uint64_t bytes_request = 0, bytes_result = UINT64_MAX;
  std::string handle_path;            // the HDF5 IoHandle's file, of its operation or creation
  bool created_handle = false;        // an HDF5 IoCreateHandle inside it
  bool destroyed_handle = false;      // an HDF5 IoDestroyHandle inside it
  std::map<std::string, int> nested;  // regions entered inside it, by name, how often
  uint64_t posix_write_bytes = 0;     // bytes EZTrace's pwrite/write calls inside it moved
  uint64_t syscall_write_bytes = 0;   // bytes of the pwrite64/write system calls inside it
  // The same, of the writes made inside an MPI_File_* call inside it.
  uint64_t posix_write_bytes_in_mpiio = 0;
  uint64_t syscall_write_bytes_in_mpiio = 0;

  // How often `region` was entered inside it.
  int inside(const std::string& region) const {
    auto it = nested.find(region);
    return it == nested.end() ? 0 : it->second;
  }
};

class Hdf5Archive {
 public:
  explicit Hdf5Archive(const std::filesystem::path& anchor);

  // The outermost H5* calls of one location, in order.
  std::vector<Hdf5Call> calls(uint64_t location) const;
  const std::map<OTF2_LocationRef, std::vector<ezio::otf2::Event>>& events() const {
    return a_.events;
  }
  const ezio::otf2::Definitions& defs() const { return a_.defs; }
  // A STRING property of the system tree node (EZIOTRACE::STATUS...), empty when absent.
  std::string node_string(const std::string& name) const;

 private:
  bool of_paradigm(uint64_t handle, const char* paradigm) const;
  // An HDF5 object's handle (a child of its file's on the same IoFile, named by the path).
  bool object_handle(uint64_t handle) const;
  // What a transfer on an object's handle says without attributes: the path (its name), the
  // layout (said by the handle's first transfer) and the transfer mode (its flag), as the
  // attributes they replace.
  void object_attributes(const ezio::otf2::Event& e, Hdf5Call& c) const;
  void attributes(const ezio::otf2::Event& e, std::map<std::string, std::string>& strings,
                  std::map<std::string, uint64_t>* numbers) const;
  void nested_event(Hdf5Call& c, const ezio::otf2::Event& e, const std::string& region,
                    bool in_mpiio) const;

  ezio::otf2::Archive a_;
  // By object handle: the attributes of its transfer that said its layout.
  std::map<uint64_t, std::map<std::string, std::string>> layouts_;
  std::map<uint64_t, std::map<std::string, uint64_t>> layout_numbers_;
};

// How often each name occurs.
std::map<std::string, int> count_names(const std::vector<Hdf5Call>& calls);

}  // namespace ezio::test
