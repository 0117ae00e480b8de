// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Causality of MPI messages (docs/cluster.md, "Checks on the result"): EZTrace's MPI events give
// both ends of each point-to-point message (MpiSend/MpiIsend with the receiver's rank, MpiRecv/
// MpiIrecv with the sender's, both with communicator and tag). Sends are paired with receives per
// communicator, sender rank, receiver rank and tag, in order (MPI's non-overtaking rule). A message
// whose receive ended before its send started was received before it was sent: on one host that
// cannot happen, across hosts it means their clocks are misaligned by more than the message took.
//
// A send starts when the MPI call around its event was entered, a receive ends when the call
// around its event (MPI_Recv, MPI_Wait...) was left; an event outside any call is its own time.
// Communicators are identified by name and size, not by reference: merge-hosts keeps each host's
// communicators apart (its MPI_COMM_WORLD is the job's), and a rank is a location's position in its
// communicator's members. Memory: one entry per message, until the end of the archive.
#include <otf2/otf2.h>

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "common/otf2/definitions.h"
#include "common/otf2/events.h"

namespace ezio::analysis {

// The messages between one pair of hosts (the same host twice for messages within a host).
struct MessagePair {
  std::string sender_host, receiver_host;
  uint64_t messages = 0;         // sends paired with a receive
  uint64_t received_before = 0;  // of which the receive ended before the send started
  uint64_t worst_ns = 0;         // the largest such gap (send start - receive end)
};

struct MessageSummary {
  std::vector<MessagePair> pairs;  // sorted by sender host, then receiver host
  uint64_t unmatched_sends = 0, unmatched_receives = 0;
  uint64_t unresolved = 0;  // events whose communicator or own rank could not be found
  uint64_t messages() const;
  uint64_t violations() const;
};

// Fed with an archive's events location by location (otf2::ArchiveReader::read_events).
class MessageCheck : public otf2::EventVisitor {
 public:
  explicit MessageCheck(const otf2::Definitions& defs);
  void begin_location(OTF2_LocationRef loc) override;
  void event(OTF2_LocationRef loc, const otf2::Event& e) override;
  void end_location(OTF2_LocationRef loc) override;
  // Pairs what was read; call once, after the events.
  MessageSummary finish();

 private:
  struct Comm {
    std::string name;
    std::vector<uint64_t> members;  // locations, in rank order
  };
  // (communicator name, size, sender rank, receiver rank, tag)
  using Key = std::tuple<std::string, size_t, uint64_t, uint64_t, uint32_t>;
  struct End {
    uint64_t time;
    uint32_t host;  // index into hosts_
  };
  struct Queue {
    std::vector<End> sends, receives;
  };
  struct PendingReceive {
    size_t depth;  // calls open around its event
    Queue* queue;
    size_t index;  // into queue->receives
  };
  const Comm* comm(otf2::Ref id);
  void message(OTF2_LocationRef loc, const otf2::Event& e, bool send);
  uint32_t host_index(OTF2_LocationRef loc);

  const otf2::Definitions& defs_;
  std::map<otf2::Ref, Comm> comms_;  // resolved on first use
  std::map<Key, Queue> queues_;
  std::vector<std::string> hosts_;
  std::vector<uint64_t> open_;  // enter times of the calls open on the location being read
  std::vector<PendingReceive> pending_;
  uint32_t host_ = 0;
  uint64_t unresolved_ = 0;
};

// The host (system-tree node) of a location in the archive's own definitions; "" when unknown.
std::string location_host(const otf2::Definitions& defs, OTF2_LocationRef loc);

}  // namespace ezio::analysis
