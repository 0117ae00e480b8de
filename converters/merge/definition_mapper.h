// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Renumbers one input archive's definitions into the merged archive, lazily: only what the
// written events use is defined, densely, and ArchiveWriter de-duplicates what both inputs share
// (strings, regions by canonical name, attributes by name, files by path).
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/otf2/writer.h"
#include "converters/merge/archive_model.h"
#include "converters/merge/comm_mapper.h"

namespace ezio::converters {

// I/O paradigms are shared by identification across the inputs; comms and groups by content;
// files that carry properties (trace model 2's VFS files) by path and properties; regions that
// share a canonical name with another one of a different meaning (model 2's derived VFS
// regions) by canonical name and description.
struct SharedDefinitions {
  otf2::ArchiveWriter& writer;
  otf2::Ref machine;
  CommMapper& comms;
  std::map<std::string, otf2::Ref> io_paradigms;
  std::map<std::string, otf2::Ref> described_files;
  std::map<std::string, otf2::Ref> derived_regions;
};

// An input reference -> its output reference, looked up for every event: a vector for the
// dense low ids archives use, a map for the others.
class RefMap {
 public:
  const otf2::Ref* find(Ref r) const {
    if (r < dense_.size()) return dense_[r] == kUnset ? nullptr : &dense_[r];
    auto it = sparse_.find(r);
    return it == sparse_.end() ? nullptr : &it->second;
  }
  otf2::Ref set(Ref r, otf2::Ref out) {
    if (r < kDense) {
      if (r >= dense_.size()) dense_.resize(r + 1, kUnset);
      return dense_[r] = out;
    }
    return sparse_[r] = out;
  }

 private:
  static constexpr Ref kDense = 1 << 16;
  static constexpr otf2::Ref kUnset = OTF2_UNDEFINED_UINT32;
  std::vector<otf2::Ref> dense_;
  std::map<Ref, otf2::Ref> sparse_;
};

class DefinitionMapper {
 public:
  // file_of_handle: for handles whose IoFile is missing (EZTrace's), the path to tie them to.
  // comm_defs: the definitions registered with shared.comms for this input, when they are a copy
  // of defs' groups and comms (merge-hosts holds only those of every part); default defs.
  DefinitionMapper(const Definitions& defs, SharedDefinitions& shared,
                   std::function<std::optional<std::string>(Ref)> file_of_handle = {},
                   const Definitions* comm_defs = nullptr)
      : defs_(defs),
        comm_defs_(comm_defs ? *comm_defs : defs),
        shared_(shared),
        file_of_handle_(std::move(file_of_handle)) {}

  // Looked up for every event: the tables are read inline, the definition is made once.
  otf2::Ref string(Ref r) { return known(strings_, r, &DefinitionMapper::define_string); }
  otf2::Ref region(Ref r) { return known(regions_, r, &DefinitionMapper::define_region); }
  otf2::Ref attribute(Ref r) { return known(attributes_, r, &DefinitionMapper::define_attribute); }
  otf2::Ref io_paradigm(Ref r);
  otf2::Ref io_file(Ref r) { return known(files_, r, &DefinitionMapper::define_io_file); }
  otf2::Ref io_handle(Ref r) { return known(handles_, r, &DefinitionMapper::define_io_handle); }
  otf2::Ref metric(Ref r);
  otf2::Ref comm(Ref r) { return shared_.comms.comm(comm_defs_, r); }
  // Rewrites an event's attribute list into the writer's reusable list.
  OTF2_AttributeList* attributes(const std::vector<Attribute>& attrs);
  // Writes one event with its references renumbered, at time t.
  void write(OTF2_EvtWriter* w, const Event& e, uint64_t t);

 private:
  otf2::Ref known(const RefMap& map, Ref r, otf2::Ref (DefinitionMapper::*define)(Ref)) {
    const otf2::Ref* out = map.find(r);
    return out ? *out : (this->*define)(r);
  }
  otf2::Ref define_string(Ref r);
  otf2::Ref define_region(Ref r);
  otf2::Ref define_attribute(Ref r);
  otf2::Ref define_io_file(Ref r);
  otf2::Ref define_io_handle(Ref r);
  otf2::Ref derived_region(std::string_view name, const std::string& canonical,
                           std::string_view description, OTF2_RegionRole role);
  OTF2_ErrorCode write_mpi(OTF2_EvtWriter* w, const Event& e, uint64_t t, OTF2_AttributeList* a);

  const Definitions& defs_;
  const Definitions& comm_defs_;
  SharedDefinitions& shared_;
  std::function<std::optional<std::string>(Ref)> file_of_handle_;
  RefMap strings_, regions_, handles_, metrics_, files_, attributes_;
  RefMap handle_files_;  // by input handle: the output file its output handle is on
  // The input's IoFile properties (trace model 2's VFS files) by file: name, value.
  std::map<Ref, std::vector<std::pair<std::string_view, std::string_view>>> file_properties_;
};

}  // namespace ezio::converters
