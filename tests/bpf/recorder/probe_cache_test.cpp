// SPDX-License-Identifier: GPL-2.0-only
// What one recording learns about the kernel serves the next (recorder/probe/kernel_cache.h), and
// what was kept never makes a recording fail: damaged or failing files are dropped and the kernel
// is probed again.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "recorder/service/socket.h"
#include "run.h"

namespace fs = std::filesystem;
using ezio::test::program;
using ezio::test::run;

namespace {

// A private cache directory (mode 0700, as the recorder requires) and recordings that use it.
struct CacheDir {
  explicit CacheDir(const std::string& name) : dir(ezio::test::scratch_dir(name) / "cache") {
    fs::create_directory(dir);
    chmod(dir.c_str(), 0700);
  }
  ezio::test::Run record(const std::string& out, std::vector<std::string> extra = {}) const {
    std::vector<std::string> argv{EZIO_BINARY, "record", "-v", "-f", "-o", out};
    argv.insert(argv.end(), extra.begin(), extra.end());
    for (const char* w : {"--", "true"}) argv.push_back(w);
    return run(argv, {"EZIOTRACE_CACHE_DIR=" + dir.string()});
  }
  std::vector<fs::path> files(const std::string& ending) const {
    std::vector<fs::path> v;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().string().ends_with(ending)) v.push_back(e.path());
    }
    return v;
  }
  fs::path dir;
};

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

std::string probes_of(const fs::path& archive) {
  auto props = ezio::test::dump_archive(archive / "eziotrace.otf2")["properties"];
  std::string all;
  for (auto& [k, v] : props.items()) {
    if (k.starts_with("EZIOTRACE::PROBE::")) all += k + "=" + v.get<std::string>() + "\n";
  }
  return all;
}

}  // namespace

TEST(ProbeCache, SecondRecordingTakesTheFirstOnesPlan) {
  CacheDir c("cache_reuse");
  auto first = c.record((c.dir.parent_path() / "a").string());
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_TRUE(has(first.err, "hooks probed in")) << first.err;
  EXPECT_EQ(c.files(".json").size(), 1u);
  // The cut-down kernel types are made, or their absence noted, once.
  EXPECT_EQ(c.files(".core.btf").size() + c.files(".core.none").size(), 1u);

  auto second = c.record((c.dir.parent_path() / "b").string());
  ASSERT_EQ(second.status, 0) << second.err;
  EXPECT_TRUE(has(second.err, "hooks taken from the probe cache")) << second.err;
  EXPECT_FALSE(has(second.err, "probing again")) << second.err;
  EXPECT_EQ(probes_of(c.dir.parent_path() / "a"), probes_of(c.dir.parent_path() / "b"));
  EXPECT_NE(probes_of(c.dir.parent_path() / "b"), "");
}

TEST(ProbeCache, EachLayerSetHasItsPlan) {
  CacheDir c("cache_layers");
  ASSERT_EQ(c.record((c.dir.parent_path() / "a").string()).status, 0);
  auto r = c.record((c.dir.parent_path() / "b").string(), {"--layers", "syscall"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, "hooks probed in")) << r.err;
  EXPECT_EQ(c.files(".json").size(), 2u);
}

TEST(ProbeCache, DamagedPlanIsIgnored) {
  CacheDir c("cache_damaged");
  ASSERT_EQ(c.record((c.dir.parent_path() / "a").string()).status, 0);
  ASSERT_EQ(c.files(".json").size(), 1u);
  std::ofstream(c.files(".json")[0]) << "{\"format\": 1, \"layers\": [";
  auto r = c.record((c.dir.parent_path() / "b").string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, "hooks probed in")) << r.err;
  EXPECT_EQ(probes_of(c.dir.parent_path() / "a"), probes_of(c.dir.parent_path() / "b"));
}

// Kept types that libbpf cannot use fail the load: the recording goes on without them, says so,
// and they are not made again.
TEST(ProbeCache, KeptFilesThatFailToLoadAreForgotten) {
  CacheDir c("cache_failing");
  ASSERT_EQ(c.record((c.dir.parent_path() / "a").string()).status, 0);
  // Made by the first recording, or, where this kernel rules it out, put there by the test.
  ASSERT_EQ(c.files(".json").size(), 1u);
  std::string plan = c.files(".json")[0].filename().string();
  for (const auto& none : c.files(".core.none")) fs::remove(none);
  std::ofstream(c.dir / (plan.substr(0, plan.find('.')) + ".core.btf"), std::ios::trunc)
      << "not BTF";
  auto r = c.record((c.dir.parent_path() / "b").string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, "probing again")) << r.err;
  EXPECT_EQ(probes_of(c.dir.parent_path() / "a"), probes_of(c.dir.parent_path() / "b"));
  EXPECT_TRUE(c.files(".core.btf").empty());
  EXPECT_EQ(c.files(".core.none").size(), 1u);
  auto again = c.record((c.dir.parent_path() / "c").string());
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_FALSE(has(again.err, "probing again")) << again.err;
}

