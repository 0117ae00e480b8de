// SPDX-License-Identifier: GPL-2.0-only
// The hdf5 EZTrace module (docs/hdf5.md) on serial HDF5: tests/programs/hdf5/hdf5_serial.c under
// `eziotrace -t hdf5,posixio`, read back from the merged archive. Every HDF5 call counted, each
// transfer's bytes, layout, transfer mode and object path, and where HDF5 wrote the data: inside
// the H5Dwrite (large contiguous pieces, chunks without a chunk cache) or later, in H5Dclose or
// H5Fflush (HDF5's sieve buffer, the chunk cache, compact data in the object header).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "hdf5_calls.h"
#include "run.h"

namespace fs = std::filesystem;
using ezio::test::Hdf5Call;
using ezio::test::program;

namespace {

// hdf5_serial.c's sizes, in bytes.
constexpr uint64_t kQuarter = 32768 * 4, kBig = 4 * kQuarter, kChunked = 64 * 64 * 8,
                   kChunkBytes = 16 * 16 * 8, kCompact = 100 * 2, kSeries = 256 * 4,
                   kSmallHalf = 512 * 4, kAnon = 64 * 4, kFail = 10 * 4, kUnits = 3 * 4,
                   kVersion = 4, kChunkedRows = 16 * 64 * 8;
// Bytes HDF5 read inside the H5Dreads (HDF5 1.10.8): nothing for the compact data (in the object
// header, cached), the chunked rows' 4 chunks and the chunk index's v1 B-tree node (2616 bytes:
// 24 of header, 65 keys of 32, 64 child addresses of 8), the contiguous dataset whole.
constexpr uint64_t kCompactReadPosix = 0, kChunkedReadPosix = kChunkedRows + 2616,
                   kTemperatureReadPosix = kBig;
const std::string kObject = "hdf5.object", kLayout = "hdf5.layout", kXfer = "hdf5.xfer",
                  kChunk = "hdf5.chunk_bytes";

class Hdf5Serial : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(fs::exists(program("hdf5_serial")))
        << "hdf5_serial was not built: libhdf5-dev is missing (run scripts/setup.sh)";
    ASSERT_TRUE(fs::exists(fs::path(EZIO_BINARY).parent_path() / "eztrace/libeztrace-hdf5.so"))
        << "the hdf5 module was not built: libhdf5-dev or libeztrace-dev is missing";
    fs::path dir = ezio::test::scratch_dir("hdf5-e2e-serial");
    auto r = ezio::test::eziotrace({"-t", "hdf5,posixio", "-o", (dir / "out").string(), "--",
                                    program("hdf5_serial"), dir.string()});
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_EQ(r.err.find("hdf5 module was asked for"), std::string::npos) << r.err;
    anchor_ = new fs::path(dir / "out" / "eziotrace.otf2");
    ezio::test::Hdf5Archive archive(*anchor_);
    calls_ = new std::vector<Hdf5Call>;
    for (const auto& [location, events] : archive.events()) {
      auto calls = archive.calls(location);
      calls_->insert(calls_->end(), calls.begin(), calls.end());
    }
  }
  static void TearDownTestSuite() {
    delete calls_;
    delete anchor_;
  }
  // The calls named `name`, in order.
  static std::vector<Hdf5Call> named(const std::string& name) {
    std::vector<Hdf5Call> out;
    for (const auto& c : *calls_)
      if (c.name == name) out.push_back(c);
    return out;
  }
  static std::vector<Hdf5Call>* calls_;
  static fs::path* anchor_;
};
std::vector<Hdf5Call>* Hdf5Serial::calls_;
fs::path* Hdf5Serial::anchor_;

