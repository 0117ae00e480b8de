// SPDX-License-Identifier: GPL-2.0-only
// The hdf5 EZTrace module (docs/hdf5.md) under programs nobody here wrote (nccopy converting to
// NetCDF-4, h5py), a program that does not use HDF5 (bad input: said, the rest recorded), and
// plain EZTrace (`eztrace -l DIR -t "hdf5 posixio"`).
#include <gtest/gtest.h>

#include <fstream>

#include "hdf5_calls.h"
#include "run.h"

namespace fs = std::filesystem;
using ezio::test::Hdf5Call;
using ezio::test::program;

namespace {

const fs::path kModuleDir = fs::path(EZIO_BINARY).parent_path() / "eztrace";

// Every outermost HDF5 call of the archive, all locations together.
std::vector<Hdf5Call> all_calls(const fs::path& anchor) {
  ezio::test::Hdf5Archive archive(anchor);
  std::vector<Hdf5Call> out;
  for (const auto& [location, events] : archive.events()) {
    auto calls = archive.calls(location);
    out.insert(out.end(), calls.begin(), calls.end());
  }
  return out;
}

std::vector<Hdf5Call> named(const std::vector<Hdf5Call>& calls, const std::string& name) {
  std::vector<Hdf5Call> out;
  for (const auto& c : calls)
    if (c.name == name) out.push_back(c);
  return out;
}

// NetCDF-4 is HDF5 underneath: nccopy's copy of each variable is one H5Dwrite of all its bytes.
TEST(Hdf5Programs, NccopyToNetcdf4WritesEachVariableThroughHdf5) {
  ASSERT_TRUE(fs::exists("/usr/bin/nccopy")) << "netcdf-bin is missing (scripts/setup.sh)";
  fs::path dir = ezio::test::scratch_dir("hdf5-e2e-nccopy");
  std::ofstream(dir / "in.cdl") << "netcdf in {\ndimensions:\n  x = 1000 ;\n  y = 100 ;\n"
                                   "variables:\n  float temp(x, y) ;\n    temp:units = \"K\" ;\n"
                                   "  int count(x) ;\n}\n";
  auto gen =
      ezio::test::run({"ncgen", "-b", "-o", (dir / "in.nc").string(), (dir / "in.cdl").string()});
  ASSERT_EQ(gen.status, 0) << gen.err;
  auto r =
      ezio::test::eziotrace({"-t", "hdf5,posixio", "-o", (dir / "out").string(), "--", "nccopy",
                             "-k", "nc4", (dir / "in.nc").string(), (dir / "copy.nc").string()});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  auto calls = all_calls(dir / "out" / "eziotrace.otf2");
  auto writes = named(calls, "H5Dwrite");
  ASSERT_EQ(writes.size(), 2u);
  std::map<std::string, uint64_t> bytes;
  for (const auto& w : writes) {
    EXPECT_EQ(w.bytes_result, w.bytes_request);
    EXPECT_TRUE(w.handle_path.ends_with("copy.nc")) << w.handle_path;
    bytes[w.op.at("hdf5.object")] += w.bytes_request;
  }
  EXPECT_EQ(bytes, (std::map<std::string, uint64_t>{{"/temp", 1000 * 100 * 4}, {"/count", 4000}}));
  EXPECT_GE(fs::file_size(dir / "copy.nc"), 404000u);
  EXPECT_EQ(named(calls, "H5Fcreate").size(), 1u);
  EXPECT_GE(named(calls, "H5Acreate2").size(), 1u);  // temp's units, NetCDF's own attributes
}

// h5py loads libhdf5 with its extensions, RTLD_LOCAL: the module still finds the real calls.
// Serial h5py (python3-h5py-serial): Open MPI's h5py-mpi needs eziotrace to drive Open MPI.
TEST(Hdf5Programs, H5pyWritesAreCountedAsTheScriptMadeThem) {
  auto probe = ezio::test::run({"/usr/bin/python3", "-c", "import h5py"});
  ASSERT_EQ(probe.status, 0) << "python3-h5py is missing (scripts/setup.sh): " << probe.err;
  fs::path dir = ezio::test::scratch_dir("hdf5-e2e-h5py");
  constexpr int kRows = 7;
  auto r = ezio::test::eziotrace({"-t", "hdf5,posixio", "-o", (dir / "out").string(), "--",
                                  "/usr/bin/python3", program("h5py_writes.py"),
                                  (dir / "p.h5").string(), std::to_string(kRows)});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("h5py_writes done"), std::string::npos) << r.out;
  auto writes = named(all_calls(dir / "out" / "eziotrace.otf2"), "H5Dwrite");
  // One per row assignment, and one for create_dataset(data=...).
  ASSERT_EQ(writes.size(), static_cast<size_t>(kRows + 1));
  for (int i = 0; i < kRows; ++i) {
    EXPECT_EQ(writes[i].op.at("hdf5.object"), "/data");
    EXPECT_EQ(writes[i].bytes_result, 100u * 8);
  }
  EXPECT_EQ(writes[kRows].op.at("hdf5.object"), "/once");
  EXPECT_EQ(writes[kRows].bytes_result, 10u * 8);
}

