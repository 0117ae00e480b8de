#include "recorder/service/client.h"

#include "recorder/service/socket.h"

namespace ezio::recorder::service {

ServiceClient::ServiceClient(const std::filesystem::path& socket) : sock_(connect_to(socket)) {}

Message ServiceClient::request(Type type, const nlohmann::json& body, Type reply, int fd) {
  try {
    send_message(sock_.get(), type, body, fd);
  } catch (const Error& e) {
    throw ServiceGone(fmt::format("eziotraced went away ({})", e.what()));
  }
  Message m;
  try {
    if (!receive_message(sock_.get(), m)) throw ServiceGone("eziotraced closed the connection");
  } catch (const ProtocolError& e) {
    fail("eziotraced answered {} with something unreadable: {}", type_name(type), e.what());
  }
  if (m.type == Type::kRefused) {
    std::string why = m.body.contains("message") && m.body["message"].is_string()
                          ? m.body["message"].get<std::string>()
                          : "no reason given";
    fail("{}", why);
  }
  if (m.type != reply) {
    fail("eziotraced answered {} with {} instead of {}", type_name(type), type_name(m.type),
         type_name(reply));
  }
  return m;
}

ServiceClient::Welcome ServiceClient::hello(uint64_t ring_bytes) {
  Message m = request(Type::kHello, {{"ring_bytes", ring_bytes}}, Type::kWelcome);
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

}  // namespace ezio::recorder::service
