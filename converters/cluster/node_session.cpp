// SPDX-License-Identifier: GPL-2.0-only
#include "converters/cluster/node_session.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/error.h"

namespace fs = std::filesystem;

namespace ezio::converters {
namespace {

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) fail("gethostname: {}", errno_text(errno));
  std::string h(name);
  return h.substr(0, h.find('.'));  // Slurm's node names are short
}

void write_marker(const fs::path& file, const std::string& text) {
  std::ofstream f(file);
  f << text << '\n';
}

}  // namespace

std::string session_value(const NodeSession& s) {
  return nlohmann::json{{"parts", s.parts.string()}, {"clock_ref", s.clock_ref}}.dump();
}

std::optional<NodeSession> take_node_session() {
  const char* v = std::getenv(kSessionEnv);
  if (!v) return std::nullopt;
  const std::string value(v);
  unsetenv(kSessionEnv);
  try {
    const auto j = nlohmann::json::parse(value);
    NodeSession s{j.at("parts").get<std::string>(), j.at("clock_ref").get<std::string>()};
    if (!s.parts.is_absolute() || s.clock_ref.empty()) fail("incomplete");
    return s;
  } catch (const std::exception& e) {
    fail("{}={}: not a session of eziotrace ({})", kSessionEnv, value, e.what());
  }
}

fs::path part_path(const NodeSession& s) {
  std::string name = host_name();
  const char* local = std::getenv("SLURM_LOCALID");
  if (local && std::string(local) != "0") name += std::string(".") + local;
  return s.parts / name;
}

void record_part(const NodeSession& s,
                 const std::function<void(const fs::path&, const std::string&)>& record) {
  const fs::path part = part_path(s);
  const std::string name = part.filename().string();
  write_marker(s.parts / (name + kStartedSuffix), std::to_string(getpid()));
  try {
    record(part, s.clock_ref);
  } catch (const std::exception& e) {
    write_marker(s.parts / (name + kFailedSuffix), e.what());
    throw;
  }
}

}  // namespace ezio::converters
