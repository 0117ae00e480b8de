// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/service/daemon.h"

#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>

#include <cerrno>
#include <utility>

#include "common/error.h"
#include "common/log.h"
#include "recorder/service/epoll_watch.h"
#include "recorder/service/flight_recorder.h"

namespace ezio::recorder::service {

// A session's life: kNew (only HELLO or STATUS), kOpening (a slot, its ring being made: nothing),
// kOpen (a slot and ring; TRACE), kTracing (COUNT, END). Anything out of order ends the
// connection, and with it the session.
struct Daemon::Connection {
  enum State { kNew, kOpening, kOpen, kTracing } state = kNew;
  UniqueFd fd;
  Peer peer;
  std::string who;  // "alice (pid 123)", for the log
  bool has_session = false;
  bool flight_change = false;  // a FLIGHT_ADD or FLIGHT_REMOVE: a job's slot taken or freed
  unsigned slot = 0;
  uint64_t ring_bytes = 0;
  uint64_t layers = 0;
  std::optional<Message> trace;  // a TRACE sent right after the HELLO, waiting for the session
};

namespace {

UniqueFd signal_fd() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  if (sigprocmask(SIG_BLOCK, &set, nullptr) != 0) fail("sigprocmask: {}", errno_text(errno));
  UniqueFd fd(signalfd(-1, &set, SFD_CLOEXEC));
  if (!fd) fail("signalfd: {}", errno_text(errno));
  return fd;
}

// A refusal the client shows its user; the connection ends after it. Framed as the client's
// protocol version (a REFUSED reads the same in every one), so that another version's eziotrace
// can show it.
void refuse(int fd, const std::string& why, uint16_t version = kVersion) {
  try {
    send_text(fd, Type::kRefused, nlohmann::json{{"message", why}}.dump(), {}, version);
  } catch (const Error&) {
    // The client is gone already: nothing to tell.
  }
}

}  // namespace

void SessionKernel::record_cgroup(unsigned, uint64_t, unsigned, uint32_t) {
  fail("this kernel side cannot flight-record");
}
bool SessionKernel::enroll(unsigned, pid_t) { return false; }
std::vector<uint64_t> SessionKernel::lost(unsigned) const { return {}; }

Daemon::Daemon(SessionKernel& kernel, const DaemonConfig& config)
    : kernel_(kernel), config_(config), quota_(config.limits) {}

Daemon::~Daemon() {
  maker_.reset();  // its job under way finishes first
  for (auto& [fd, c] : connections_) {
    if (c->has_session) kernel_.close(c->slot);
  }
  if (spare_) kernel_.close(spare_->slot);
}

bool Daemon::spare_wanted() const {
  return !spare_ && making_spare_ == RingMaker::kNoSlot && !spare_failed_ &&
         config_.spare_ring_bytes != 0;
}

void Daemon::refill_spare() {
  if (!spare_wanted()) return;
  try {
    making_spare_ = kernel_.reserve();
  } catch (const Error& e) {
    spare_failed_ = true;
    spdlog::debug("no spare session: {}", e.what());
    return;
  }
  maker_->request({making_spare_, config_.spare_ring_bytes, true});
}