TEST_F(Hdf5Serial, EveryCallIsCountedOnce) {
  std::map<std::string, int> want = {
      {"H5Fcreate", 1},      {"H5Fopen", 1},         {"H5Fflush", 1},   {"H5Fclose", 2},
      {"H5Gcreate2", 1},     {"H5Gopen2", 1},        {"H5Gclose", 2},   {"H5Dcreate2", 5},
      {"H5Dcreate_anon", 1}, {"H5Dopen2", 3},        {"H5Dwrite", 12},  {"H5Dread", 3},
      {"H5Dset_extent", 1},  {"H5Dclose", 9},        {"H5Acreate2", 1}, {"H5Acreate_by_name", 1},
      {"H5Aopen", 1},        {"H5Aopen_by_name", 1}, {"H5Awrite", 2},   {"H5Aread", 2},
      {"H5Aclose", 4}};
  EXPECT_EQ(ezio::test::count_names(*calls_), want);
  // otf2-print reads the merged archive (the module's definitions) without a warning.
  auto p = ezio::test::run({"otf2-print", "-A", anchor_->string()});
  EXPECT_EQ(p.status, 0);
  EXPECT_EQ(p.err, "") << "otf2-print";
}

TEST_F(Hdf5Serial, WritesSayTheirBytesLayoutTransferModeAndObject) {
  struct Want {
    std::string object, layout;
    uint64_t bytes, done, chunk;
  };
  const std::vector<Want> want = {
      {"/g/temperature", "contiguous", kQuarter, kQuarter, 0},
      {"/g/temperature", "contiguous", kQuarter, kQuarter, 0},
      {"/g/temperature", "contiguous", kQuarter, kQuarter, 0},
      {"/g/temperature", "contiguous", kQuarter, kQuarter, 0},
      {"/g/temperature", "contiguous", kFail, 0, 0},  // failed: nothing done
      {"/g/chunked", "chunked", kChunked, kChunked, kChunkBytes},
      {"/compact", "compact", kCompact, kCompact, 0},
      {"/g/series", "chunked", kSeries, kSeries, kSeries},
      {"/g/series", "chunked", kSeries, kSeries, kSeries},
      {"/g/small", "contiguous", kSmallHalf, kSmallHalf, 0},
      {"/g/small", "contiguous", kSmallHalf, kSmallHalf, 0},
      {"", "contiguous", kAnon, kAnon, 0},  // anonymous: no path
  };
  auto writes = named("H5Dwrite");
  ASSERT_EQ(writes.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("H5Dwrite #" + std::to_string(i));
    const auto& w = writes[i];
    ASSERT_TRUE(w.has_op);
    EXPECT_EQ(w.mode, OTF2_IO_OPERATION_MODE_WRITE);
    EXPECT_EQ(w.flags, OTF2_IO_OPERATION_FLAG_NONE);
    EXPECT_EQ(w.bytes_request, want[i].bytes);
    EXPECT_EQ(w.bytes_result, want[i].done);
    EXPECT_TRUE(w.handle_path.ends_with("serial.h5")) << w.handle_path;
    EXPECT_EQ(w.op.count(kObject) ? w.op.at(kObject) : "", want[i].object);
    EXPECT_EQ(w.op.at(kLayout), want[i].layout);
    EXPECT_EQ(w.op.at(kXfer), "independent");
    EXPECT_EQ(w.op_number.count(kChunk) ? w.op_number.at(kChunk) : 0, want[i].chunk);
  }
}

// Where HDF5 writes: large contiguous pieces and chunks without a cache in the H5Dwrite itself;
// small pieces (the sieve buffer), cached chunks and compact data later.
TEST_F(Hdf5Serial, EachWriteHoldsThePosixCallsAndSystemCallsItMade) {
  auto writes = named("H5Dwrite");
  ASSERT_EQ(writes.size(), 12u);
  for (size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE("contiguous quarter " + std::to_string(i));
    EXPECT_EQ(writes[i].inside("pwrite"), 1);
    EXPECT_EQ(writes[i].posix_write_bytes, kQuarter);
    EXPECT_EQ(writes[i].syscall_write_bytes, kQuarter);
  }
  EXPECT_EQ(writes[4].inside("pwrite"), 0) << "the failed write";
  EXPECT_EQ(writes[5].inside("pwrite"), static_cast<int>(kChunked / kChunkBytes));
  EXPECT_EQ(writes[5].posix_write_bytes, kChunked);
  EXPECT_EQ(writes[5].syscall_write_bytes, kChunked);
  for (size_t i = 6; i < 12; ++i) {
    SCOPED_TRACE("buffered write " + std::to_string(i));
    EXPECT_EQ(writes[i].inside("pwrite"), 0);
    EXPECT_EQ(writes[i].inside("syscall:pwrite64"), 0);
  }
  // The small dataset's two halves reach the file when it is closed (H5Dclose #5: temperature,
  // chunked, compact, series, small).
  auto closes = named("H5Dclose");
  ASSERT_EQ(closes.size(), 9u);
  EXPECT_GE(closes[4].posix_write_bytes, 2 * kSmallHalf);
  EXPECT_EQ(closes[4].syscall_write_bytes, closes[4].posix_write_bytes);
  // The series' cached chunks when it is closed (H5Dclose #4).
  EXPECT_GE(closes[3].posix_write_bytes, 2 * kSeries);
  // The metadata, compact data included, by the flush.
  auto flush = named("H5Fflush");
  ASSERT_EQ(flush.size(), 1u);
  EXPECT_GE(flush[0].posix_write_bytes, kCompact);
  EXPECT_EQ(flush[0].mode, OTF2_IO_OPERATION_MODE_FLUSH);
  EXPECT_EQ(flush[0].bytes_request, 0u);
  EXPECT_EQ(flush[0].op.at(kObject), "/");
}

