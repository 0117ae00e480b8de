// SPDX-License-Identifier: GPL-2.0-only
// eziotraced against garbage: truncated, oversized and out-of-order messages (other versions and
// too many fds: service_rings_test.cpp),
// fds where none belong, abrupt disconnects. After each the daemon must still be there, have
// freed what the connection held, and serve a normal session.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <random>

#include "recorder/service/client.h"
#include "recorder/service/protocol.h"
#include "recorder/service/socket.h"
#include "service_env.h"

namespace ezio::test {
namespace {

using namespace recorder::service;

std::string valid(Type t, const std::string& body) {
  return framed(kMagic, kVersion, uint16_t(t), body);
}

// What the daemon answers: "REFUSED: ..." then EOF, "EOF", or another message's name.
std::string answer(int sock) {
  Message m;
  try {
    if (!receive_message(sock, m, kMaxFds)) return "EOF";  // a WELCOME has a ring per CPU
  } catch (const ProtocolError& e) {
    return std::string("unreadable: ") + e.what();
  }
  if (m.type == Type::kRefused) return "REFUSED: " + m.body.value("message", "");
  return type_name(m.type);
}

class Fuzz : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    group_ = new ServiceGroup();
    daemon_ = new ServiceDaemon("fuzz");
  }
  static void TearDownTestSuite() {
    delete daemon_;
    delete group_;
  }
  UniqueFd connect() { return connect_to(daemon_->socket()); }
  // After a bad exchange: the daemon lives, holds no session, and records a normal one.
  void expect_still_serving() {
    ASSERT_TRUE(daemon_->wait_sessions(0)) << daemon_->status().dump();
    ServiceClient client(daemon_->socket());
    auto welcome = client.hello(1 << 20);
    EXPECT_FALSE(welcome.rings.empty());
    EXPECT_EQ(daemon_->status()["sessions"], 1);
  }
  static ServiceGroup* group_;
  static ServiceDaemon* daemon_;
};
ServiceGroup* Fuzz::group_ = nullptr;
ServiceDaemon* Fuzz::daemon_ = nullptr;

TEST_F(Fuzz, MalformedFramesAreRefused) {
  const std::string hello = R"({"ring_bytes":1048576})";
  std::vector<std::pair<std::string, std::string>> cases = {
      {"truncated header", std::string("EZI", 3)},
      {"wrong magic", framed(0xdeadbeef, kVersion, 1, hello)},
      {"unknown type", framed(kMagic, kVersion, 77, hello)},
      {"length too long", framed(kMagic, kVersion, 1, hello, 5)},
      {"length too short", framed(kMagic, kVersion, 1, hello, -3)},
      {"body not JSON", valid(Type::kHello, "{ring_bytes: 1")},
      {"body an array", valid(Type::kHello, "[1,2]")},
      {"field missing", valid(Type::kHello, "{}")},
      {"field a string", valid(Type::kHello, R"({"ring_bytes":"1M"})")},
      {"ring not a power of two", valid(Type::kHello, R"({"ring_bytes":1000000})")},
      {"ring negative", valid(Type::kHello, R"({"ring_bytes":-4096})")},
      {"ring huge", valid(Type::kHello, R"({"ring_bytes":1152921504606846976})")},
      {"reply as request", valid(Type::kWelcome, "{}")},
      {"TRACE before HELLO", valid(Type::kTrace, R"({"pid":1})")},
      {"END before HELLO", valid(Type::kEnd, "{}")},
      {"oversized", valid(Type::kHello, std::string(kMaxBody + 100, ' '))},
      {"deeply nested",
       valid(Type::kHello, "{\"a\":" + std::string(30000, '[') + std::string(30000, ']') + "}")},
  };
  for (const auto& [name, bytes] : cases) {
    SCOPED_TRACE(name);
    UniqueFd s = connect();
    send_raw(s.get(), bytes);
    std::string a = answer(s.get());
    EXPECT_TRUE(a.starts_with("REFUSED: ")) << a;
    EXPECT_EQ(answer(s.get()), "EOF");
  }
  expect_still_serving();
}

TEST_F(Fuzz, RandomBytesAreRefused) {
  std::mt19937 rng(20);
  for (int i = 0; i < 200; ++i) {
    std::string bytes(rng() % 300, '\0');
    for (auto& c : bytes) c = char(rng());
    if (i % 3 == 0 && bytes.size() >= sizeof(Header)) {  // a valid header, garbage after
      std::string h = valid(Type(1 + rng() % 6), "");
      bytes.replace(0, sizeof(Header), h);
    }
    UniqueFd s = connect();
    send_raw(s.get(), bytes);
    std::string a = answer(s.get());
    EXPECT_TRUE(a.starts_with("REFUSED: ") || a == "EOF") << i << ": " << a;
  }
  expect_still_serving();
}

