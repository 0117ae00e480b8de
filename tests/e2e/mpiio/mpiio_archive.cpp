// SPDX-License-Identifier: GPL-2.0-only
#include "mpiio_archive.h"

#include <fstream>
#include <stdexcept>

namespace ezio::test {

using Kind = ezio::otf2::EventKind;

MpiioArchive::MpiioArchive(const std::filesystem::path& anchor)
    : a_(ezio::otf2::read_archive(anchor)) {}

std::vector<MpiioCall> MpiioArchive::calls(uint64_t location) const {
  const auto& d = a_.defs;
  std::vector<MpiioCall> out;
  auto ev = a_.events.find(location);
  if (ev == a_.events.end()) return out;
  int depth = 0, call_depth = -1;
  for (const auto& e : ev->second) {
    if (e.kind == Kind::Enter) {
      std::string name = d.str(d.regions.at(e.ref).canonical);
      if (call_depth < 0 && name.starts_with("MPI_File_")) {
        call_depth = depth;
        out.emplace_back();
        out.back().name = name;
        out.back().enter = e.time;
      } else if (call_depth >= 0) {
        out.back().nested.insert(name);
      }
      ++depth;
    } else if (e.kind == Kind::Leave) {
      if (--depth == call_depth) call_depth = -1;
      if (call_depth < 0 && !out.empty() && out.back().wait_end == 0 &&
          d.str(d.regions.at(e.ref).canonical) == "MPI_Wait") {
        out.back().wait_end = e.time;
      }
    } else if (call_depth >= 0 && is_mpiio(e.ref) &&
               (e.kind == Kind::IoOperationBegin || e.kind == Kind::IoOperationComplete)) {
      record(out.back(), e);
    } else if (call_depth >= 0 && is_mpiio(e.ref) && e.kind == Kind::IoCreateHandle) {
      for (const auto& attr : e.attributes) {
        out.back().create_attributes[d.str(d.attributes.at(attr.id).name)] = attr.value.uint32;
      }
    } else if (call_depth < 0 && is_mpiio(e.ref) && e.kind == Kind::IoOperationComplete) {
      // A non-blocking operation's end, in the MPI_Wait that completed its request.
      for (auto c = out.rbegin(); c != out.rend(); ++c) {
        if (c->has_op && c->bytes_result == UINT64_MAX) {
          c->bytes_result = e.a;
          c->completed_after = true;
          break;
        }
      }
    }
  }
  return out;
}

bool MpiioArchive::pwrite_between(uint64_t t0, uint64_t t1, int64_t offset, uint64_t bytes) const {
  const auto& d = a_.defs;
  for (const auto& [loc, events] : a_.events) {
    for (const auto& e : events) {
      if (e.kind != Kind::Enter || e.time < t0 || e.time > t1 ||
          d.str(d.regions.at(e.ref).canonical) != "syscall:pwrite64")
        continue;
      int64_t off = -1;
      uint64_t n = 0;
      for (const auto& attr : e.attributes) {
        std::string name = d.str(d.attributes.at(attr.id).name);
        if (name == "syscall.offset") off = attr.value.int64;
        if (name == "syscall.bytes") n = attr.value.uint64;
      }
      if (off == offset && n == bytes) return true;
    }
  }
  return false;
}

size_t MpiioArchive::entered(uint64_t location, const std::string& name) const {
  const auto& d = a_.defs;
  size_t n = 0;
  auto ev = a_.events.find(location);
  if (ev == a_.events.end()) return 0;
  for (const auto& e : ev->second) {
    n += e.kind == Kind::Enter && d.str(d.regions.at(e.ref).canonical) == name;
  }
  return n;
}

MpiioArchive::DeviceBytes MpiioArchive::device_bytes(const std::string& dev) const {
  const auto& d = a_.defs;
  DeviceBytes bytes;
  for (const auto& [loc, def] : d.locations) {
    if (d.str(def.name) != "block " + dev) continue;
    bytes.unattributed += d.location_property(loc, "EZIOTRACE::UNATTRIBUTED_BYTES").value_or(0);
    auto ev = a_.events.find(loc);
    if (ev == a_.events.end()) continue;
    for (const auto& e : ev->second) {
      if (e.kind != Kind::IoOperationBegin) continue;
      (e.f1 == OTF2_IO_OPERATION_MODE_READ ? bytes.read : bytes.written) += e.a;
    }
  }
  return bytes;
}

std::string MpiioArchive::node_string(const std::string& name) const {
  const auto& d = a_.defs;
  for (const auto& p : d.node_properties) {
    if (d.str(p.name) == name && p.type == OTF2_TYPE_STRING) return d.str(p.value.stringRef);
  }
  return "";
}

bool MpiioArchive::is_mpiio(uint64_t handle) const {
  const auto& d = a_.defs;
  auto h = d.io_handles.find(handle);
  if (h == d.io_handles.end()) return false;
  auto p = d.io_paradigms.find(h->second.paradigm);
  return p != d.io_paradigms.end() && d.str(p->second.identification) == "MPI-IO";
}

void MpiioArchive::record(MpiioCall& c, const ezio::otf2::Event& e) const {
  if (e.kind == Kind::IoOperationComplete) {
    c.bytes_result = e.a;
    c.complete_outside = !c.has_op;
    return;
  }
  c.has_op = true;
  c.mode = e.f1;
  c.flags = e.f2;
  c.bytes_request = e.a;
  for (const auto& attr : e.attributes) {
    if (a_.defs.str(a_.defs.attributes.at(attr.id).name) == "mpiio.offset") {
      c.offset = attr.value.int64;
    }
  }
}

DeviceStat device_bytes_served(const std::string& dev) {
  std::ifstream in("/sys/block/" + dev + "/stat");
  int64_t v[17] = {};
  for (auto& x : v) {
    if (!(in >> x)) throw std::runtime_error("/sys/block/" + dev + "/stat: fewer than 17 fields");
  }
  // Sectors read, written and discarded (Documentation/block/stat.rst), 512 bytes each.
  return {v[2] * 512, (v[6] + v[13]) * 512};
}

}  // namespace ezio::test