TEST_F(Hdf5Serial, ReadsSayTheirBytesAndObject) {
  auto reads = named("H5Dread");
  ASSERT_EQ(reads.size(), 3u);
  const std::vector<std::tuple<std::string, std::string, uint64_t>> want = {
      {"/g/temperature", "contiguous", kBig},
      {"/g/chunked", "chunked", kChunkedRows},
      {"/compact", "compact", kCompact}};
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(std::get<0>(want[i]));
    EXPECT_EQ(reads[i].mode, OTF2_IO_OPERATION_MODE_READ);
    EXPECT_EQ(reads[i].bytes_request, std::get<2>(want[i]));
    EXPECT_EQ(reads[i].bytes_result, std::get<2>(want[i]));
    EXPECT_EQ(reads[i].op.at(kObject), std::get<0>(want[i]));
    EXPECT_EQ(reads[i].op.at(kLayout), std::get<1>(want[i]));
  }
}

TEST_F(Hdf5Serial, CreatesAndOpensNameTheirObject) {
  std::vector<std::string> created;
  for (const auto& c : named("H5Dcreate2")) created.push_back(c.enter.at(kObject));
  EXPECT_EQ(created, (std::vector<std::string>{"/g/temperature", "/g/chunked", "/compact",
                                               "/g/series", "/g/small"}));
  auto creates = named("H5Dcreate2");
  EXPECT_EQ(creates[0].enter.at(kLayout), "contiguous");
  EXPECT_EQ(creates[1].enter.at(kLayout), "chunked");
  EXPECT_EQ(creates[1].enter_number.at(kChunk), kChunkBytes);
  EXPECT_EQ(creates[2].enter.at(kLayout), "compact");
  EXPECT_EQ(named("H5Dcreate_anon")[0].enter.count(kObject), 0u);
  // Opens: the path on the ENTER, the layout (known once open) on the LEAVE.
  auto opens = named("H5Dopen2");
  ASSERT_EQ(opens.size(), 3u);
  EXPECT_EQ(opens[0].enter.at(kObject), "/g/temperature");
  EXPECT_EQ(opens[0].leave.at(kLayout), "contiguous");
  EXPECT_EQ(opens[1].enter.at(kObject), "/g/chunked");
  EXPECT_EQ(opens[1].leave.at(kLayout), "chunked");
  EXPECT_EQ(opens[2].enter.at(kObject), "/compact");
  EXPECT_EQ(opens[2].leave.at(kLayout), "compact");
  EXPECT_EQ(named("H5Gcreate2")[0].enter.at(kObject), "/g");
  EXPECT_EQ(named("H5Gopen2")[0].enter.at(kObject), "/g");
  EXPECT_EQ(named("H5Acreate2")[0].enter.at(kObject), "/g/temperature@units");
  EXPECT_EQ(named("H5Acreate_by_name")[0].enter.at(kObject), "/g@version");
  EXPECT_EQ(named("H5Aopen")[0].enter.at(kObject), "/g/temperature@units");
  EXPECT_EQ(named("H5Aopen_by_name")[0].enter.at(kObject), "/g@version");
}

