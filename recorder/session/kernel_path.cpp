// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/session/kernel_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "common/log.h"
#include "recorder/service/service_source.h"
#include "recorder/service/socket.h"

namespace ezio::recorder::service {
namespace {

bool is_socket(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

// A socket, or a path this user may not look into: the service is tried, and its refusal says
// which directory is in the way (socket_access.h) instead of the in-process path's "ask for the
// service".
bool socket_or_hidden(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) return S_ISSOCK(st.st_mode);
  return errno == EACCES;
}

std::unique_ptr<KernelSource> through_service(const RecordOptions& o, const std::string& socket,
                                              uint64_t ring_bytes, RecordStore& store,
                                              FirstProcess first) {
  return std::make_unique<ServiceSource>(socket, ring_bytes, parse_layers(o.layers), store, first);
}

}  // namespace

namespace {

// The one decision of which path is tried first. --no-probe-cache asks for the kernel to be
// probed now: only this process can, so it keeps an automatic choice out of the service.
bool tries_service(const RecordOptions& o, const std::string& socket) {
  using Path = RecordOptions::KernelPath;
  return o.kernel_path == Path::kService ||
         (o.kernel_path == Path::kAuto && o.probe_cache && socket_or_hidden(socket));
}

std::string socket_of(const RecordOptions& o) {
  return o.service_socket.empty() ? kDefaultSocket : o.service_socket;
}

}  // namespace

bool goes_in_process(const RecordOptions& o) { return !tries_service(o, socket_of(o)); }

std::unique_ptr<KernelSource> open_service_or(
    const RecordOptions& o, uint64_t ring_bytes, RecordStore& store, FirstProcess first,
    const std::function<std::unique_ptr<KernelSource>()>& in_process) {
  using Path = RecordOptions::KernelPath;
  std::string socket = socket_of(o);
  if (o.kernel_path == Path::kService) {
    // The service's programs were loaded once, at its start, from its own probing.
    if (!o.probe_cache) {
      fail(
          "--no-probe-cache cannot apply through eziotraced: its programs were loaded when it "
          "started (restart it to probe again, or record with --no-service)");
    }
    return through_service(o, socket, ring_bytes, store, first);
  }
  // A user who cannot look into the socket's directory cannot tell a running service from a
  // directory an older version left closed: both reasons are said when neither path records.
  std::string service_refusal;
  if (tries_service(o, socket)) {
    try {
      return through_service(o, socket, ring_bytes, store, first);
    } catch (const Error& e) {
      if (geteuid() != 0 && is_socket(socket)) throw;
      if (geteuid() != 0) {
        service_refusal = e.what();
      } else {
        spdlog::warn("{}; recording without it (--no-service does so from the start)", e.what());
      }
    }
  }
  try {
    return in_process();
  } catch (const Error& e) {
    if (geteuid() == 0 || o.kernel_path == Path::kInProcess) throw;
    if (!service_refusal.empty()) {
      fail_with(e.exit_code(), "{} And through the recording service: {}.", e.what(),
                service_refusal);
    }
    if (!o.probe_cache && is_socket(socket)) {
      fail_with(e.exit_code(),
                "{} (--no-probe-cache records without eziotraced, whose programs were loaded when "
                "it started; without --no-probe-cache, eziotraced records for you)",
                e.what());
    }
    fail_with(e.exit_code(),
              "{} Or record through the recording service: ask your administrator for eziotraced "
              "(`sudo eziotrace service install`) and membership of group {} (docs/service.md).",
              e.what(), kDefaultGroup);
  }
}

}  // namespace ezio::recorder::service