// A cache directory shared with eziotraced's socket (as root it was /run/eziotrace itself, now
// its private subdirectory): a new plan drops the files of other keys (another kernel, another
// build), never anything else. (It once removed the socket:
// found by the qemu test under systemd, where the service's first start took the socket away.)
TEST(ProbeCache, OnlyTheCachesOwnFilesAreDropped) {
  CacheDir c("cache_shared");
  // Searchable, as eziotraced wants its socket's directory; still the cache's (no write by others).
  chmod(c.dir.c_str(), 0755);
  fs::path sock = c.dir / "eziotraced.sock";
  ezio::UniqueFd listening = ezio::recorder::service::listen_at(sock, 0);  // as eziotraced does
  std::ofstream(c.dir / "notes.txt") << "mine\n";
  fs::path stale = c.dir / "0123456789abcdef.plan-3f.json";
  std::ofstream(stale) << "{}";
  auto r = c.record((c.dir.parent_path() / "a").string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, "hooks probed in")) << r.err;
  EXPECT_TRUE(fs::is_socket(sock));
  EXPECT_TRUE(fs::exists(c.dir / "notes.txt"));
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_EQ(c.files(".json").size(), 1u);
}

TEST(ProbeCache, DirectoryOthersCanWriteIsNotUsed) {
  CacheDir c("cache_open");
  chmod(c.dir.c_str(), 0777);
  auto r = c.record((c.dir.parent_path() / "a").string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, "no probe cache")) << r.err;
  EXPECT_TRUE(fs::is_empty(c.dir));
}

TEST(ProbeCache, NoProbeCacheLeavesNothing) {
  CacheDir c("cache_off");
  auto r = c.record((c.dir.parent_path() / "a").string(), {"--no-probe-cache"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, "hooks probed in")) << r.err;
  EXPECT_TRUE(fs::is_empty(c.dir));
}

// The attach points of the BTF-attached programs are found once, then taken from the cache.
TEST(ProbeCache, AttachPointsAreKept) {
  CacheDir c("cache_attach");
  auto first = c.record((c.dir.parent_path() / "a").string());
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_TRUE(has(first.err, "attach points found in the kernel's BTF")) << first.err;
  ASSERT_EQ(c.files(".attach-ids").size(), 1u);
  auto second = c.record((c.dir.parent_path() / "b").string());
  ASSERT_EQ(second.status, 0) << second.err;
  EXPECT_TRUE(has(second.err, "attach points from")) << second.err;
  EXPECT_EQ(probes_of(c.dir.parent_path() / "a"), probes_of(c.dir.parent_path() / "b"));
}

// Damaged attach points are found again; kept ones the kernel refuses fail the load, which
// forgets what was kept and probes again.
TEST(ProbeCache, DamagedOrFailingAttachPointsAreReplaced) {
  CacheDir c("cache_attach_bad");
  ASSERT_EQ(c.record((c.dir.parent_path() / "a").string()).status, 0);
  ASSERT_EQ(c.files(".attach-ids").size(), 1u);
  fs::path ids = c.files(".attach-ids")[0];
  std::ofstream(ids, std::ios::trunc) << "{\"tp_btf/sys_exit\": {\"id\": ";
  auto damaged = c.record((c.dir.parent_path() / "b").string());
  ASSERT_EQ(damaged.status, 0) << damaged.err;
  EXPECT_TRUE(has(damaged.err, "attach points found in the kernel's BTF")) << damaged.err;
  // Type 1 of the kernel's BTF is no tracepoint nor function: the kernel refuses every program.
  auto kept = nlohmann::json::parse(std::ifstream(ids));
  for (auto& [section, v] : kept.items()) v["id"] = 1;
  std::ofstream(ids, std::ios::trunc) << kept.dump();
  auto failing = c.record((c.dir.parent_path() / "c").string());
  ASSERT_EQ(failing.status, 0) << failing.err;
  EXPECT_TRUE(has(failing.err, "probing again")) << failing.err;
  EXPECT_EQ(probes_of(c.dir.parent_path() / "a"), probes_of(c.dir.parent_path() / "c"));
}
