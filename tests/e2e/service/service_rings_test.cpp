// SPDX-License-Identifier: GPL-2.0-only
// A session through eziotraced has one ring buffer per CPU, as in-process (ring_layout), passed to
// the client as one fd each with the WELCOME: a thread moving between CPUs is recorded whole and in
// time order. The fds that come with a message are an input like any other: a wrong set of them
// (too many, too few, not ring buffers) and another protocol version are refused clearly, on
// either side, and no fd stays open.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <regex>
#include <thread>

#include "recorder/load/ring_buffers.h"
#include "recorder/service/client.h"
#include "recorder/service/socket.h"
#include "service_env.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ezio::test {
namespace {

using namespace recorder::service;

SuiteServices suite;

class Rings : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { suite.start("rings"); }
  static void TearDownTestSuite() { suite.stop(); }
};

size_t open_fds() {
  return size_t(std::distance(fs::directory_iterator("/proc/self/fd"), fs::directory_iterator()));
}

// What a client sees when "eziotraced" answers its HELLO with `reply` (raw bytes) and `fds`: a
// stand-in on a private socket, for one connection.
std::string client_error(const std::string& reply, const std::vector<int>& fds = {}) {
  fs::path path = fs::path("/tmp/ezio-service-test") / "fake-eziotraced.sock";
  fs::create_directories(path.parent_path());
  UniqueFd listening = listen_at(path, 0);
  std::thread fake([&] {
    UniqueFd c(accept4(listening.get(), nullptr, nullptr, SOCK_CLOEXEC));
    std::vector<char> hello(70000);
    (void)recv(c.get(), hello.data(), hello.size(), 0);
    send_raw(c.get(), reply, fds);
  });
  std::string error = "no error";
  try {
    ServiceClient client(path);
    client.hello(1 << 20);
  } catch (const std::exception& e) {
    error = e.what();
  }
  fake.join();
  fs::remove(path);
  return error;
}

std::string welcome(const std::string& body) {
  return framed(kMagic, kVersion, uint16_t(Type::kWelcome), body);
}

TEST_F(Rings, ASessionHasOneRingPerCpuWithinItsTotal) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  ASSERT_GE(cpus, 2) << "this test needs at least 2 online CPUs";
  // The spare's size (the default 32 MiB), another made for its client, one too small to split.
  for (uint64_t total : {uint64_t{32} << 20, uint64_t{4} << 20, uint64_t{1} << 20}) {
    SCOPED_TRACE(total);
    auto layout = recorder::ring_layout(total, unsigned(cpus));
    ServiceClient client(suite.daemon->socket());
    ServiceClient::Welcome w = client.hello(total);
    EXPECT_EQ(w.rings.size(), layout.count);
    EXPECT_EQ(w.ring_bytes, layout.ring_bytes);
    EXPECT_NO_THROW(check_ring_fds(w.rings, w.ring_bytes));
  }
  EXPECT_EQ(recorder::ring_layout(32 << 20, unsigned(cpus)).count, std::min(cpus, 32L));
}

TEST_F(Rings, MigratingThreadThroughTheServiceHasEveryCallOnceInTimeOrder) {
  constexpr int kWrites = 3000;
  fs::path dir = user_dir(kUserA, "rings");
  ezio::test::Run r =
      as_user(kUserA, {EZIO_BINARY, "record", "--service=" + suite.daemon->socket(), "-o",
                       (dir / "trace").string(), "--", program("migrating_writer"),
                       (dir / "data.bin").string(), std::to_string(kWrites)});
  ASSERT_EQ(r.status, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("tid=(\\d+) cpus=(\\d+)"))) << r.out;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  EXPECT_EQ(std::stol(m[2]), cpus) << "the writer did not run on every CPU";
  json archive = dump_archive(dir / "trace" / "eziotrace.otf2");
  const json& p = archive["properties"];
  auto layout = recorder::ring_layout(32 << 20, unsigned(cpus));
  EXPECT_EQ(p["EZIOTRACE::RECORDING_PATH"], "eziotraced");
  EXPECT_EQ(p["EZIOTRACE::RINGS"], layout.count);
  EXPECT_EQ(p["EZIOTRACE::RING_BYTES"], layout.ring_bytes);
  EXPECT_EQ(p["EZIOTRACE::LOST::syscall"], 0);
  for (const auto& [name, v] : p.items()) {
    EXPECT_FALSE(name.starts_with("EZIOTRACE::LOST_ON_CPU::")) << name << " = " << v;
  }
  ezio::test::CallsSeen seen = ezio::test::calls_seen(archive["locations"][m[1].str()]["calls"]);
  EXPECT_EQ(seen.out_of_order, "") << "a call out of time order";
  EXPECT_EQ(seen.twice, "") << "a call twice";
  EXPECT_EQ(seen.writes, kWrites);
}

