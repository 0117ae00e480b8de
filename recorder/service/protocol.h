// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The messages between eziotrace (client) and eziotraced (docs/service.md): one SOCK_SEQPACKET
// datagram each, a fixed header then a JSON body, fds beside it (SCM_RIGHTS): at most one with a
// request, the session's rings (one per CPU, up to kMaxFds) with a WELCOME.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/unique_fd.h"

namespace ezio::recorder::service {

constexpr uint32_t kMagic = 0x4f495a45;  // "EZIO" read as little-endian bytes
// 2: the WELCOME carries one ring buffer per CPU ("rings" fds), not one.
constexpr uint16_t kVersion = 2;
// The most fds a message may carry: a WELCOME's rings (EZIO_MAX_RINGS), far below the kernel's
// SCM_MAX_FD (253).
constexpr size_t kMaxFds = 128;
// Far above any real message (a probe plan is ~3 KiB): larger ones are refused, not read.
constexpr uint32_t kMaxBody = 64 * 1024;

// Client requests, then daemon replies. The order a session follows (the daemon enforces it):
// HELLO -> WELCOME, TRACE -> TRACED, (COUNT -> COUNTED)*, END -> TOTALS. STATUS -> STATE is
// a connection of its own, and so are SNAPSHOT -> SNAPSHOT_DATA and FLIGHT_ADD or FLIGHT_REMOVE ->
// FLIGHT_DONE (docs/flight-recorder.md; root's only). REFUSED answers any request and ends the
// connection. The TRACE may follow its HELLO at once, without
// waiting for the WELCOME: it is answered after it (one round trip less on the way to the
// application's start).
enum class Type : uint16_t {
  kHello = 1,     // {"ring_bytes", "layers" (optional: kAllLayers)}
  kTrace = 2,     // {"pid"} + the child's pidfd
  kCount = 3,     // {}: processes of the session's tree still alive
  kEnd = 5,       // {}
  kStatus = 6,    // {}
  kSnapshot = 7,  // {"job", "seconds" (optional: all kept)}: a flight-recorded job's last seconds
  // {"cgroup", "seconds", "mib" (both optional: eziotraced's --flight-seconds, --flight-mib)}
  kFlightAdd = 8,
  kFlightRemove = 9,  // {"cgroup"}: a job, named as SNAPSHOT names it
  // {"slot", "ring_bytes" (each ring's), "rings", "plan", "kernel_release"} + the rings' fds
  kWelcome = 101,
  kTraced = 102,   // {}
  kCounted = 103,  // {"processes"}
  kTotals = 104,   // {"lost", "devices", "unattributed", "reclaimed"}
  kState = 105,    // {"sessions", "yours", ...}
  // {"job", "cgroup", "owner", "window_start_ns", "window_end_ns", "asked_start_ns", "events",
  // "dropped", "lost", "processes", "plan", "kernel_release"} + a memfd holding the records
  kSnapshotData = 106,
  // {"job", "cgroup_id", "owner", "seconds", "mib", "processes" (those there already;
  // FLIGHT_ADD's)}
  kFlightDone = 107,
  kRefused = 199,  // {"message"}
};
const char* type_name(Type t);

// HELLO's "layers": the layers the session records, bit 1 << EZIO_LAYER_x (bpf/record.h: syscall
// 0, vfs 1, fs 2, pagecache 3, block 4, process 5); the syscall and process layers always are.
constexpr uint64_t kAllLayers = (1u << 6) - 1;
bool known_type(uint16_t t);

struct Header {
  uint32_t magic;
  uint16_t version;
  uint16_t type;
  uint32_t length;  // of the body that follows
};

struct Message {
  Type type{};
  nlohmann::json body;
  std::vector<UniqueFd> fds;  // the fds that came with it, in the order sent
};

// Why a datagram is not a message (the daemon logs it and ends the connection).
struct ProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// A message of another protocol version: the peer is another eziotrace's. Its version is kept, so
// that a refusal can be sent in it (a REFUSED's framing is the same in every version).
struct VersionMismatch : ProtocolError {
  VersionMismatch(const std::string& what, uint16_t peer) : ProtocolError(what), peer(peer) {}
  uint16_t peer;
};

// Sends one message (with fd when >= 0). Fails (ezio::Error) when the peer is gone.
void send_message(int sock, Type type, const nlohmann::json& body, int fd = -1);
// The same with the body serialized already (a JSON object's text), with any number of fds up to
// kMaxFds, framed as protocol `version` (another only for a refusal, VersionMismatch).
void send_text(int sock, Type type, const std::string& body, int fd = -1);
void send_text(int sock, Type type, const std::string& body, const std::vector<int>& fds,
               uint16_t version = kVersion);
// Receives one message, waiting for it. Returns false on EOF (the peer closed). Throws
// ProtocolError for anything that is not one well-formed message of this version: truncated or
// oversized datagrams, a wrong magic or version (VersionMismatch), an unknown type, a body that is
// not a JSON object, more than max_fds fds or other ancillary data. Every fd received is closed
// when it throws.
bool receive_message(int sock, Message& out, size_t max_fds = 1);

// Reads a field of a message body with its type checked (ProtocolError when absent or wrong).
uint64_t field_u64(const nlohmann::json& body, const char* name);
int64_t field_i64(const nlohmann::json& body, const char* name);

}  // namespace ezio::recorder::service
