// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// What the merge's tests share: real EZTrace runs of io_threads (3 threads, an exec'd child) and of
// mpi_io under mpirun in EZTrace's MPI mode, each merged with a kernel archive synthesized from
// it (synthetic_kernel.h).
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "converters/eztrace/environment.h"
#include "converters/merge/merge.h"
#include "synthetic_kernel.h"

namespace ezio::test {

struct Fixture {
  converters::EztraceSetup setup;
  std::vector<converters::EztraceInput> inputs;
  std::filesystem::path dir;
  std::string app_out;
};

// Runs io_threads under EZTrace + the helper in a fresh scratch directory `name` and reads its
// archives.
Fixture trace_io_threads(const std::string& name);
// The same, once for all tests of the program.
const Fixture& traced_run();

struct MpiFixture : Fixture {
  std::map<int, uint32_t> pid_of_rank;
};
// Runs mpi_io under mpirun with EZTrace's mpich and posixio modules and the helper, once.
const MpiFixture& mpi_traced_run();

// Per thread location: the user-level events as (kind, region name) in order.
using Sequence = std::vector<std::pair<std::string, std::string>>;
std::string describe(const converters::Definitions& d, const converters::Event& e);

struct Merged {
  converters::MergeReport report;
  converters::Archive archive;
  SyntheticCounts counts;
  std::filesystem::path anchor;
};

// f's archives merged with a kernel archive synthesized from them, EZTrace's clock shifted by
// shift_ns.
Merged merge_with_synthetic(const std::string& name, int64_t shift_ns,
                            const Fixture& f = traced_run(), uint64_t lost_syscalls = 0);

// The id of each definition is its index: dense, as the merge promises.
template <typename Defs>
void expect_dense_ids(const Defs& defs, const char* what) {
  std::set<converters::Ref> ids;
  for (const auto& d : defs) ids.insert(d.id);
  EXPECT_EQ(ids.size(), defs.size()) << what << " defined twice";
  if (!ids.empty()) {
    EXPECT_EQ(*ids.rbegin(), defs.size() - 1) << what << " ids not dense";
  }
}

const converters::CommDef* comm_named(const converters::Definitions& d, const std::string& name);

}  // namespace ezio::test
