// SPDX-License-Identifier: GPL-2.0-only
// The stack above POSIX (HDF5, MPI-IO) in every analyzer, on the synthetic archive of
// tests/support/stack_archive.h: its layers and funnel, their containment, the collective
// operation's ranks and movers, and "not observed" where a recording has no such layer.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "analysis/analyzers/collective.h"
#include "analysis/analyzers/datasets.h"
#include "analysis/analyzers/files.h"
#include "analysis/analyzers/latency.h"
#include "analysis/analyzers/layers.h"
#include "analysis/analyzers/profile.h"
#include "analysis/model/nesting.h"
#include "run_cli.h"
#include "stack_archive.h"
#include "synthetic.h"
#include "test_util.h"

namespace ezio {
namespace {

using analysis::Layer;
using nlohmann::json;
using test::as_json;
using test::find_row;

class Stack : public ::testing::Test {
 protected:
  void SetUp() override { anchor_ = test::write_stack_archive(dir_.path() / "stack"); }
  template <class Options>
  Options options() const {
    Options o;
    o.common.trace = anchor_.string();
    return o;
  }
  test::TempDir dir_;
  std::filesystem::path anchor_;
};

TEST(StackModel, LayersFromTheSchema) {
  EXPECT_EQ(analysis::layer_of("H5Dwrite"), Layer::kHdf5);
  EXPECT_EQ(analysis::layer_of("H5Acreate_by_name"), Layer::kHdf5);
  EXPECT_EQ(analysis::layer_of("H5open"), Layer::kUser);  // not an API class letter
  EXPECT_EQ(analysis::layer_of("MPI_File_write_at_all"), Layer::kMpiIo);
  EXPECT_EQ(analysis::layer_of("MPI_Send"), Layer::kUser);
  EXPECT_EQ(analysis::layer_of("MPI_File_"), Layer::kUser);
  EXPECT_EQ(analysis::short_name("MPI_File_open"), "MPI_File_open");
  EXPECT_EQ(analysis::parse_layer("MPI-IO"), Layer::kMpiIo);
  EXPECT_EQ(analysis::parse_layer("hdf5"), Layer::kHdf5);
  EXPECT_EQ(analysis::layer_of_paradigm("HDF5"), Layer::kHdf5);
  EXPECT_FALSE(analysis::layer_of_paradigm("linux"));
  EXPECT_EQ(analysis::layer_title(Layer::kMpiIo), "MPI-IO");
  EXPECT_EQ(analysis::layer_key(Layer::kUser), "user");
  EXPECT_EQ(analysis::layer_key(Layer::kBlock), "block");
  EXPECT_TRUE(analysis::may_nest(Layer::kHdf5, Layer::kSyscall));
  EXPECT_FALSE(analysis::may_nest(Layer::kUser, Layer::kMpiIo));
}

// Calls as CallSink delivers them: innermost first, each with its depth.
TEST(StackNesting, TransparentCallsPassTheirChildrenUp) {
  analysis::RegionInfo h5{"H5Dwrite", "H5Dwrite", Layer::kHdf5}, main{"main", "main", Layer::kUser},
      pw{"pwrite", "pwrite", Layer::kUser}, sc{"pwrite64", "syscall:pwrite64", Layer::kSyscall},
      mpi{"MPI_File_write", "MPI_File_write", Layer::kMpiIo};
  auto call = [](const analysis::RegionInfo& r, uint64_t start, uint32_t depth) {
    analysis::Call c;
    c.info = &r;
    c.start = start;
    c.depth = depth;
    return c;
  };
  analysis::NestingCheck n;
  n.begin_location();
  // main ⊃ H5Dwrite ⊃ {barrier (not I/O) ⊃ pwrite ⊃ pwrite64}; then an MPI_File_write in a pwrite.
  n.add(call(sc, 30, 4), true);
  n.add(call(pw, 20, 3), true);
  n.add(call(main, 15, 2), false);  // MPI_Barrier-like: transparent
  n.add(call(h5, 10, 1), true);
  n.add(call(mpi, 60, 2), true);
  n.add(call(pw, 50, 1), true);
  n.add(call(main, 0, 0), false);  // the outermost region is not I/O: its children are outermost
  n.end_location();
  auto at = [&](Layer outer, Layer inner) {
    return n.inside[static_cast<size_t>(outer)][static_cast<size_t>(inner)];
  };
  EXPECT_EQ(at(Layer::kUser, Layer::kSyscall), 1u);
  EXPECT_EQ(at(Layer::kHdf5, Layer::kUser), 1u);  // through the transparent call
  EXPECT_EQ(at(Layer::kUser, Layer::kMpiIo), 1u);
  EXPECT_EQ(n.outermost[static_cast<size_t>(Layer::kHdf5)], 1u);
  EXPECT_EQ(n.outermost[static_cast<size_t>(Layer::kUser)], 1u);
  EXPECT_EQ(n.inversions, 1u);
  ASSERT_EQ(n.inversion_details.size(), 1u);
  EXPECT_NE(n.inversion_details[0].find("MPI-IO call inside pwrite"), std::string::npos);
}

TEST_F(Stack, LayersFromHdf5ToTheDevice) {
  json j = as_json(analysis::run_layers(options<analysis::LayersOptions>()));
  json& t = j["layers"];
  ASSERT_EQ(t.size(), analysis::kLayerCount);
  EXPECT_EQ(t[0]["layer"], "HDF5");  // the stack's order, top first
  EXPECT_EQ(t[1]["layer"], "MPI-IO");
  json h5 = find_row(t, {{"layer", "HDF5"}});
  EXPECT_EQ(h5["writes"], 2);
  EXPECT_EQ(h5["write_bytes"], 8192);
  EXPECT_EQ(h5["other"], 2);  // H5Fcreate
  json mpi = find_row(t, {{"layer", "MPI-IO"}});
  EXPECT_EQ(mpi["writes"], 2);
  EXPECT_EQ(mpi["write_bytes"], 8192);
  EXPECT_EQ(mpi["other"], 2);  // MPI_File_open
  EXPECT_EQ(find_row(t, {{"layer", "User"}})["write_bytes"], 8192);
  EXPECT_EQ(find_row(t, {{"layer", "Syscall"}})["write_bytes"], 8192);
  EXPECT_EQ(find_row(t, {{"layer", "Block"}})["write_bytes"], 8192);
  // The application's bytes are measured where the stack starts: HDF5.
  json cw = find_row(j["cache"], {{"operation", "write"}});
  EXPECT_EQ(cw["source_layer"], "hdf5");
  EXPECT_EQ(cw["app_bytes"], 8192);
  EXPECT_EQ(cw["block_bytes"], 8192);
}

TEST(StackNotObserved, ALayerAbsentFromTheRecordingIsNotZero) {
  test::TempDir dir;
  analysis::LayersOptions o;
  o.common.trace = test::write_basic_archive(dir.path() / "basic").string();
  json t = as_json(analysis::run_layers(o))["layers"];
  for (const char* layer : {"HDF5", "MPI-IO"}) {
    json row = find_row(t, {{"layer", layer}});
    EXPECT_EQ(row["writes"], "not observed") << layer;
    EXPECT_EQ(row["reads"], "not observed") << layer;
    EXPECT_EQ(row["write_bytes"], "not observed") << layer;
    EXPECT_TRUE(row["total_s"].is_null()) << layer;
  }
  EXPECT_EQ(
      find_row(as_json(analysis::run_layers(o))["cache"], {{"operation", "write"}})["source_layer"],
      "syscall");
}

TEST_F(Stack, EachLayerInsideTheOneAbove) {
  json j = as_json(analysis::run_layers(options<analysis::LayersOptions>()));
  json& n = j["nesting"];
  EXPECT_EQ(find_row(n, {{"layer", "MPI-IO"}, {"inside", "HDF5"}})["calls"], 4);
  EXPECT_EQ(find_row(n, {{"layer", "User"}, {"inside", "MPI-IO"}})["calls"], 1);
  EXPECT_EQ(find_row(n, {{"layer", "Syscall"}, {"inside", "User"}})["calls"], 1);
  EXPECT_EQ(find_row(n, {{"layer", "HDF5"}, {"inside", "(none)"}})["calls"], 4);
  for (auto& row : n) EXPECT_EQ(row["inverted"], "no") << row.dump();
  ASSERT_EQ(j["containment"].size(), 1u);
  EXPECT_EQ(j["containment"][0]["inversions"], 0);
  EXPECT_EQ(j["containment"][0]["calls"], 11);  // 4 HDF5, 4 MPI-IO, 1 POSIX, 1 syscall, 1 block
}

TEST(StackInverted, AnUpperLayerInsideALowerOneIsAnInversion) {
  test::TempDir dir;
  analysis::LayersOptions o;
  o.common.trace = test::write_stack_archive(dir.path() / "inverted", true).string();
  json j = as_json(analysis::run_layers(o));
  EXPECT_EQ(j["containment"][0]["inversions"], 1);
  EXPECT_EQ(find_row(j["nesting"], {{"layer", "MPI-IO"}, {"inside", "User"}})["inverted"], "yes");
  std::ostringstream text;
  analysis::print(analysis::run_layers(o), analysis::Format::kText, text);
  EXPECT_NE(text.str().find("a MPI-IO call inside write (User layer)"), std::string::npos)
      << text.str();
}

TEST_F(Stack, CollectiveWhatEachRankAskedAndWhoMovedIt) {
  json j = as_json(analysis::run_collective(options<analysis::CollectiveOptions>()));
  ASSERT_EQ(j["collective"].size(), 1u);
  json op = j["collective"][0];
  EXPECT_EQ(op["file"], "/scratch/out.h5");
  EXPECT_EQ(op["function"], "MPI_File_write_at_all");
  EXPECT_EQ(op["operation"], "write");
  EXPECT_EQ(op["ranks"], 2);
  EXPECT_EQ(op["asked_bytes"], 8192);
  EXPECT_EQ(op["aggregators"], "rank0 [200]");
  EXPECT_EQ(op["posix_bytes"], 8192);
  EXPECT_EQ(op["syscall_bytes"], 8192);
  json r1 = find_row(j["collective_ranks"], {{"rank", "rank1 [201]"}});
  EXPECT_EQ(r1["asked_bytes"], 4096);
  EXPECT_EQ(r1["offset"], 4096);
  EXPECT_EQ(r1["posix_calls"], 0);
  EXPECT_EQ(r1["syscall_calls"], 0);
  json r0 = find_row(j["collective_ranks"], {{"rank", "rank0 [200]"}});
  EXPECT_EQ(r0["posix_calls"], 1);
  EXPECT_EQ(r0["syscall_bytes"], 8192);
  // Rank 1's 4096 bytes were written by rank 0's system call, inside rank 0's own call.
  json& movers = j["collective_movers"];
  ASSERT_EQ(movers.size(), 2u);
  json m1 = find_row(movers, {{"rank", "rank1 [201]"}});
  EXPECT_EQ(m1["moved_by"], "rank0 [200]");
  EXPECT_EQ(m1["bytes"], 4096);
  EXPECT_DOUBLE_EQ(m1["share_percent"].get<double>(), 100.0);
  EXPECT_EQ(find_row(movers, {{"rank", "rank0 [200]"}})["moved_by"], "rank0 [200]");
}

TEST(StackCollective, NoneInATraceWithoutMpiIo) {
  test::TempDir dir;
  analysis::CollectiveOptions o;
  o.common.trace = test::write_basic_archive(dir.path() / "basic").string();
  json j = as_json(analysis::run_collective(o));
  EXPECT_TRUE(j["collective"].empty());
  EXPECT_TRUE(j["collective_movers"].empty());
}

TEST_F(Stack, ProfileFilesLatencyNameTheLayers) {
  auto p = options<analysis::ProfileOptions>();
  p.total_only = true;
  json prof = as_json(analysis::run_profile(p))["profile"];
  EXPECT_EQ(find_row(prof, {{"function", "H5Dwrite"}})["layer"], "hdf5");
  EXPECT_EQ(find_row(prof, {{"function", "MPI_File_write_at_all"}})["layer"], "mpiio");
  json files = as_json(analysis::run_files(options<analysis::FilesOptions>()))["files"];
  EXPECT_EQ(find_row(files, {{"file", "/scratch/out.h5"}, {"layer", "hdf5"}})["writes"], 2);
  EXPECT_EQ(find_row(files, {{"file", "/scratch/out.h5"}, {"layer", "mpiio"}})["write_bytes"],
            8192);
  json lat = as_json(analysis::run_latency(options<analysis::LatencyOptions>()))["latency"];
  EXPECT_EQ(find_row(lat, {{"layer", "hdf5"}, {"operation", "write"}})["count"], 2);
  auto l = options<analysis::LayersOptions>();
  l.common.filters.layers = {"mpiio"};
  json only = as_json(analysis::run_layers(l))["layers"];
  ASSERT_EQ(only.size(), 1u);
  EXPECT_EQ(only[0]["layer"], "MPI-IO");
}

TEST_F(Stack, ReportFunnelStartsAtHdf5) {
  std::filesystem::path page = dir_.path() / "report.html";
  auto r = test::run({test::cli_path(), "report", anchor_.string(), "-o", page.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(page);
  std::stringstream s;
  s << in.rdbuf();
  std::string html = s.str();
  EXPECT_NE(html.find("data-layer=\"hdf5\" data-observed=\"true\" data-reads=\"0\" "
                      "data-writes=\"2\""),
            std::string::npos);
  EXPECT_NE(html.find("data-layer=\"mpiio\" data-observed=\"true\""), std::string::npos);
  EXPECT_NE(html.find("id=\"stack-path\""), std::string::npos);
  EXPECT_NE(html.find("HDF5 8.0 KiB → MPI-IO 8.0 KiB → User 8.0 KiB → Syscall 8.0 KiB"),
            std::string::npos);
  EXPECT_NE(html.find("id=\"collective\""), std::string::npos);
  EXPECT_NE(html.find("MPI_File_write_at_all"), std::string::npos);
  EXPECT_NE(html.find("<a href=\"#collective\">Collective</a><a href=\"#datasets\">Datasets</a>"),
            std::string::npos);
  EXPECT_NE(html.find("<section id=\"datasets\">"), std::string::npos);
  EXPECT_NE(html.find("<tr data-dataset=\"/grid/temperature\" data-writes=\"2\" data-reads=\"0\" "
                      "data-asked-write=\"8192\" data-asked-read=\"0\" data-posix=\"8192\" "
                      "data-syscall=\"8192\">"),
            std::string::npos);
}

// One row per dataset: both ranks' collective H5Dwrite, and below them rank 0's MPI-IO, POSIX and
// system calls (the aggregator's) and the block request its pwrite64 caused (call.id).
TEST_F(Stack, DatasetsSayWhatReachedEachLayerBelow) {
  json j = as_json(analysis::run_datasets(options<analysis::DatasetsOptions>()));
  ASSERT_EQ(j["datasets"].size(), 1u) << j.dump(1);
  json d = j["datasets"][0];
  EXPECT_EQ(d["file"], "/scratch/out.h5");
  EXPECT_EQ(d["object"], "/grid/temperature");
  EXPECT_EQ(d["layout"], "chunked");
  EXPECT_EQ(d["chunk_bytes"], 4096);
  EXPECT_EQ(d["xfer"], "collective");
  EXPECT_EQ(d["processes"], 2);
  EXPECT_EQ(d["writes"], 2);
  EXPECT_EQ(d["reads"], 0);
  EXPECT_EQ(d["asked_write_bytes"], 8192);
  EXPECT_EQ(d["asked_read_bytes"], 0);
  EXPECT_EQ(d["mpiio_bytes"], 8192);
  EXPECT_EQ(d["posix_bytes"], 8192);
  EXPECT_EQ(d["syscall_bytes"], 8192);
  EXPECT_EQ(d["block_bytes"], 8192);
  std::ostringstream csv;
  analysis::print(analysis::run_datasets(options<analysis::DatasetsOptions>()),
                  analysis::Format::kCsv, csv);
  EXPECT_NE(
      csv.str().find("/scratch/out.h5,/grid/temperature,chunked,4096,collective,2,2,0,8192,0,"),
      std::string::npos)
      << csv.str();
}

// A trace without MPI-IO or HDF5: no such tab or section in the report, no dataset row.
TEST(StackReport, NoCollectiveOrDatasetsTabWithoutMpiIoOrHdf5) {
  test::TempDir dir;
  std::filesystem::path trace = test::write_basic_archive(dir.path() / "basic");
  analysis::DatasetsOptions o;
  o.common.trace = trace.string();
  EXPECT_TRUE(as_json(analysis::run_datasets(o))["datasets"].empty());
  std::filesystem::path page = dir.path() / "report.html";
  auto r = test::run({test::cli_path(), "report", trace.string(), "-o", page.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(page);
  std::stringstream s;
  s << in.rdbuf();
  for (const char* absent :
       {"id=\"collective\"", "href=\"#collective\"", "id=\"datasets\"", "href=\"#datasets\""}) {
    EXPECT_EQ(s.str().find(absent), std::string::npos) << absent;
  }
  EXPECT_NE(s.str().find("href=\"#timeline\""), std::string::npos);
}

}  // namespace
}  // namespace ezio