void Daemon::run(int listen_fd) {
  epoll_ = UniqueFd(epoll_create1(EPOLL_CLOEXEC));
  if (!epoll_) fail("epoll_create1: {}", errno_text(errno));
  UniqueFd signals = signal_fd();
  watch(epoll_.get(), listen_fd);
  watch(epoll_.get(), signals.get());
  maker_ = std::make_unique<RingMaker>(kernel_);
  watch(epoll_.get(), maker_->ready_fd());
  if (flight_) {
    flight_->start(*maker_);  // Slurm's jobs from now on: their rings are maker_'s to make
    watch(epoll_.get(), flight_->timer_fd());
    if (flight_->watch_fd() >= 0) watch(epoll_.get(), flight_->watch_fd());
    if (flight_->lookups_fd() >= 0) watch(epoll_.get(), flight_->lookups_fd());
  }
  refill_spare();
  for (;;) {
    epoll_event ev[16];
    // Idle for a moment: time to make the next spare session. Not as soon as one is taken: the
    // kernel's zeroing of its memory would slow down the start of the client that took it
    // (docs/costs.md).
    int n = epoll_wait(epoll_.get(), ev, 16, spare_wanted() ? 20 : -1);
    if (n == 0) refill_spare();
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("epoll_wait: {}", errno_text(errno));
    // Connections first, new ones last: a client's hang-up in the same batch is counted out
    // before the per-user limits look at the newcomer.
    bool incoming = false;
    for (int i = 0; i < n; ++i) {
      int fd = ev[i].data.fd;
      if (fd == signals.get()) {
        spdlog::info("stopping: {} session(s) end with the service", quota_.sessions());
        return;
      }
      if (fd == listen_fd) {
        incoming = true;
      } else if (fd == maker_->ready_fd()) {
        on_rings_ready();
      } else if (flight_ && fd == flight_->timer_fd()) {
        flight_->on_timer();
      } else if (flight_ && fd == flight_->watch_fd()) {
        flight_->on_watch();
        // A job gone may have been the last user of the programs.
        if (!any_session() && !flight_->any()) kernel_.detach();
      } else if (flight_ && fd == flight_->lookups_fd()) {
        flight_->on_lookups();
      } else {
        serve(fd);
      }
    }
    if (!incoming) continue;
    try {
      accept_one(listen_fd);
    } catch (const Error& e) {  // that connection is lost, the service goes on
      spdlog::warn("a connection could not be set up: {}", e.what());
    }
  }
}