TEST_F(Rings, AWelcomeWithAWrongSetOfFdsIsAClearErrorAndLeavesNoFdOpen) {
  UniqueFd null(open("/dev/null", O_RDONLY | O_CLOEXEC));
  int n = null.get();
  const std::string two = R"({"slot":0,"ring_bytes":1048576,"rings":2})";
  struct Case {
    std::string reply;
    std::vector<int> fds;
    std::string error;
  };
  std::vector<Case> cases = {
      {welcome(two), {n}, "announces 2 ring buffers but 1 fds came with it"},
      {welcome(two), {n, n, n}, "announces 2 ring buffers but 3 fds came with it"},
      {welcome(two), {}, "announces 2 ring buffers but 0 fds"},
      {welcome(R"({"slot":0,"ring_bytes":1048576,"rings":0})"), {}, "announces 0 ring buffers"},
      {welcome(R"({"slot":0,"ring_bytes":1000,"rings":1})"), {n}, "not a power of two"},
      {welcome(R"({"slot":0,"ring_bytes":1048576})"), {n}, "\"rings\" missing"},
      {welcome(two), std::vector<int>(kMaxFds + 1, n), "129 fds in one message"},
      {welcome(two), std::vector<int>(200, n), "too much ancillary data"},
  };
  size_t before = open_fds();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.error);
    std::string error = client_error(c.reply, c.fds);
    EXPECT_NE(error.find(c.error), std::string::npos) << error;
    EXPECT_EQ(open_fds(), before) << "an fd received is still open";
  }
}

TEST_F(Rings, FdsThatAreNotRingBuffersOfTheGivenSizeAreRefused) {
  std::vector<UniqueFd> fds;
  fds.push_back(recorder::make_ring_buffer(1 << 20));
  EXPECT_NO_THROW(check_ring_fds(fds, 1 << 20));
  EXPECT_THROW(check_ring_fds(fds, 2 << 20), Error);
  fds.emplace_back(open("/dev/null", O_RDONLY | O_CLOEXEC));
  try {
    check_ring_fds(fds, 1 << 20);
    ADD_FAILURE() << "/dev/null taken for a ring buffer";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ring buffer 1 of 2 is not a ring buffer of 1048576"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(Rings, TooManyFdsToTheServiceAreRefusedAndClosed) {
  pid_t daemon = suite.daemon->pid();
  size_t before = dev_null_fds(daemon);
  UniqueFd null(open("/dev/null", O_RDONLY | O_CLOEXEC));
  for (size_t count : {size_t{2}, kMaxFds + 1, size_t{200}}) {
    SCOPED_TRACE(count);
    UniqueFd s = connect_to(suite.daemon->socket());
    send_raw(s.get(), framed(kMagic, kVersion, uint16_t(Type::kHello), R"({"ring_bytes":1048576})"),
             std::vector<int>(count, null.get()));
    Message m;
    ASSERT_TRUE(receive_message(s.get(), m));
    EXPECT_EQ(m.type, Type::kRefused);
    EXPECT_FALSE(receive_message(s.get(), m));
  }
  EXPECT_TRUE(wait_for([&] { return dev_null_fds(daemon) == before; }))
      << "an fd sent is still open in the daemon";
  ASSERT_TRUE(suite.daemon->wait_sessions(0));
  ServiceClient client(suite.daemon->socket());
  EXPECT_FALSE(client.hello(1 << 20).rings.empty());
}

// Framed in the peer's version, so that an eziotrace of another version can read why.
TEST_F(Rings, AnotherVersionsClientIsToldWhyInItsOwnFraming) {
  for (uint16_t version : {uint16_t(kVersion - 1), uint16_t(kVersion + 1)}) {
    SCOPED_TRACE(version);
    UniqueFd s = connect_to(suite.daemon->socket());
    send_raw(s.get(), framed(kMagic, version, uint16_t(Type::kHello), R"({"ring_bytes":1048576})"));
    std::vector<char> data(70000);
    ssize_t got = recv(s.get(), data.data(), data.size(), 0);
    ASSERT_GE(got, ssize_t(sizeof(Header)));
    Header h;
    std::memcpy(&h, data.data(), sizeof h);
    EXPECT_EQ(h.version, version);
    EXPECT_EQ(h.type, uint16_t(Type::kRefused));
    std::string body(data.data() + sizeof h, size_t(got) - sizeof h);
    EXPECT_NE(body.find(fmt::format("eziotraced speaks protocol version {} and this eziotrace {}",
                                    kVersion, version)),
              std::string::npos)
        << body;
  }
}

TEST_F(Rings, AClientOfAnotherVersionThanTheServiceSaysWhich) {
  std::string refusal = R"({"message":"protocol error: protocol version 2, this end speaks 1"})";
  std::string older = client_error(framed(kMagic, kVersion - 1, uint16_t(Type::kRefused), refusal));
  EXPECT_NE(older.find(fmt::format("eziotraced speaks protocol version {} and this eziotrace {}: "
                                   "the service is older than this eziotrace",
                                   kVersion - 1, kVersion)),
            std::string::npos)
      << older;
  std::string newer = client_error(framed(kMagic, kVersion + 1, uint16_t(Type::kWelcome), "{}"));
  EXPECT_NE(newer.find("the service is newer than this eziotrace"), std::string::npos) << newer;
}

}  // namespace
}  // namespace ezio::test
