// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/service/protocol.h"

#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <vector>

#include "common/error.h"

namespace ezio::recorder::service {
namespace {

// Closes every fd a control message carried, whatever else is wrong with it: a peer must not
// be able to leave fds open in the daemon.
std::vector<UniqueFd> take_fds(msghdr& msg) {
  std::vector<UniqueFd> fds;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < n; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      fds.emplace_back(fd);
    }
  }
  return fds;
}

bool only_rights(msghdr& msg) {
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) return false;
  }
  return true;
}

Header parse_header(const char* data, size_t n) {
  if (n < sizeof(Header)) throw ProtocolError(fmt::format("a message of {} bytes (truncated)", n));
  Header h;
  std::memcpy(&h, data, sizeof(h));
  if (h.magic != kMagic) throw ProtocolError("not an eziotrace message (wrong magic)");
  if (h.version != kVersion) {
    throw VersionMismatch(
        fmt::format("protocol version {}, this end speaks {}", h.version, kVersion), h.version);
  }
  if (!known_type(h.type)) throw ProtocolError(fmt::format("unknown message type {}", h.type));
  if (h.length != n - sizeof(Header)) {
    throw ProtocolError(fmt::format("a {} message says {} bytes of body but has {}",
                                    type_name(Type(h.type)), h.length, n - sizeof(Header)));
  }
  return h;
}

}  // namespace

const char* type_name(Type t) {
  switch (t) {
    case Type::kHello:
      return "HELLO";
    case Type::kTrace:
      return "TRACE";
    case Type::kCount:
      return "COUNT";
    case Type::kEnd:
      return "END";
    case Type::kStatus:
      return "STATUS";
    case Type::kSnapshot:
      return "SNAPSHOT";
    case Type::kFlightAdd:
      return "FLIGHT_ADD";
    case Type::kFlightRemove:
      return "FLIGHT_REMOVE";
    case Type::kWelcome:
      return "WELCOME";
    case Type::kTraced:
      return "TRACED";
    case Type::kCounted:
      return "COUNTED";
    case Type::kTotals:
      return "TOTALS";
    case Type::kState:
      return "STATE";
    case Type::kSnapshotData:
      return "SNAPSHOT_DATA";
    case Type::kFlightDone:
      return "FLIGHT_DONE";
    case Type::kRefused:
      return "REFUSED";
  }
  return "?";
}

bool known_type(uint16_t t) { return std::strcmp(type_name(Type(t)), "?") != 0; }

void send_message(int sock, Type type, const nlohmann::json& body, int fd) {
  send_text(sock, type, body.dump(), fd);
}

void send_text(int sock, Type type, const std::string& text, int fd) {
  send_text(sock, type, text, fd >= 0 ? std::vector<int>{fd} : std::vector<int>{});
}

void send_text(int sock, Type type, const std::string& text, const std::vector<int>& fds,
               uint16_t version) {
  if (text.size() > kMaxBody) fail("internal error: a {} message too large", type_name(type));
  if (fds.size() > kMaxFds) fail("internal error: {} fds with a {}", fds.size(), type_name(type));
  Header h{kMagic, version, uint16_t(type), uint32_t(text.size())};
  std::string data(reinterpret_cast<const char*>(&h), sizeof(h));
  data += text;
  iovec iov{data.data(), data.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) std::array<char, CMSG_SPACE(kMaxFds * sizeof(int))> control{};
  if (!fds.empty()) {
    msg.msg_control = control.data();
    msg.msg_controllen = CMSG_SPACE(fds.size() * sizeof(int));
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(fds.size() * sizeof(int));
    std::memcpy(CMSG_DATA(c), fds.data(), fds.size() * sizeof(int));
  }
  ssize_t n;
  do {
    n = sendmsg(sock, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n != ssize_t(data.size())) {
    fail("cannot send {} to the other end: {}", type_name(type),
         n < 0 ? errno_text(errno) : "short write");
  }
}

bool receive_message(int sock, Message& out, size_t max_fds) {
  std::vector<char> data(sizeof(Header) + kMaxBody);
  iovec iov{data.data(), data.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  // Room for a few fds more than any message carries, so that a peer sending too many is seen
  // (and refused) rather than having the kernel drop the excess silently; beyond that MSG_CTRUNC
  // says so (the kernel closes what did not fit).
  alignas(cmsghdr) std::array<char, CMSG_SPACE((kMaxFds + 8) * sizeof(int))> control{};
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();
  ssize_t n;
  // A peer that closed with our message unread makes the first read fail with ECONNRESET; what
  // it sent before (a refusal) is still there for the next read.
  int resets = 0;
  do {
    n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && (errno == EINTR || (errno == ECONNRESET && resets++ == 0)));
  if (n < 0) {
    if (errno == ECONNRESET) return false;
    throw ProtocolError(fmt::format("cannot receive: {}", errno_text(errno)));
  }
  std::vector<UniqueFd> fds = take_fds(msg);
  if (n == 0 && fds.empty()) return false;
  if (msg.msg_flags & MSG_TRUNC) throw ProtocolError("an oversized message");
  if (msg.msg_flags & MSG_CTRUNC) throw ProtocolError("too much ancillary data");
  if (!only_rights(msg)) throw ProtocolError("ancillary data other than fds");
  if (fds.size() > max_fds) throw ProtocolError(fmt::format("{} fds in one message", fds.size()));
  Header h = parse_header(data.data(), size_t(n));
  out.type = Type(h.type);
  out.fds = std::move(fds);
  out.body = nlohmann::json::parse(data.begin() + sizeof(Header), data.begin() + n, nullptr,
                                   /*allow_exceptions=*/false);
  if (!out.body.is_object()) {
    throw ProtocolError(fmt::format("the body of {} is not a JSON object", type_name(out.type)));
  }
  return true;
}

uint64_t field_u64(const nlohmann::json& body, const char* name) {
  auto it = body.find(name);
  if (it == body.end() || !it->is_number_unsigned()) {
    throw ProtocolError(fmt::format("field \"{}\" missing or not an unsigned integer", name));
  }
  return it->get<uint64_t>();
}

int64_t field_i64(const nlohmann::json& body, const char* name) {
  auto it = body.find(name);
  if (it == body.end() || !it->is_number_integer()) {
    throw ProtocolError(fmt::format("field \"{}\" missing or not an integer", name));
  }
  return it->get<int64_t>();
}

}  // namespace ezio::recorder::service
