// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/service/client.h"

#include <linux/bpf.h>

#include <fstream>

#include "recorder/service/socket.h"

namespace ezio::recorder::service {
namespace {

std::string refusal_text(const Message& m) {
  auto it = m.body.find("message");
  return it != m.body.end() && it->is_string() ? it->get<std::string>()
                                               : "refused, no reason given";
}

// An eziotraced of another version: its messages cannot be read, but what to do can be said.
[[noreturn]] void other_version(const VersionMismatch& e) {
  fail(
      "eziotraced speaks protocol version {} and this eziotrace {}: the service is {} this "
      "eziotrace. Record with the eziotrace installed with it, or restart it after an upgrade "
      "(systemctl restart eziotraced.socket eziotraced.service)",
      e.peer, kVersion, e.peer < kVersion ? "older than" : "newer than");
}

}  // namespace

ServiceClient::ServiceClient(const std::filesystem::path& socket) : sock_(connect_to(socket)) {}

Message ServiceClient::request(Type type, const nlohmann::json& body, Type reply, int fd) {
  send(type, body, fd);
  return receive(type, reply);
}

void ServiceClient::send(Type type, const nlohmann::json& body, int fd) {
  try {
    send_message(sock_.get(), type, body, fd);
  } catch (const Error& e) {
    Message m;
    // A refusal at connection time (not in the group, too many connections) arrives before the
    // request could go out: it is waiting to be read.
    try {
      if (receive_message(sock_.get(), m) && m.type == Type::kRefused) {
        fail("{}", refusal_text(m));
      }
    } catch (const VersionMismatch& v) {
      other_version(v);
    } catch (const ProtocolError&) {
    }
    throw ServiceGone(fmt::format("eziotraced went away ({})", e.what()));
  }
}

// The answer to a request of `type`, which must be `reply` (or REFUSED: fails with its text).
Message ServiceClient::receive(Type type, Type reply) {
  Message m;
  try {
    // A WELCOME carries the session's rings, one per CPU; any other reply one fd at most.
    size_t max_fds = reply == Type::kWelcome ? kMaxFds : 1;
    if (!receive_message(sock_.get(), m, max_fds)) {
      throw ServiceGone("eziotraced closed the connection");
    }
  } catch (const VersionMismatch& e) {
    other_version(e);
  } catch (const ProtocolError& e) {
    fail("eziotraced answered {} with something unreadable: {}", type_name(type), e.what());
  }
  if (m.type == Type::kRefused) fail("{}", refusal_text(m));
  if (m.type != reply) {
    fail("eziotraced answered {} with {} instead of {}", type_name(type), type_name(m.type),
         type_name(reply));
  }
  return m;
}

ServiceClient::Welcome ServiceClient::hello(uint64_t ring_bytes, uint64_t layers) {
  return welcome(
      request(Type::kHello, {{"ring_bytes", ring_bytes}, {"layers", layers}}, Type::kWelcome));
}

ServiceClient::Welcome ServiceClient::hello_and_trace(uint64_t ring_bytes, uint64_t layers,
                                                      pid_t pid, int pidfd) {
  send(Type::kHello, {{"ring_bytes", ring_bytes}, {"layers", layers}});
  send(Type::kTrace, {{"pid", pid}}, pidfd);
  return welcome(receive(Type::kHello, Type::kWelcome));
}

void ServiceClient::traced() { receive(Type::kTrace, Type::kTraced); }

ServiceClient::Welcome ServiceClient::welcome(Message m) {
  Welcome w;
  uint64_t rings = 0;
  try {
    w.slot = unsigned(field_u64(m.body, "slot"));
    w.ring_bytes = field_u64(m.body, "ring_bytes");
    rings = field_u64(m.body, "rings");
  } catch (const ProtocolError& e) {
    fail("eziotraced's WELCOME is unreadable: {}", e.what());
  }
  if (rings == 0 || rings > kMaxFds) {
    fail("eziotraced's WELCOME announces {} ring buffers (1 to {} make sense)", rings, kMaxFds);
  }
  if (m.fds.size() != rings) {
    fail("eziotraced's WELCOME announces {} ring buffers but {} fds came with it", rings,
         m.fds.size());
  }
  if (w.ring_bytes < 4096 || (w.ring_bytes & (w.ring_bytes - 1)) != 0) {
    fail("eziotraced's WELCOME gives ring buffers of {} bytes (not a power of two of pages)",
         w.ring_bytes);
  }
  w.rings = std::move(m.fds);
  w.facts = std::move(m.body);
  return w;
}

void ServiceClient::trace(pid_t pid, int pidfd) {
  request(Type::kTrace, {{"pid", pid}}, Type::kTraced, pidfd);
}

size_t ServiceClient::count() {
  Message m = request(Type::kCount, nlohmann::json::object(), Type::kCounted);
  try {
    return field_u64(m.body, "processes");
  } catch (const ProtocolError& e) {
    fail("eziotraced's COUNTED is unreadable: {}", e.what());
  }
}

nlohmann::json ServiceClient::end() {
  return request(Type::kEnd, nlohmann::json::object(), Type::kTotals).body;
}

nlohmann::json ServiceClient::status() {
  return request(Type::kStatus, nlohmann::json::object(), Type::kState).body;
}

Message ServiceClient::snapshot(const nlohmann::json& body) {
  return request(Type::kSnapshot, body, Type::kSnapshotData);
}

nlohmann::json ServiceClient::flight_add(const nlohmann::json& body) {
  return request(Type::kFlightAdd, body, Type::kFlightDone).body;
}

nlohmann::json ServiceClient::flight_remove(const nlohmann::json& body) {
  return request(Type::kFlightRemove, body, Type::kFlightDone).body;
}

// /proc/self/fdinfo of a BPF map: "map_type:\t27" (BPF_MAP_TYPE_RINGBUF), "max_entries:\tN".
void check_ring_fds(const std::vector<UniqueFd>& rings, uint64_t ring_bytes) {
  for (size_t r = 0; r < rings.size(); ++r) {
    std::ifstream info("/proc/self/fdinfo/" + std::to_string(rings[r].get()));
    long type = -1;
    uint64_t entries = 0;
    for (std::string key; info >> key;) {
      if (key == "map_type:") info >> type;
      if (key == "max_entries:") info >> entries;
    }
    if (type != BPF_MAP_TYPE_RINGBUF || entries != ring_bytes) {
      fail("eziotraced's ring buffer {} of {} is not a ring buffer of {} bytes", r, rings.size(),
           ring_bytes);
    }
  }
}

}  // namespace ezio::recorder::service
