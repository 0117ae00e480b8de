// SPDX-License-Identifier: GPL-2.0-only
// The typed event helpers of common/otf2 (EventWriter, EventAttributes): each attribute's value
// is written with the type common/schema/attributes.h gives it, as an independent reader
// (python3-otf2, tests/support/otf2_dump.py) reads it, and a value of the wrong kind is refused.
#include "common/otf2/event_writer.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "common/otf2/writer.h"
#include "run.h"

namespace {

using ezio::otf2::ArchiveWriter;
using ezio::otf2::EventWriter;
namespace schema = ezio::schema;

constexpr OTF2_LocationRef kThread = 42;

// One thread location of one process on one machine.
void define_thread(ArchiveWriter& w) {
  auto node = w.system_tree_node("testhost", "machine");
  auto group = w.location_group("app [42]", OTF2_LOCATION_GROUP_TYPE_PROCESS, node);
  w.location(kThread, "app [42]", OTF2_LOCATION_TYPE_CPU_THREAD, group);
}

TEST(EventWriter, AttributesKeepTheSchemasTypes) {
  auto dir = ezio::test::scratch_dir("event_writer_types");
  {
    ArchiveWriter w(dir);
    define_thread(w);
    auto fd = w.attribute(schema::syscall::kFd);        // INT64
    auto bytes = w.attribute(schema::syscall::kBytes);  // UINT64
    auto point = w.attribute(schema::fs::kPoint);       // UINT8
    auto hits = w.attribute(schema::fs::kHits);         // UINT32
    auto dev = w.attribute(schema::vfs::kDev);          // STRING
    auto region =
        w.region("write", "syscall:write", "eziotrace syscall layer", OTF2_REGION_ROLE_FILE_IO);
    EventWriter e = w.event_writer(kThread);
    e.enter(100, region,
            e.attributes()
                .add(fd, -1)
                .add(bytes, uint64_t{1} << 40)
                .add(point, 1)
                .add(hits, 70000)
                .add_string(dev, "254:0"));
    e.leave(200, region);
    w.close();
  }
  auto j = ezio::test::run({"/usr/bin/python3", EZIO_TEST_SUPPORT_DIR "/otf2_dump.py", "--events",
                            (dir / "eziotrace.otf2").string()});
  ASSERT_EQ(j.status, 0) << j.err;
  auto dump = nlohmann::json::parse(j.out);
  const auto& events = dump["locations"]["42"]["events"];
  ASSERT_EQ(events.size(), 2u) << events;
  const auto& a = events[0]["a"];
  EXPECT_EQ(a["syscall.fd"], -1);
  EXPECT_EQ(a["syscall.bytes"], uint64_t{1} << 40);
  EXPECT_EQ(a["fs.point"], 1);
  EXPECT_EQ(a["fs.hits"], 70000);
  EXPECT_EQ(a["vfs.dev"], "254:0");
  EXPECT_EQ(events[1]["k"], "Leave");
}

TEST(EventWriter, AValueOfTheWrongKindIsRefused) {
  auto dir = ezio::test::scratch_dir("event_writer_kinds");
  ArchiveWriter w(dir);
  define_thread(w);
  EventWriter e = w.event_writer(kThread);
  auto dev = w.attribute(schema::vfs::kDev);
  auto inode = w.attribute(schema::vfs::kInode);
  EXPECT_THROW(e.attributes().add(dev, 3), ezio::Error);
  EXPECT_THROW(e.attributes().add_string(inode, "12"), ezio::Error);
}

}  // namespace