// Bad input: the program does not use HDF5. The run goes on, the rest is recorded, and the
// warning names the module and the library.
TEST(Hdf5Programs, AProgramWithoutHdf5IsSaidAndTheRestRecorded) {
  fs::path dir = ezio::test::scratch_dir("hdf5-e2e-unused");
  auto r =
      ezio::test::eziotrace({"-t", "hdf5,posixio", "-o", (dir / "out").string(), "--", "dd",
                             "if=/dev/zero", "of=" + (dir / "x").string(), "bs=4096", "count=4"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("the hdf5 module was asked for, but no process of the program loaded "
                       "libhdf5 (HDF5)"),
            std::string::npos)
      << r.err;
  ezio::test::Hdf5Archive archive(dir / "out" / "eziotrace.otf2");
  int writes = 0;
  for (const auto& [location, events] : archive.events()) {
    for (const auto& e : events) {
      if (e.kind == ezio::otf2::EventKind::Enter &&
          archive.defs().str(archive.defs().regions.at(e.ref).canonical) == "write")
        ++writes;
    }
  }
  EXPECT_GE(writes, 4);
}

// Plain EZTrace, as its users run it: the module from its directory with `-l`.
TEST(Hdf5Programs, PlainEztraceLoadsTheModuleFromItsDirectory) {
  ASSERT_TRUE(fs::exists(kModuleDir / "libeztrace-hdf5.so"));
  fs::path dir = ezio::test::scratch_dir("hdf5-e2e-plain");
  auto r = ezio::test::run({"eztrace", "-l", kModuleDir.string(), "-t", "hdf5 posixio",
                            program("hdf5_serial"), dir.string()},
                           {"EZTRACE_TRACE_DIR=" + dir.string()});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  auto calls = all_calls(dir / "hdf5_serial_trace" / "eztrace_log.otf2");
  EXPECT_EQ(named(calls, "H5Dwrite").size(), 12u);
  auto create = named(calls, "H5Fcreate");
  ASSERT_EQ(create.size(), 1u);
  EXPECT_TRUE(create[0].handle_path.ends_with("serial.h5")) << create[0].handle_path;
}

// A memory space reused by every write, changed in place between them by each function that can:
// the bytes of each H5Dwrite are its selection's (the module keeps a space's count of points
// until the space changes).
TEST(Hdf5Programs, SpaceChangedInPlaceGivesEachWriteItsOwnBytes) {
  fs::path dir = ezio::test::scratch_dir("hdf5-e2e-reuse");
  auto r = ezio::test::run({"eztrace", "-l", kModuleDir.string(), "-t", "hdf5",
                            program("hdf5_space_reuse"), dir.string()},
                           {"EZTRACE_TRACE_DIR=" + dir.string()});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  auto writes = named(all_calls(dir / "hdf5_space_reuse_trace" / "eztrace_log.otf2"), "H5Dwrite");
  std::vector<uint64_t> bytes;
  for (const auto& w : writes) bytes.push_back(w.bytes_request);
  // hdf5_space_reuse.c's element counts, 4-byte ints.
  EXPECT_EQ(bytes, (std::vector<uint64_t>{8, 20, 64, 16, 24, 12, 0, 28, 36, 16}));
}

}  // namespace
