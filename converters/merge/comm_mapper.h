// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// EZTrace's groups and communicators, repaired and renumbered into the merged archive.
//
// EZTrace writes them sloppily: in MPI mode every rank's definitions land in one file with
// colliding ids (two comms 0, two groups 1, ...), and even a non-MPI run has two groups 0 and two
// comms 0. Their members are EZTrace location ids, which the merge replaces by kernel TIDs. This
// keeps what events and IoHandles refer to, renumbered densely and de-duplicated by content:
// - a reference from an event (MPI communicator, thread contingent) means the first definition
//   of that id: EZTrace defines MPI_COMM_WORLD first, the duplicates come later;
// - an IoHandle's comm means the latest definition of that id before the handle (EZTrace
//   defines MPI_Comm_Self right before its first handle, reusing id 0 in non-MPI runs);
// - a comm's group is the latest group of that id defined before the comm.
// OTF2 wants one COMM_LOCATIONS group per paradigm, whose order gives the ranks: the inputs'
// COMM_LOCATIONS groups are concatenated, and the rank members of each input's COMM_GROUPs are
// shifted by where its locations start. Unless the inputs are one job's ranks seen from several
// hosts (merge-hosts' parts: each lists every rank of the job, its own ranks as locations of its
// own, the others' as locations it only names): then rank i of the one COMM_LOCATIONS group is
// the location of the one input that holds rank i, every input's COMM_GROUPs keep their ranks,
// and one job's communicator is written once, whatever each part names it or numbers it: a
// communicator is known by its ranks, its parent, and its place among the part's communicators of
// the same ranks and parent (MPI creates communicators collectively, in one order on every
// member), so that MPI_COMM_WORLD, an MPI_Comm_dup or an MPI_Comm_split's piece that the hosts'
// parts define under other names or ids is one communicator, written as the first part names it.
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/otf2/writer.h"
#include "converters/merge/archive_model.h"

namespace ezio::converters {

// The location group the one-node merge gives a rank of EZTrace's communicators whose process
// left it no alignment data (locations.cpp): in a host's part of a multi-host job, a rank of
// another host, which merge-hosts recognises by this name.
std::string stand_in_group_name(uint64_t eztrace_location);
bool is_stand_in_group(const std::string& name);

class CommMapper {
 public:
  explicit CommMapper(otf2::ArchiveWriter& w) : w_(w) {}

  // Registers an input archive, in input order. elsewhere: the members of its COMM_LOCATIONS
  // groups it only names, whose location is another input's (docs/cluster.md, "One job's
  // communicators"); empty: it holds every rank it lists.
  void add_archive(const Definitions& defs, const std::set<uint64_t>& elsewhere = {});
  // Defines the COMM_LOCATIONS groups; location maps an input's EZTrace location to the merged
  // archive's location of that thread. Once, after add_archive() and before any mapping: OTF2
  // readers want it defined before the groups whose ranks it gives.
  void define_locations(
      const std::function<OTF2_LocationRef(const Definitions&, uint64_t)>& location);
  // An event's comm id (first definition), OTF2_UNDEFINED_COMM for an unknown id.
  otf2::Ref comm(const Definitions& defs, Ref id);
  // A definition by its index in defs.comms (SIZE_MAX: undefined).
  otf2::Ref comm_at(const Definitions& defs, size_t index);
  // A group id referenced from an attribute (first definition).
  otf2::Ref group(const Definitions& defs, Ref id);

  size_t comms_written() const { return comm_ids_.size(); }
  size_t groups_written() const { return group_ids_.size() + locations_written_; }

 private:
  struct Input {
    // Per paradigm: this input's COMM_LOCATIONS members and where its ranks start.
    std::map<OTF2_Paradigm, std::vector<uint64_t>> locations;
    std::map<OTF2_Paradigm, uint64_t> rank_base;
    std::map<size_t, otf2::Ref> comms, groups;  // by index into defs.comms / defs.groups
    std::set<size_t> visiting;                  // comms being mapped: breaks parent cycles
    // Per comm of a paradigm that is one job's: what it is known by across the parts (empty:
    // mapped by content, as in a single input).
    std::vector<std::vector<uint64_t>> identity;
  };
  using GroupKey = std::tuple<std::string, int, int, int, std::vector<uint64_t>>;
  struct Locations {
    std::string name;
    struct Part {
      const Definitions* defs;
      std::vector<uint64_t> members;
      std::vector<bool> held;  // per member: the input holds that rank's location
    };
    std::vector<Part> parts;
  };
  // Whether the inputs' COMM_LOCATIONS groups of a paradigm are one job's ranks: as many ranks
  // in each, every rank held by one input at most.
  static bool one_job(const Locations& all);
  Input& input(const Definitions& defs);  // registered, and locations defined
  otf2::Ref group_at(const Definitions& defs, size_t index);
  GroupKey group_key(const Definitions& defs, const Input& in, size_t index) const;
  // Input::identity of every comm of every input; and which comm defines each identity first.
  void identify_job_comms();

  otf2::ArchiveWriter& w_;
  std::map<const Definitions*, Input> inputs_;
  std::vector<const Definitions*> order_;  // as registered
  std::map<OTF2_Paradigm, Locations> locations_;
  std::map<GroupKey, otf2::Ref> group_ids_;
  std::set<OTF2_Paradigm> one_job_;  // paradigms whose inputs are one job's ranks
  std::map<std::vector<uint64_t>, std::pair<const Definitions*, size_t>> first_;  // by identity
  std::map<std::tuple<std::string, otf2::Ref, otf2::Ref>, otf2::Ref> comm_ids_;
  size_t locations_written_ = 0;
  std::map<OTF2_Paradigm, std::pair<otf2::Ref, uint64_t>> located_ids_;  // COMM_LOCATIONS, size
  bool located_ = false;
};

}  // namespace ezio::converters
