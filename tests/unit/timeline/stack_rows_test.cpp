// SPDX-License-Identifier: GPL-2.0-only
// One row per layer of the stack under each thread, HDF5 and MPI-IO above POSIX, in the walk and
// in both exports (Pajé, Perfetto), on the synthetic archive of tests/support/stack_archive.h.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "converters/timeline/paje.h"
#include "converters/timeline/perfetto.h"
#include "converters/timeline/timeline.h"
#include "stack_archive.h"
#include "tests/unit/analysis/test_util.h"

namespace ezio {
namespace {

using converters::Layer;

// Counts the calls drawn per thread and layer.
class RowCounter : public converters::TimelineSink {
 public:
  void call_begin(OTF2_LocationRef thread, Layer l, uint64_t, otf2::Ref) override {
    ++calls[{thread, l}];
  }
  void call_end(OTF2_LocationRef, Layer, uint64_t, uint64_t, otf2::Ref) override {}
  void link_start(OTF2_LocationRef, uint64_t, converters::LinkKey, converters::BlockOp) override {}
  void request_queued(OTF2_LocationRef, unsigned, uint64_t, uint64_t, converters::BlockOp,
                      bool) override {}
  void request_issued(OTF2_LocationRef, unsigned, uint64_t, converters::BlockOp) override {}
  void request_done(OTF2_LocationRef, unsigned, uint64_t, uint64_t, uint64_t, converters::BlockOp,
                    uint64_t) override {}
  void cache_grew(otf2::Ref, uint64_t, uint64_t,
                  const std::array<uint64_t, converters::kCacheVarCount>&,
                  const std::array<uint64_t, converters::kCacheVarCount>&) override {}
  std::map<std::pair<OTF2_LocationRef, Layer>, int> calls;
};

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class StackRows : public ::testing::Test {
 protected:
  void SetUp() override { anchor_ = test::write_stack_archive(dir_.path() / "stack"); }
  test::TempDir dir_;
  std::filesystem::path anchor_;
};

TEST_F(StackRows, EachLayerItsRowInStackOrder) {
  EXPECT_EQ(converters::kRowLayers.front(), Layer::kHdf5);
  EXPECT_EQ(converters::row_index(Layer::kMpiIo), 1u);
  EXPECT_EQ(converters::row_index(Layer::kUser), 2u);
  converters::Timeline t(anchor_, {});
  RowCounter rows;
  t.run(rows);
  EXPECT_EQ((rows.calls[{1000, Layer::kHdf5}]), 2);   // H5Fcreate, H5Dwrite
  EXPECT_EQ((rows.calls[{1000, Layer::kMpiIo}]), 2);  // MPI_File_open, _write_at_all
  EXPECT_EQ((rows.calls[{1000, Layer::kUser}]), 1);
  EXPECT_EQ((rows.calls[{1000, Layer::kSyscall}]), 1);
  EXPECT_EQ((rows.calls[{1001, Layer::kMpiIo}]), 2);
  EXPECT_EQ((rows.calls[{1001, Layer::kUser}]), 0);
}

TEST_F(StackRows, LayersOptionLeavesARowOut) {
  converters::TimelineOptions o;
  o.layers.reset(static_cast<size_t>(Layer::kMpiIo));
  converters::Timeline t(anchor_, o);
  RowCounter rows;
  t.run(rows);
  EXPECT_EQ((rows.calls[{1000, Layer::kMpiIo}]), 0);
  EXPECT_EQ((rows.calls[{1000, Layer::kHdf5}]), 2);
}

TEST_F(StackRows, PajeHasAContainerPerLayer) {
  converters::Timeline t(anchor_, {});
  std::filesystem::path out = dir_.path() / "stack.trace";
  converters::export_paje(t, out, false);
  std::string paje = slurp(out);
  for (const char* row :
       {"t1000_hdf5", "t1000_mpiio", "t1000_user", "t1000_syscall", "t1001_hdf5", "t1001_mpiio"}) {
    EXPECT_NE(paje.find(row), std::string::npos) << row;
  }
  EXPECT_EQ(paje.find("t1001_user"), std::string::npos);  // rank 1 made no POSIX call
  EXPECT_NE(paje.find("\"hdf5:H5Dwrite\""), std::string::npos);
  EXPECT_NE(paje.find("\"mpiio:MPI_File_write_at_all\""), std::string::npos);
  EXPECT_NE(paje.find("\"HDF5\""), std::string::npos);  // the row's name
}

TEST_F(StackRows, PerfettoHasATrackPerLayer) {
  converters::Timeline t(anchor_, {});
  std::filesystem::path out = dir_.path() / "stack.json";
  converters::export_perfetto(t, out, false);
  auto j = nlohmann::json::parse(slurp(out));
  std::map<std::string, uint64_t> tracks;
  std::map<uint64_t, std::string> slice_row;
  for (auto& e : j["traceEvents"]) {
    if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name") {
      tracks[e["args"]["name"]] = e["tid"];
    }
  }
  ASSERT_TRUE(tracks.contains("rank0 [1000] HDF5")) << j.dump().substr(0, 2000);
  ASSERT_TRUE(tracks.contains("rank0 [1000] MPI-IO"));
  EXPECT_EQ(tracks["rank0 [1000] HDF5"], 1000u * 8 + 0);
  EXPECT_EQ(tracks["rank0 [1000] MPI-IO"], 1000u * 8 + 1);
  EXPECT_EQ(tracks["rank0 [1000] User"], 1000u * 8 + 2);
  int h5dwrite = 0;
  for (auto& e : j["traceEvents"]) {
    if (e.value("ph", "") == "X" && e.value("name", "") == "H5Dwrite") {
      ++h5dwrite;
      EXPECT_EQ(e["tid"].get<uint64_t>() % 8, 0u);
    }
  }
  EXPECT_EQ(h5dwrite, 2);
}

}  // namespace
}  // namespace ezio