TEST_F(Hdf5Serial, AttributesAreTransfersOfTheirOwn) {
  for (const char* name : {"H5Awrite", "H5Aread"}) {
    SCOPED_TRACE(name);
    auto calls = named(name);
    ASSERT_EQ(calls.size(), 2u);
    EXPECT_EQ(calls[0].op.at(kObject), "/g/temperature@units");
    EXPECT_EQ(calls[0].bytes_request, kUnits);
    EXPECT_EQ(calls[0].bytes_result, kUnits);
    EXPECT_EQ(calls[1].op.at(kObject), "/g@version");
    EXPECT_EQ(calls[1].bytes_request, kVersion);
    EXPECT_EQ(calls[1].op.at(kXfer), "independent");
    EXPECT_EQ(calls[1].op.count(kLayout), 0u);
  }
}

// `eziotrace datasets`: one row per dataset, with the calls and bytes asked above, and the bytes
// HDF5 moved inside them (the pwrites of the H5Dwrite test above; the cached pieces reach the file
// in H5Dclose/H5Fflush, outside every row).
TEST_F(Hdf5Serial, DatasetsGiveEachDatasetsCallsBytesAndWhatReachedPosix) {
  auto r = ezio::test::eziotrace({"datasets", "--json", anchor_->string()});
  ASSERT_EQ(r.status, 0) << r.err;
  auto rows = nlohmann::json::parse(r.out)["datasets"];
  struct Want {
    std::string object, layout;
    uint64_t chunk, writes, reads, asked_write, asked_read, posix;
  };
  const std::vector<Want> want = {
      {"", "contiguous", 0, 1, 0, kAnon, 0, 0},
      {"/compact", "compact", 0, 1, 1, kCompact, kCompact, kCompactReadPosix},
      {"/g/chunked", "chunked", kChunkBytes, 1, 1, kChunked, kChunkedRows,
       kChunked + kChunkedReadPosix},
      {"/g/series", "chunked", kSeries, 2, 0, 2 * kSeries, 0, 0},
      {"/g/small", "contiguous", 0, 2, 0, 2 * kSmallHalf, 0, 0},
      {"/g/temperature", "contiguous", 0, 5, 1, kBig + kFail, kBig, kBig + kTemperatureReadPosix}};
  ASSERT_EQ(rows.size(), want.size()) << rows.dump(1);
  for (size_t i = 0; i < want.size(); ++i) {
    const auto& row = rows[i];
    const Want& w = want[i];
    SCOPED_TRACE(w.object);
    EXPECT_TRUE(row["file"].get<std::string>().ends_with("serial.h5")) << row["file"];
    EXPECT_EQ(row["object"], w.object.empty() ? "(anonymous)" : w.object);
    EXPECT_EQ(row["layout"], w.layout);
    if (w.chunk) {
      EXPECT_EQ(row["chunk_bytes"], w.chunk);
    } else {
      EXPECT_TRUE(row["chunk_bytes"].is_null()) << row;
    }
    EXPECT_EQ(row["xfer"], "independent");
    EXPECT_EQ(row["processes"], 1);
    EXPECT_EQ(row["writes"], w.writes);
    EXPECT_EQ(row["reads"], w.reads);
    EXPECT_EQ(row["asked_write_bytes"], w.asked_write);
    EXPECT_EQ(row["asked_read_bytes"], w.asked_read);
    EXPECT_EQ(row["mpiio_bytes"], "not observed");  // serial: no mpiio module
    EXPECT_EQ(row["posix_bytes"], w.posix);
    EXPECT_EQ(row["syscall_bytes"], w.posix);  // each pwrite/pread is one system call
  }
}

TEST_F(Hdf5Serial, EachFileOpenIsAHandle) {
  for (const char* name : {"H5Fcreate", "H5Fopen"}) {
    auto c = named(name);
    ASSERT_EQ(c.size(), 1u);
    EXPECT_TRUE(c[0].created_handle) << name;
    EXPECT_TRUE(c[0].handle_path.ends_with("serial.h5")) << c[0].handle_path;
    EXPECT_EQ(c[0].enter.at(kObject), "/");
  }
  for (const auto& c : named("H5Fclose")) EXPECT_TRUE(c.destroyed_handle);
}

}  // namespace
