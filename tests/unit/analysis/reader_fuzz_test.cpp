// SPDX-License-Identifier: GPL-2.0-only
// Mutation fuzzing of the reading path: a valid synthetic archive is damaged in many random ways
// (flipped bytes, truncation, zeroed or inserted ranges, in any of its files) and every analyzer
// runs on it in a forked child. The child must end with success or a clean ezio::Error, never a
// signal, another exception or a hang. Deterministic: EZIO_FUZZ_SEED / EZIO_FUZZ_ITERATIONS
// reproduce or extend a run.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <random>

#include "analysis/analyzers/collective.h"
#include "analysis/analyzers/files.h"
#include "analysis/analyzers/latency.h"
#include "analysis/analyzers/layers.h"
#include "analysis/analyzers/profile.h"
#include "common/error.h"
#include "tests/support/synthetic.h"
#include "tests/unit/analysis/test_util.h"

namespace ezio::test {
namespace {

namespace fs = std::filesystem;

enum ChildExit { kOk = 0, kCleanError = 1, kOtherException = 2 };

int run_analyzers(const fs::path& anchor, const fs::path& svg) {
  try {
    analysis::ProfileOptions p;
    p.common.trace = anchor.string();
    analysis::run_profile(p);
    analysis::LayersOptions l;
    l.common.trace = anchor.string();
    l.group = analysis::GroupBy::kFile;
    analysis::run_layers(l);
    analysis::FilesOptions f;
    f.common.trace = anchor.string();
    analysis::run_files(f);
    analysis::LatencyOptions t;
    t.common.trace = anchor.string();
    t.svg = svg.string();
    analysis::run_latency(t);
    analysis::CollectiveOptions c;
    c.common.trace = anchor.string();
    analysis::run_collective(c);
    return kOk;
  } catch (const ezio::Error&) {
    return kCleanError;
  } catch (...) {
    return kOtherException;
  }
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& p, const std::string& s) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << s;
}

std::string mutate(std::string data, std::mt19937_64& rng) {
  if (data.empty()) return std::string(1, static_cast<char>(rng()));
  auto pos = [&] { return static_cast<size_t>(rng() % data.size()); };
  switch (rng() % 5) {
    case 0:  // flip a few bytes
      for (int i = 0, n = 1 + static_cast<int>(rng() % 8); i < n; ++i) {
        data[pos()] ^= static_cast<char>(1 + rng() % 255);
      }
      break;
    case 1:  // truncate
      data.resize(pos());
      break;
    case 2: {  // zero a range
      size_t at = pos(), len = std::min<size_t>(data.size() - at, 1 + rng() % 64);
      std::fill_n(data.begin() + static_cast<std::ptrdiff_t>(at), len, '\0');
      break;
    }
    case 3: {  // insert random bytes
      std::string junk(1 + rng() % 32, '\0');
      for (auto& c : junk) c = static_cast<char>(rng());
      data.insert(pos(), junk);
      break;
    }
    default:  // large values are the interesting ones for lengths and ids
      data[pos()] = '\xff';
      data[pos()] = '\x7f';
      break;
  }
  return data;
}

uint64_t env_or(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v ? std::strtoull(v, nullptr, 10) : fallback;
}

TEST(ReaderFuzz, DamagedArchivesFailCleanly) {
  TempDir dir;
  fs::path original = write_basic_archive(dir / "orig").parent_path();
  std::vector<fs::path> files;
  for (auto& e : fs::recursive_directory_iterator(original)) {
    if (e.is_regular_file()) files.push_back(fs::relative(e.path(), original));
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 5u);

  const uint64_t seed = env_or("EZIO_FUZZ_SEED", 20251121);
  const uint64_t iterations = env_or("EZIO_FUZZ_ITERATIONS", 300);
  std::mt19937_64 rng(seed);
  int clean = 0, ok = 0;
  for (uint64_t i = 0; i < iterations; ++i) {
    fs::path work = dir / "work";
    fs::remove_all(work);
    fs::copy(original, work, fs::copy_options::recursive);
    // One to three damaged files per case.
    std::string what;
    for (int k = 0, n = 1 + static_cast<int>(rng() % 3); k < n; ++k) {
      const fs::path& victim = files[rng() % files.size()];
      write_file(work / victim, mutate(read_file(work / victim), rng));
      what += victim.string() + " ";
    }
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int null = open("/dev/null", O_WRONLY);
      dup2(null, 1);
      dup2(null, 2);
      alarm(20);  // a hang becomes SIGALRM, which the parent reports
      _exit(run_analyzers(work / "eziotrace.otf2", work / "l.svg"));
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) == kOtherException) {
      // Keep the damaged archive for a post-mortem.
      fs::path keep = fs::temp_directory_path() / ("ezio-fuzz-failure-" + std::to_string(i));
      fs::remove_all(keep);
      fs::copy(work, keep, fs::copy_options::recursive);
      what += "; kept in " + keep.string();
    }
    ASSERT_TRUE(WIFEXITED(status)) << "case " << i << " (seed " << seed << ", files " << what
                                   << "): killed by signal " << WTERMSIG(status);
    ASSERT_NE(WEXITSTATUS(status), kOtherException)
        << "case " << i << " (seed " << seed << ", files " << what
        << "): an exception other than ezio::Error escaped";
    ++(WEXITSTATUS(status) == kOk ? ok : clean);
  }
  // Both outcomes must occur, or the mutations are not reaching the reader.
  EXPECT_GT(clean, 0);
  EXPECT_GT(ok, 0);
  std::printf("%d clean errors, %d successes\n", clean, ok);
}

}  // namespace
}  // namespace ezio::test
