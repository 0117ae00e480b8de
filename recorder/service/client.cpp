// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/service/client.h"

#include "recorder/service/socket.h"

namespace ezio::recorder::service {
namespace {

std::string refusal_text(const Message& m) {
  auto it = m.body.find("message");
  return it != m.body.end() && it->is_string() ? it->get<std::string>()
                                               : "refused, no reason given";
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
    } catch (const ProtocolError&) {
    }
    throw ServiceGone(fmt::format("eziotraced went away ({})", e.what()));
  }
}

// The answer to a request of `type`, which must be `reply` (or REFUSED: fails with its text).
Message ServiceClient::receive(Type type, Type reply) {
  Message m;
  try {
    if (!receive_message(sock_.get(), m)) throw ServiceGone("eziotraced closed the connection");
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
  if (!m.fd) fail("eziotraced sent no ring buffer");
  Welcome w;
  try {
    w.slot = unsigned(field_u64(m.body, "slot"));
    w.ring_bytes = field_u64(m.body, "ring_bytes");
  } catch (const ProtocolError& e) {
    fail("eziotraced's WELCOME is unreadable: {}", e.what());
  }
  w.ring = std::move(m.fd);
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

}  // namespace ezio::recorder::service
