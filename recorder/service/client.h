// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// eziotrace's side of the protocol (protocol.h): one connection, one session.
#include <sys/types.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/error.h"
#include "common/unique_fd.h"
#include "recorder/service/protocol.h"

namespace ezio::recorder::service {

// The service closed the connection (it stopped or died): what it recorded so far stays in the
// ring buffer, readable through its fd.
struct ServiceGone : Error {
  using Error::Error;
};

class ServiceClient {
 public:
  explicit ServiceClient(const std::filesystem::path& socket);
  struct Welcome {
    unsigned slot = 0;
    uint64_t ring_bytes = 0;  // each ring's
    // One per CPU: records written on CPU c are in rings[c % rings.size()].
    std::vector<UniqueFd> rings;
    nlohmann::json facts;  // the whole WELCOME body: "plan", "kernel_release"...
  };
  // Opens a session recording `layers` (protocol.h kAllLayers); fails with the service's refusal
  // (limits, group).
  Welcome hello(uint64_t ring_bytes, uint64_t layers = kAllLayers);
  // Asks the service to trace our child (stopped before its exec) by its pidfd.
  void trace(pid_t pid, int pidfd);
  // hello() with trace()'s request sent at once after it, without waiting for the WELCOME (one
  // round trip less): fails as hello() does; traced() then takes the TRACE's answer, and fails
  // as trace() does.
  Welcome hello_and_trace(uint64_t ring_bytes, uint64_t layers, pid_t pid, int pidfd);
  void traced();
  size_t count();
  // Ends the session: the TOTALS body (totals_json.h).
  nlohmann::json end();
  nlohmann::json status();
  // A flight-recorded job's snapshot (protocol.h SNAPSHOT): the SNAPSHOT_DATA, its fd the records.
  Message snapshot(const nlohmann::json& request);
  // Adds or removes a flight-recorded job (protocol.h FLIGHT_ADD, FLIGHT_REMOVE; root's): the
  // FLIGHT_DONE body.
  nlohmann::json flight_add(const nlohmann::json& request);
  nlohmann::json flight_remove(const nlohmann::json& request);
  int fd() const { return sock_.get(); }

 private:
  Message request(Type type, const nlohmann::json& body, Type reply, int fd = -1);
  void send(Type type, const nlohmann::json& body, int fd = -1);
  Message receive(Type type, Type reply);
  Welcome welcome(Message m);
  UniqueFd sock_;
};

// Fails unless every fd is a BPF ring buffer of ring_bytes: what a WELCOME sent, checked before
// anything is mapped (an fd of another kind would be mapped as a ring and read).
void check_ring_fds(const std::vector<UniqueFd>& rings, uint64_t ring_bytes);

}  // namespace ezio::recorder::service