void Daemon::accept_one(int listen_fd) {
  UniqueFd fd(accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
  if (!fd) {
    spdlog::warn("accept: {}", errno_text(errno));
    return;
  }
  auto c = std::make_unique<Connection>();
  c->peer = peer_of(fd.get());
  c->who = fmt::format("{} (pid {})", user_name(c->peer.uid), c->peer.pid);
  if (!may_use_service(c->peer.uid, config_.group)) {
    spdlog::info("refused {}: not in the service's group", c->who);
    refuse(fd.get(), fmt::format("user {} may not record through eziotraced: only root and the "
                                 "members of its group (eziotrace) may",
                                 user_name(c->peer.uid)));
    return;
  }
  size_t mine = 0;
  for (const auto& [other_fd, other] : connections_) mine += other->peer.uid == c->peer.uid;
  if (c->peer.uid != 0 && mine >= config_.limits.connections_per_user) {
    spdlog::warn("refused {}: {} connections of this user open", c->who, mine);
    refuse(fd.get(),
           fmt::format("you have {} connections to eziotraced open already, its limit", mine));
    return;
  }
  if (connections_.size() >= config_.limits.connections) {
    spdlog::warn("refused {}: {} connections open", c->who, connections_.size());
    refuse(fd.get(), "eziotraced serves too many connections at the moment; try again later");
    return;
  }
  watch(epoll_.get(), fd.get());
  c->fd = std::move(fd);
  int key = c->fd.get();
  connections_[key] = std::move(c);
}

void Daemon::serve(int fd, std::optional<Message> deferred) {
  auto it = connections_.find(fd);
  if (it == connections_.end()) return;
  Connection& c = *it->second;
  std::string who = c.who;  // c is gone once the connection is dropped
  Message m;
  try {
    if (deferred) {
      m = std::move(*deferred);
    } else if (!receive_message(fd, m)) {
      return drop(fd, "");
    }
    handle(c, m);
  } catch (const VersionMismatch& e) {
    std::string why = fmt::format(
        "eziotraced speaks protocol version {} and this eziotrace {}: record with the eziotrace "
        "installed with this eziotraced (after an upgrade, restart the service: systemctl "
        "restart eziotraced.socket eziotraced.service)",
        kVersion, e.peer);
    refuse(fd, why, e.peer);
    drop(fd, fmt::format("protocol error: {}", e.what()));
  } catch (const ProtocolError& e) {
    refuse(fd, fmt::format("protocol error: {}", e.what()));
    drop(fd, fmt::format("protocol error: {}", e.what()));
  } catch (const Error& e) {
    refuse(fd, e.what());
    drop(fd, e.what());
  } catch (const std::exception& e) {  // never the whole service for one connection
    spdlog::error("internal error serving {}: {}", who, e.what());
    refuse(fd, "eziotraced failed to serve this request (internal error)");
    drop(fd, e.what());
  }
}

void Daemon::handle(Connection& c, Message& m) {
  using S = Connection::State;
  if (!m.fds.empty() && m.type != Type::kTrace) {
    throw ProtocolError(fmt::format("an fd with {}, which takes none", type_name(m.type)));
  }
  switch (m.type) {
    case Type::kHello:
      if (c.state != S::kNew) break;
      return on_hello(c, m);
    case Type::kStatus:
      if (c.state != S::kNew) break;
      return on_status(c);
    case Type::kSnapshot:
      if (c.state != S::kNew) break;
      return on_snapshot(c, m);
    case Type::kFlightAdd:
    case Type::kFlightRemove:
      if (c.state != S::kNew) break;
      return on_flight_change(c, m);
    case Type::kTrace:
      if (c.state == S::kOpening && !c.trace) {  // sent without waiting for the WELCOME
        c.trace = std::move(m);
        return;
      }
      if (c.state != S::kOpen) break;
      return on_trace(c, m);
    case Type::kCount:
      if (c.state != S::kTracing) break;
      return send_message(c.fd.get(), Type::kCounted, {{"processes", kernel_.traced(c.slot)}});
    case Type::kEnd: {
      if (c.state != S::kTracing) break;
      int fd = c.fd.get();
      send_message(fd, Type::kTotals, kernel_.end(c.slot));
      return drop(fd, "ended");
    }
    default:
      throw ProtocolError(fmt::format("{} is a reply, not a request", type_name(m.type)));
  }
  throw ProtocolError(fmt::format("{} out of order", type_name(m.type)));
}

void Daemon::on_hello(Connection& c, Message& m) {
  uint64_t ring_bytes = field_u64(m.body, "ring_bytes");
  if (ring_bytes < 4096 || (ring_bytes & (ring_bytes - 1)) != 0) {
    throw ProtocolError(fmt::format("ring_bytes {} is not a power of two >= 4096", ring_bytes));
  }
  uint64_t layers = m.body.contains("layers") ? field_u64(m.body, "layers") : kAllLayers;
  if (layers & ~kAllLayers) throw ProtocolError(fmt::format("layers {:#x} unknown", layers));
  if (std::string why = quota_.admit(c.peer.uid, ring_bytes); !why.empty()) {
    spdlog::info("refused {}: {}", c.who, why);
    fail("{}", why);
  }
  c.ring_bytes = ring_bytes;
  c.layers = layers;
  // The spare's rings are config_.spare_ring_bytes in all (refill_spare, on_ring_made).
  if (spare_ && config_.spare_ring_bytes == ring_bytes) {
    SessionKernel::Opened s = std::move(*spare_);
    spare_.reset();
    welcome(c, std::move(s));
  } else if (making_spare_ != RingMaker::kNoSlot && config_.spare_ring_bytes == ring_bytes) {
    // The spare is on its way: the client waits for it, no longer than for a ring of its own.
    c.slot = std::exchange(making_spare_, RingMaker::kNoSlot);
    maker_->hurry(c.slot);
    c.state = Connection::kOpening;
  } else {
    try {
      c.slot = kernel_.reserve();
    } catch (const Error&) {
      quota_.release(c.peer.uid, ring_bytes);
      throw;
    }
    maker_->request({c.slot, ring_bytes, false});
    c.state = Connection::kOpening;
  }
  if (c.state == Connection::kOpening) {
    spdlog::debug("{} waits for the ring buffer of slot {}", c.who, c.slot);
  }
}

bool Daemon::any_session() const {
  for (const auto& [fd, c] : connections_) {
    if (c->has_session) return true;
  }
  return false;
}

void Daemon::welcome(Connection& c, SessionKernel::Opened s) {
  bool first = !any_session();
  // Its session first: should the attach fail, the connection's end closes it (and unhooks).
  c.has_session = true;
  c.slot = s.slot;
  // The first session hooks the programs; its application is released (TRACED) after that.
  if (first) kernel_.attach();
  kernel_.set_layers(s.slot, uint32_t(c.layers));
  c.state = Connection::kOpen;
  // The facts' text with the session's fields put in front: no copy of the plan as JSON per HELLO.
  const std::string& facts = kernel_.facts();
  std::string welcome = fmt::format(R"({{"slot":{},"ring_bytes":{},"rings":{})", s.slot,
                                    s.ring_bytes, s.rings.size());
  welcome += facts.size() > 2 ? "," + facts.substr(1) : "}";
  std::vector<int> fds;
  for (const UniqueFd& r : s.rings) fds.push_back(r.get());
  send_text(c.fd.get(), Type::kWelcome, welcome, fds);
  spdlog::info("session {} opened for {} ({} ring buffer(s) of {} KiB)", c.slot, c.who,
               s.rings.size(), s.ring_bytes >> 10);
  log_sessions();
}

void Daemon::on_rings_ready() {
  for (RingMaker::Done& d : maker_->take()) {
    try {
      on_ring_made(d);
    } catch (const Error& e) {  // that ring is lost, the service goes on
      spdlog::warn("a session could not be opened: {}", e.what());
    }
  }
}

// A ring the thread made (or removed) for a slot: to the Slurm job or the client waiting for it,
// else the spare, else removed again (its client went away meanwhile).
void Daemon::on_ring_made(RingMaker::Done& d) {
  unsigned slot = d.job.slot;
  if (d.job.ring_bytes == 0) return kernel_.unreserve(slot);
  if (flight_ && flight_->take_ring(d)) {
    // A Slurm job's: refused after the programs were hooked for it, nothing may need them.
    if (!any_session() && !flight_->any()) kernel_.detach();
    return;
  }
  Connection* waiting = nullptr;
  for (auto& [fd, c] : connections_) {
    if (c->state == Connection::kOpening && c->slot == slot) waiting = c.get();
  }
  bool spare = slot == making_spare_;
  if (spare) making_spare_ = RingMaker::kNoSlot;
  if (!d.error.empty()) {
    kernel_.unreserve(slot);
    if (spare) spare_failed_ = true;
    spdlog::warn("cannot open a session: {}", d.error);
    if (waiting) {
      int fd = waiting->fd.get();
      refuse(fd, d.error);
      drop(fd, d.error);
    }
    return;
  }
  if (waiting) {
    int fd = waiting->fd.get();
    try {
      welcome(*waiting, kernel_.open(slot, std::move(d.rings)));
    } catch (const Error& e) {
      return drop(fd, e.what());
    }
    if (waiting->trace) serve(fd, std::exchange(waiting->trace, std::nullopt));
  } else if (spare || (!spare_ && making_spare_ == RingMaker::kNoSlot &&
                       d.job.ring_bytes == config_.spare_ring_bytes)) {
    spare_ = kernel_.open(slot, std::move(d.rings));
  } else {
    maker_->request({slot, 0, true});
  }
}

void Daemon::on_trace(Connection& c, Message& m) {
  if (m.fds.size() != 1) throw ProtocolError("TRACE without the process's pidfd");
  pid_t pid = pid_t(field_i64(m.body, "pid"));
  if (std::string why = check_child(c.peer, pid, m.fds.front().get()); !why.empty()) {
    spdlog::warn("refused to trace for {}: {}", c.who, why);
    fail("eziotraced refuses to trace process {}: {}", pid, why);
  }
  kernel_.trace(c.slot, pid);
  c.state = Connection::kTracing;
  send_message(c.fd.get(), Type::kTraced, nlohmann::json::object());
  // Logged after the answer: the application's start does not wait for it.
  spdlog::info("session {}: tracing process {} of {}", c.slot, pid, c.who);
}

void Daemon::on_status(Connection& c) {
  // Root sees every session's owner; a user only the totals and their own.
  nlohmann::json sessions = nlohmann::json::array();
  for (const auto& [fd, other] : connections_) {
    if (!other->has_session || (c.peer.uid != 0 && other->peer.uid != c.peer.uid)) continue;
    sessions.push_back({{"slot", other->slot},
                        {"user", user_name(other->peer.uid)},
                        {"pid", other->peer.pid},
                        {"ring_bytes", other->ring_bytes},
                        {"tracing", other->state == Connection::kTracing}});
  }
  send_message(c.fd.get(), Type::kState,
               {{"sessions", quota_.sessions()},
                {"visible", sessions},
                {"connections", connections_.size()},
                {"metrics_hook", config_.metrics_hook},
                {"flight", flight_ ? flight_->status(c.peer.uid) : nlohmann::json::array()},
                {"flight_slurm", flight_ ? flight_->slurm_status() : nlohmann::json()}});
}

void Daemon::on_snapshot(Connection& c, Message& m) {
  if (!flight_)
    fail("eziotraced flight-records no job (eziotraced --flight CGROUP or --flight-slurm does)");
  auto [body, records] = flight_->snapshot(c.peer, m.body);
  int fd = c.fd.get();
  send_message(fd, Type::kSnapshotData, body, records.get());
  drop(fd, "snapshot sent");
}

// Root's only: a cgroup's processes may be other users' (a job's owner is whoever owns its
// directory), and their recording holds the names of the files they open.
void Daemon::on_flight_change(Connection& c, Message& m) {
  bool add = m.type == Type::kFlightAdd;
  if (c.peer.uid != 0) {
    spdlog::warn("refused {}'s {}: root's only", c.who, type_name(m.type));
    fail(
        "only root may {} flight-recorded jobs: a cgroup's processes may be other users', whose "
        "file names the recording holds",
        add ? "add" : "remove");
  }
  if (!flight_) fail("eziotraced has no flight recorder (no cgroup v2 hierarchy mounted)");
  c.flight_change = true;  // drop() detaches the programs should nothing need them any more
  nlohmann::json done = add ? flight_->add(m.body) : flight_->remove(m.body);
  spdlog::info("flight recorder: job {} {} at the request of {}", done.value("job", "?"),
               add ? "added" : "removed", c.who);
  int fd = c.fd.get();
  send_message(fd, Type::kFlightDone, done);
  drop(fd, fmt::format("{} {}", add ? "added" : "removed", done.value("job", "?")));
}

void Daemon::drop(int fd, const std::string& why) {
  auto it = connections_.find(fd);
  if (it == connections_.end()) return;
  Connection& c = *it->second;
  epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
  // Its ring, still being made, is the spare's or removed when it comes (on_ring_made).
  if (c.state == Connection::kOpening) quota_.release(c.peer.uid, c.ring_bytes);
  if (c.has_session) {
    kernel_.close(c.slot);
    quota_.release(c.peer.uid, c.ring_bytes);
    spdlog::info("session {} of {} closed{}", c.slot, c.who,
                 why.empty() ? " (the client went away)" : fmt::format(" ({})", why));
  }
  bool had_session = c.has_session;
  bool slots_changed = had_session || c.flight_change;
  connections_.erase(it);
  if (slots_changed) {
    // The last session gone, the programs leave every process's system calls.
    if (!any_session() && !(flight_ && flight_->any())) kernel_.detach();
    if (had_session) log_sessions();
    spare_failed_ = false;  // a slot may be free again
    // Its client has its totals and needs the service no more, and the next recording is likely
    // to come soon (a script's next command): the spare is made now, on the ring maker's thread,
    // which an idle timer alone would often start too late.
    refill_spare();
  }
}

void Daemon::log_sessions() const { spdlog::info("{} session(s) open", quota_.sessions()); }

}  // namespace ezio::recorder::service
