// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/core/clock_sync.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "common/error.h"
#include "common/unique_fd.h"
#include "recorder/core/recording_info.h"

namespace ezio::recorder {

ClockOffset estimate_offset(std::span<const ClockSample> samples) {
  if (samples.empty()) fail("clock offset: no ping-pong round completed");
  std::vector<int64_t> rtts;
  const ClockSample* best = nullptr;
  for (const auto& s : samples) {
    if (s.t2 < s.t0) fail("clock offset: a round came back before it was sent (t2 < t0)");
    rtts.push_back(s.t2 - s.t0);
    if (!best || s.t2 - s.t0 < best->t2 - best->t0) best = &s;
  }
  std::nth_element(rtts.begin(), rtts.begin() + rtts.size() / 2, rtts.end());
  ClockOffset o;
  const int64_t rtt = best->t2 - best->t0;
  o.at_ns = best->t0 + rtt / 2;
  o.offset_ns = best->t1 - o.at_ns;
  o.error_ns = (rtt + 1) / 2;
  o.rtt_min_ns = rtt;
  o.rtt_median_ns = rtts[rtts.size() / 2];
  o.rounds = unsigned(samples.size());
  return o;
}

namespace {

double slope(const ClockMap& m) {  // d(offset) / d(client time)
  const int64_t span = m.end.at_ns - m.start.at_ns;
  if (span == 0) return 0.0;
  return double(m.end.offset_ns - m.start.offset_ns) / double(span);
}

void write_all(int fd, const void* p, size_t n) {
  auto* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = ::send(fd, c, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail("clock ping-pong: send: {}", errno_text(errno));
    c += w;
    n -= size_t(w);
  }
}

bool read_all(int fd, void* p, size_t n) {  // false on a clean end of stream before any byte
  auto* c = static_cast<char*>(p);
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::recv(fd, c + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0 && got == 0) return false;
    if (r <= 0) fail("clock ping-pong: recv: {}", r == 0 ? "connection closed" : errno_text(errno));
    got += size_t(r);
  }
  return true;
}

void no_delay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

UniqueFd connect_to(const std::string& host, uint16_t port, unsigned timeout_s) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  std::string why;
  do {
    addrinfo* res = nullptr;
    int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
    if (rc != 0) fail("clock ping-pong: cannot resolve {}: {}", host, gai_strerror(rc));
    for (addrinfo* a = res; a; a = a->ai_next) {
      UniqueFd fd(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
      if (fd && ::connect(fd.get(), a->ai_addr, a->ai_addrlen) == 0) {
        freeaddrinfo(res);
        no_delay(fd.get());
        return fd;
      }
      why = errno_text(errno);
    }
    freeaddrinfo(res);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  } while (std::chrono::steady_clock::now() < deadline);
  fail("clock ping-pong: cannot connect to {}:{} within {} s: {}", host, port, timeout_s, why);
}

}  // namespace

int64_t ClockMap::server_time(int64_t client_ns) const {
  // OTF2's own interpolation of ClockOffset records (rounded, from the start offset), so that an
  // archive whose readers apply the offsets (merge-hosts' assembly) reads the times the merge
  // would have written.
  const double drift = slope(*this) * double(client_ns - start.at_ns);
  return client_ns + start.offset_ns + int64_t(std::rint(drift));
}

int64_t ClockMap::client_time(int64_t server_ns) const {
  // server = client + o0 + k (client - a0)  =>  client = (server - o0 + k a0) / (1 + k)
  const double k = slope(*this);
  return int64_t((double(server_ns - start.offset_ns) + k * double(start.at_ns)) / (1.0 + k));
}

double ClockMap::drift_ppm() const { return slope(*this) * 1e6; }

int64_t ClockMap::error_ns() const { return std::max(start.error_ns, end.error_ns); }

namespace {

// Answers one client's pings until it closes; false when stop_fd became readable first.
bool answer_pings(int fd, int stop_fd) {
  no_delay(fd);
  pollfd fds[2] = {{fd, POLLIN, 0}, {stop_fd, POLLIN, 0}};
  for (;;) {
    // Waiting for the ping is not timed: the server's time is read after it arrived.
    if (::poll(fds, stop_fd < 0 ? 1 : 2, -1) < 0) {
      if (errno == EINTR) continue;
      fail("clock server: poll: {}", errno_text(errno));
    }
    if (fds[1].revents) return false;
    int64_t ping = 0;
    if (!read_all(fd, &ping, sizeof ping)) return true;
    const int64_t now = int64_t(monotonic_ns());  // as late as possible after the ping arrived
    write_all(fd, &now, sizeof now);
  }
}

}  // namespace

ClockServer::ClockServer(uint16_t port)
    : listen_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)), stop_(::eventfd(0, EFD_CLOEXEC)) {
  if (!listen_ || !stop_) fail("clock server: socket: {}", errno_text(errno));
  int one = 1;
  setsockopt(listen_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  if (::bind(listen_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    fail("clock server: bind to port {}: {}", port, errno_text(errno));
  // Every rank of a job may connect at once: they wait in the backlog, one served at a time.
  if (::listen(listen_.get(), SOMAXCONN) != 0) fail("clock server: listen: {}", errno_text(errno));
  socklen_t len = sizeof addr;
  if (::getsockname(listen_.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    fail("clock server: getsockname: {}", errno_text(errno));
  port_ = ntohs(addr.sin_port);
}

void ClockServer::serve(unsigned connections) {
  pollfd fds[2] = {{listen_.get(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
  unsigned served = 0;
  while (connections == 0 || served < connections) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      fail("clock server: poll: {}", errno_text(errno));
    }
    if (fds[1].revents) return;
    UniqueFd fd(::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!fd) fail("clock server: accept: {}", errno_text(errno));
    if (!answer_pings(fd.get(), stop_.get())) return;
    ++served;
  }
}

void ClockServer::stop() {
  const uint64_t one = 1;
  // A failure leaves the counter already set: the server stops either way.
  [[maybe_unused]] ssize_t w = ::write(stop_.get(), &one, sizeof one);
}

void serve_clock(uint16_t port, unsigned connections) { ClockServer(port).serve(connections); }

ClockOffset measure_clock(const std::string& host, uint16_t port, unsigned rounds,
                          unsigned connect_timeout_s) {
  if (rounds == 0) fail("clock ping-pong: at least one round is needed");
  UniqueFd fd = connect_to(host, port, connect_timeout_s);
  std::vector<ClockSample> samples(rounds);
  for (auto& s : samples) {
    s.t0 = int64_t(monotonic_ns());
    write_all(fd.get(), &s.t0, sizeof s.t0);
    if (!read_all(fd.get(), &s.t1, sizeof s.t1)) fail("clock ping-pong: the server closed early");
    s.t2 = int64_t(monotonic_ns());
  }
  return estimate_offset(samples);
}

}  // namespace ezio::recorder
