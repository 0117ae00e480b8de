// SPDX-License-Identifier: GPL-2.0-only
// Writes a synthetic eziotrace archive of about N events for the analyzer benchmark: T threads
// doing syscall writes (with a nested vfs_write) and reads on a few files each, and a block
// device location, following docs/trace-model.md. Usage: gen_archive OUT_DIR EVENTS [THREADS]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/error.h"
#include "common/otf2/writer.h"
#include "common/schema/layers.h"
#include "common/schema/properties.h"

namespace {

using ezio::otf2::EventWriter;
using ezio::otf2::Ref;
using ezio::otf2::TypedAttribute;
namespace schema = ezio::schema;

void generate(const std::string& dir, uint64_t events, uint64_t threads) {
  ezio::otf2::ArchiveWriter w(dir);
  Ref node = w.system_tree_node("benchhost", "machine");
  for (std::string_view layer : ezio::schema::kKernelIoLayers) {
    w.system_tree_node_property(node, ezio::schema::lost_property(layer), uint64_t{0});
  }
  Ref proc = w.location_group("bench [1000]", OTF2_LOCATION_GROUP_TYPE_PROCESS, node);
  Ref io = w.io_paradigm("linux", "Linux kernel I/O", OTF2_IO_PARADIGM_CLASS_SERIAL,
                         OTF2_IO_PARADIGM_FLAG_OS);
  TypedAttribute a_bytes = w.attribute(schema::syscall::kBytes);
  TypedAttribute a_result = w.attribute(schema::syscall::kResult);
  TypedAttribute a_call = w.attribute(schema::kCallId);
  TypedAttribute b_sector = w.attribute(schema::block::kSector);
  auto region = [&](const char* layer, const char* name) {
    return w.region(name, std::string(layer) + ":" + name,
                    std::string("eziotrace ") + layer + " layer", OTF2_REGION_ROLE_FILE_IO);
  };
  Ref write = region("syscall", "write"), read = region("syscall", "read");
  Ref vfs_write = region("vfs", "vfs_write");

  constexpr uint64_t kFilesPerThread = 4;
  std::vector<Ref> handles;
  for (uint64_t t = 0; t < threads; ++t) {
    w.location(1001 + t, "bench [" + std::to_string(1001 + t) + "]", OTF2_LOCATION_TYPE_CPU_THREAD,
               proc);
    for (uint64_t f = 0; f < kFilesPerThread; ++f) {
      std::string path = "/bench/t" + std::to_string(t) + "/f" + std::to_string(f);
      handles.push_back(w.io_handle(path + " [pid 1000 fd " + std::to_string(3 + f) + "]",
                                    w.io_file(path, node), io));
    }
  }
  const OTF2_LocationRef dev = (uint64_t{1} << 32) | 1;
  Ref devg = w.location_group("block vda", OTF2_LOCATION_GROUP_TYPE_PROCESS, node);
  w.location(dev, "block vda", OTF2_LOCATION_TYPE_CPU_THREAD, devg);
  Ref dev_handle =
      w.io_handle("/dev/vda", w.io_file("/dev/vda", node), io, OTF2_IO_HANDLE_FLAG_PRE_CREATED);

  // 6 events per write (with vfs_write), 4 per read, 3 per block request every 8 writes.
  const uint64_t per_thread = events / threads;
  uint64_t call_id = 1, block_time = 0;
  EventWriter d = w.event_writer(dev);
  for (uint64_t t = 0; t < threads; ++t) {
    EventWriter e = w.event_writer(1001 + t);
    uint64_t time = 1000, written = 0;
    for (uint64_t i = 0; written < per_thread; ++i) {
      Ref h = handles[t * kFilesPerThread + i % kFilesPerThread];
      uint64_t bytes = uint64_t{512} << (i % 6);
      uint64_t dur = 300 + (i * 7919) % 5000;
      bool is_write = i % 3 != 2;
      e.enter(time, is_write ? write : read,
              e.attributes()
                  .add(a_bytes, bytes)
                  .add(a_result, static_cast<int64_t>(bytes))
                  .add(a_call, call_id));
      e.io_operation_begin(time, h,
                           is_write ? OTF2_IO_OPERATION_MODE_WRITE : OTF2_IO_OPERATION_MODE_READ,
                           OTF2_IO_OPERATION_FLAG_NONE, bytes, call_id);
      if (is_write) {
        e.enter(time + 50, vfs_write);
        e.leave(time + dur - 50, vfs_write);
      }
      e.io_operation_complete(time + dur, h, bytes, call_id);
      e.leave(time + dur, is_write ? write : read);
      written += is_write ? 6 : 4;
      if (t == 0 && is_write && i % 8 == 0) {
        block_time = std::max(block_time, time + dur);
        d.io_operation_begin(block_time, dev_handle, OTF2_IO_OPERATION_MODE_WRITE,
                             OTF2_IO_OPERATION_FLAG_NON_BLOCKING, bytes * 8, i,
                             d.attributes().add(b_sector, i * 64));
        d.io_operation_issued(block_time + 500, dev_handle, i);
        block_time += 2000;
        d.io_operation_complete(block_time, dev_handle, bytes * 8, i);
      }
      ++call_id;
      time += dur + 100;
    }
  }
  w.close();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s OUT_DIR EVENTS [THREADS]\n", argv[0]);
    return 2;
  }
  try {
    generate(argv[1], std::strtoull(argv[2], nullptr, 10),
             argc > 3 ? std::max<uint64_t>(1, std::strtoull(argv[3], nullptr, 10)) : 4);
  } catch (const ezio::Error& e) {
    std::fprintf(stderr, "gen_archive: %s\n", e.what());
    return 1;
  }
  return 0;
}
