// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/metrics/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "common/error.h"
#include "common/log.h"

namespace ezio::recorder::metrics {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMaxHead = 8192;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string answer(int code, const char* reason, const std::string& type, const std::string& body,
                   bool head_only = false, const char* extra = "") {
  return fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n{}\r\n{}",
      code, reason, type, body.size(), extra, head_only ? "" : body);
}

std::string plain(int code, const char* reason, const char* extra = "") {
  return answer(code, reason, "text/plain; charset=utf-8", fmt::format("{}\n", reason), false,
                extra);
}

// The answer to a request head (up to its empty line).
std::string respond(const std::string& head, const MetricsServer::Scrape& scrape) {
  size_t eol = head.find('\n');
  std::string line = head.substr(0, eol);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  size_t sp1 = line.find(' '), sp2 = line.rfind(' ');
  if (sp1 == std::string::npos || sp2 == sp1 || line.compare(sp2 + 1, 5, "HTTP/") != 0) {
    return plain(400, "Bad Request");
  }
  std::string method = line.substr(0, sp1);
  std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  target = target.substr(0, target.find('?'));
  if (method != "GET" && method != "HEAD")
    return plain(405, "Method Not Allowed", "Allow: GET\r\n");
  if (target != "/metrics") return plain(404, "Not Found");
  std::string headers = lower(head.substr(eol == std::string::npos ? head.size() : eol));
  size_t accept = headers.find("\naccept:");
  bool om = accept != std::string::npos &&
            headers.substr(accept, headers.find('\n', accept + 1) - accept)
                    .find("application/openmetrics-text") != std::string::npos;
  Format f = om ? Format::kOpenMetrics : Format::kPrometheus;
  try {
    return answer(200, "OK", content_type(f), scrape(f), method == "HEAD");
  } catch (const std::exception& e) {
    spdlog::warn("metrics: scrape failed: {}", e.what());
    return plain(500, "Internal Server Error");
  }
}

void write_textfile(const std::string& path, const std::string& text) {
  // Written beside it, then renamed: node_exporter never reads half a file.
  std::string tmp = fmt::format("{}.{}.tmp", path, getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out.flush()) {
      spdlog::warn("metrics: cannot write {}", tmp);
      std::remove(tmp.c_str());
      return;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    spdlog::warn("metrics: cannot rename {} to {}: {}", tmp, path, errno_text(errno));
    std::remove(tmp.c_str());
  }
}

void watch(int epoll, int fd, uint32_t events, bool modify = false) {
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  epoll_ctl(epoll, modify ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev);
}

}  // namespace

ListenAddress parse_listen(const std::string& spec) {
  ListenAddress a{"127.0.0.1", 0};
  std::string port = spec;
  if (size_t colon = spec.rfind(':'); colon != std::string::npos) {
    a.addr = spec.substr(0, colon);
    port = spec.substr(colon + 1);
    in_addr probe{};
    if (inet_pton(AF_INET, a.addr.c_str(), &probe) != 1) {
      fail_with(2, "{}: {} is not an IPv4 address", spec, a.addr);
    }
  }
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value > 65535) {
    fail_with(2, "{}: expected [ADDR:]PORT, PORT from 0 to 65535", spec);
  }
  a.port = uint16_t(value);
  return a;
}

struct MetricsServer::Loop {
  struct Conn {
    UniqueFd fd;
    std::string in, out;
    size_t sent = 0;
    Clock::time_point deadline;
  };
  explicit Loop(MetricsServer& s) : server(s) {}
  MetricsServer& server;
  UniqueFd epoll{epoll_create1(EPOLL_CLOEXEC)};
  std::map<int, Conn> conns;

  // At the bound, newcomers wait in the listen backlog (the socket is not watched) until a
  // connection ends: answered late, never refused by us; the idle ones end at their deadline.
  bool accepting = true;
  void accepting_if(bool want) {
    if (want == accepting) return;
    accepting = want;
    if (want) {
      watch(epoll.get(), server.listen_.get(), EPOLLIN);
    } else {
      epoll_ctl(epoll.get(), EPOLL_CTL_DEL, server.listen_.get(), nullptr);
    }
  }

