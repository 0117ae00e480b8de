// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/metrics/top_source.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>

#include "common/error.h"
#include "common/unique_fd.h"
#include "recorder/metrics/http_server.h"

namespace ezio::recorder::metrics {
namespace {

double steady_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

[[noreturn]] void nobody_serves(const TopSource& s, const std::string& why) {
  fail(
      "no eziotraced serves metrics at {} ({}): start it with `eziotraced --metrics PORT` "
      "(docs/metrics.md), name its address with --metrics ADDR:PORT, or read its textfile with "
      "--textfile FILE",
      describe(s), why);
}

Exposition from_endpoint(const TopSource& s) {
  ListenAddress a = parse_listen(s.endpoint);
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) fail("socket: {}", errno_text(errno));
  // An endpoint that accepts and then says nothing must not hang top.
  timeval deadline{5, 0};
  setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &deadline, sizeof deadline);
  setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &deadline, sizeof deadline);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(a.port);
  inet_pton(AF_INET, a.addr.c_str(), &sa.sin_addr);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    nobody_serves(s, errno_text(errno));
  }
  double t = steady_now();
  std::string request = fmt::format("GET /metrics HTTP/1.1\r\nHost: {}\r\n\r\n", a.addr);
  if (send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL) < 0) {
    nobody_serves(s, errno_text(errno));
  }
  std::string answer;
  char buf[65536];
  ssize_t n;
  while ((n = recv(fd.get(), buf, sizeof buf, 0)) > 0) answer.append(buf, n);
  if (n < 0) nobody_serves(s, errno_text(errno));
  size_t body = answer.find("\r\n\r\n");
  if (!answer.starts_with("HTTP/1.1 200") || body == std::string::npos) {
    nobody_serves(s, "answered " + answer.substr(0, answer.find('\r')));
  }
  if (answer.find("eziotrace_series_limit") == std::string::npos) {
    nobody_serves(s, "what answers there is not eziotraced");
  }
  return {answer.substr(body + 4), t};
}

Exposition from_textfile(const TopSource& s) {
  std::ifstream in(s.textfile);
  struct stat st {};
  if (!in || stat(s.textfile.c_str(), &st) != 0) {
    fail("cannot read the metrics textfile {}: {} (eziotraced --metrics-textfile writes it)",
         s.textfile, errno_text(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return {text.str(), double(st.st_mtim.tv_sec) + st.st_mtim.tv_nsec / 1e9};
}

}  // namespace

Exposition fetch_exposition(const TopSource& source) {
  return source.textfile.empty() ? from_endpoint(source) : from_textfile(source);
}

std::string describe(const TopSource& source) {
  if (!source.textfile.empty()) return source.textfile;
  ListenAddress a = parse_listen(source.endpoint);
  return fmt::format("http://{}:{}/metrics", a.addr, a.port);
}

}  // namespace ezio::recorder::metrics