TEST_F(Fuzz, FdsWhereNoneBelongAreRefusedAndClosed) {
  size_t before = dev_null_fds(daemon_->pid());
  UniqueFd null(open("/dev/null", O_RDONLY | O_CLOEXEC));
  {
    UniqueFd s = connect();
    send_raw(s.get(), valid(Type::kHello, R"({"ring_bytes":1048576})"), {null.get()});
    EXPECT_TRUE(answer(s.get()).starts_with("REFUSED: "));
  }
  {  // after a valid HELLO: TRACE with two fds, then with one that is no pidfd
    UniqueFd s = connect();
    send_message(s.get(), Type::kHello, {{"ring_bytes", 1 << 20}});
    EXPECT_EQ(answer(s.get()), "WELCOME");
    send_raw(s.get(), valid(Type::kTrace, R"({"pid":1})"), {null.get(), null.get()});
    EXPECT_TRUE(answer(s.get()).starts_with("REFUSED: "));
  }
  {
    UniqueFd s = connect();
    send_message(s.get(), Type::kHello, {{"ring_bytes", 1 << 20}});
    EXPECT_EQ(answer(s.get()), "WELCOME");
    send_message(s.get(), Type::kTrace, {{"pid", getpid()}}, null.get());
    std::string a = answer(s.get());
    EXPECT_NE(a.find("not a pidfd"), std::string::npos) << a;
    // The refusal closed the session: the daemon may have closed the socket before this is sent
    // (EPIPE), or after; either way nothing more is answered.
    try {
      send_message(s.get(), Type::kCount, nlohmann::json::object());
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("Broken pipe"), std::string::npos) << e.what();
    }
    EXPECT_EQ(answer(s.get()), "EOF");
  }
  expect_still_serving();
  EXPECT_EQ(dev_null_fds(daemon_->pid()), before) << "an fd sent is still open in the daemon";
}

TEST_F(Fuzz, OutOfOrderAndAbruptDisconnects) {
  {
    UniqueFd s = connect();
    send_message(s.get(), Type::kHello, {{"ring_bytes", 1 << 20}});
    EXPECT_EQ(answer(s.get()), "WELCOME");
    send_message(s.get(), Type::kHello, {{"ring_bytes", 1 << 20}});
    EXPECT_TRUE(answer(s.get()).starts_with("REFUSED: "));
  }
  for (int i = 0; i < 20; ++i) {  // sessions opened and dropped without a word
    UniqueFd s = connect();
    send_message(s.get(), Type::kHello, {{"ring_bytes", 1 << 20}});
    if (i % 2) {
      EXPECT_EQ(answer(s.get()), "WELCOME");
    }
  }
  for (int i = 0; i < 20; ++i) {  // half a message, then gone
    UniqueFd s = connect();
    send_raw(s.get(), valid(Type::kHello, R"({"ring_bytes":10)"));
  }
  for (int i = 0; i < 50; ++i) UniqueFd s = connect();  // connect, nothing, close
  expect_still_serving();
}

// A ring buffer of a size no spare session has is made for its client apart from the daemon's loop;
// a client gone meanwhile holds nothing afterwards: neither its share of the per-user limits nor
// a slot.
TEST_F(Fuzz, ClientsGoneWhileTheirRingIsMadeLeaveNothingHeld) {
  for (int i = 0; i < 8; ++i) {
    UniqueFd s = connect();
    send_message(s.get(), Type::kHello, {{"ring_bytes", 1 << 21}});
  }
  expect_still_serving();
  std::vector<std::unique_ptr<ServiceClient>> open;
  for (int i = 0; i < 4; ++i) {  // the default limit per user, whole again
    open.push_back(std::make_unique<ServiceClient>(daemon_->socket()));
    EXPECT_FALSE(open.back()->hello(1 << 21).rings.empty());
  }
  EXPECT_EQ(daemon_->status()["sessions"], 4);
}

// The client sends its TRACE right after its HELLO: it is answered after the WELCOME, with the
// same checks (here a pidfd that is not one), also when the HELLO waited for its ring buffer.
TEST_F(Fuzz, TraceSentBeforeTheWelcomeIsAnsweredAfterIt) {
  for (uint64_t ring : {uint64_t{32} << 20, uint64_t{1} << 21}) {  // the spare's size, another
    UniqueFd s = connect();
    UniqueFd not_a_pidfd(open("/dev/null", O_RDONLY | O_CLOEXEC));
    send_message(s.get(), Type::kHello, {{"ring_bytes", ring}});
    send_message(s.get(), Type::kTrace, {{"pid", getpid()}}, not_a_pidfd.get());
    EXPECT_EQ(answer(s.get()), "WELCOME");
    std::string traced = answer(s.get());
    EXPECT_NE(traced.find("not a pidfd"), std::string::npos) << traced;
  }
  expect_still_serving();
}

TEST_F(Fuzz, PerUserLimitsRefuseClearly) {
  ASSERT_TRUE(daemon_->wait_sessions(0));
  std::vector<std::unique_ptr<ServiceClient>> open;
  for (int i = 0; i < 4; ++i) {  // the default limit
    open.push_back(std::make_unique<ServiceClient>(daemon_->socket()));
    open.back()->hello(1 << 20);
  }
  ServiceClient fifth(daemon_->socket());
  try {
    fifth.hello(1 << 20);
    ADD_FAILURE() << "a fifth session was opened";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("its limit per user"), std::string::npos) << e.what();
  }
  open.pop_back();
  ASSERT_TRUE(daemon_->wait_sessions(3));
  ServiceClient big(daemon_->socket());
  try {
    big.hello(uint64_t(256) << 20);  // 3 MiB held + 256 MiB > 256 MiB
    ADD_FAILURE() << "a ring buffer beyond the user's memory limit was given";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("MiB this service allows per user"), std::string::npos)
        << e.what();
  }
  open.clear();
  expect_still_serving();
}

}  // namespace
}  // namespace ezio::test