  void accept_all() {
    while (conns.size() < server.config_.max_connections) {
      UniqueFd fd(accept4(server.listen_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
      if (!fd) break;  // EAGAIN, or a connection reset before it was taken
      int key = fd.get();
      watch(epoll.get(), key, EPOLLIN | EPOLLRDHUP);
      conns[key] = Conn{std::move(fd), {}, {}, 0, Clock::now() + server.config_.client_deadline};
    }
    accepting_if(conns.size() < server.config_.max_connections);
  }

  void drop(int fd) {
    epoll_ctl(epoll.get(), EPOLL_CTL_DEL, fd, nullptr);
    conns.erase(fd);
    if (server.listen_) accepting_if(true);
  }

  void readable(int fd, Conn& c) {
    char buf[4096];
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return drop(fd);
    if (n < 0) return;
    c.in.append(buf, size_t(n));
    size_t end = c.in.find("\r\n\r\n");
    if (end == std::string::npos) end = c.in.find("\n\n");
    if (end == std::string::npos && c.in.size() <= kMaxHead) return;
    c.out = end == std::string::npos || end > kMaxHead
                ? plain(431, "Request Header Fields Too Large")
                : respond(c.in.substr(0, end), server.scrape_);
    c.in.clear();
    watch(epoll.get(), fd, EPOLLOUT, true);
    writable(fd, c);
  }

  void writable(int fd, Conn& c) {
    while (c.sent < c.out.size()) {
      ssize_t n = send(fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
      if (n <= 0) return drop(fd);
      c.sent += size_t(n);
    }
    shutdown(fd, SHUT_WR);
    drop(fd);
  }

  // Connections past their deadline are closed; the time until the next one, in ms.
  int expire(Clock::time_point now) {
    Clock::time_point next = Clock::time_point::max();
    for (auto it = conns.begin(); it != conns.end();) {
      if (it->second.deadline <= now) {
        epoll_ctl(epoll.get(), EPOLL_CTL_DEL, it->first, nullptr);
        it = conns.erase(it);
        if (server.listen_) accepting_if(true);
      } else {
        next = std::min(next, it->second.deadline);
        ++it;
      }
    }
    if (next == Clock::time_point::max()) return -1;
    return int(std::chrono::ceil<std::chrono::milliseconds>(next - now).count());
  }
};

MetricsServer::MetricsServer(const ServerConfig& config, Scrape scrape)
    : config_(config), scrape_(std::move(scrape)), stop_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (!stop_) fail("eventfd: {}", errno_text(errno));
  if (config.listen.empty()) return;
  ListenAddress a = parse_listen(config.listen);
  listen_ = UniqueFd(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!listen_) fail("socket: {}", errno_text(errno));
  int one = 1;
  setsockopt(listen_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(a.port);
  inet_pton(AF_INET, a.addr.c_str(), &sa.sin_addr);
  if (bind(listen_.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    fail("cannot serve the metrics at {}:{}: {}", a.addr, a.port, errno_text(errno));
  }
  if (listen(listen_.get(), 64) != 0) fail("listen: {}", errno_text(errno));
  socklen_t len = sizeof sa;
  getsockname(listen_.get(), reinterpret_cast<sockaddr*>(&sa), &len);
  port_ = ntohs(sa.sin_port);
}

MetricsServer::~MetricsServer() {
  if (!thread_.joinable()) return;
  uint64_t one = 1;
  (void)!write(stop_.get(), &one, sizeof one);
  thread_.join();
}

void MetricsServer::start() {
  thread_ = std::thread([this] {
    // The daemon takes its signals through a signalfd: none of them is this thread's.
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    try {
      run();
    } catch (const std::exception& e) {
      spdlog::error("metrics: the server stopped: {}", e.what());
    }
  });
}

void MetricsServer::run() {
  Loop loop(*this);
  if (!loop.epoll) fail("epoll_create1: {}", errno_text(errno));
  watch(loop.epoll.get(), stop_.get(), EPOLLIN);
  if (listen_) watch(loop.epoll.get(), listen_.get(), EPOLLIN);
  Clock::time_point next_file = Clock::now();
  for (;;) {
    Clock::time_point now = Clock::now();
    if (!config_.textfile.empty() && now >= next_file) {
      write_textfile(config_.textfile, scrape_(Format::kPrometheus));
      next_file = now + config_.textfile_period;
    }
    int timeout = loop.expire(now);
    if (!config_.textfile.empty()) {
      int to_file = int(std::chrono::ceil<std::chrono::milliseconds>(next_file - now).count());
      timeout = timeout < 0 ? to_file : std::min(timeout, to_file);
    }
    epoll_event ev[32];
    int n = epoll_wait(loop.epoll.get(), ev, 32, timeout);
    if (n < 0 && errno != EINTR) fail("epoll_wait: {}", errno_text(errno));
    for (int i = 0; i < n; ++i) {
      int fd = ev[i].data.fd;
      if (fd == stop_.get()) return;
      if (fd == listen_.get()) {
        loop.accept_all();
        continue;
      }
      auto it = loop.conns.find(fd);
      if (it == loop.conns.end()) continue;
      if (it->second.out.empty()) {
        loop.readable(fd, it->second);
      } else {
        loop.writable(fd, it->second);
      }
    }
  }
}

}  // namespace ezio::recorder::metrics
