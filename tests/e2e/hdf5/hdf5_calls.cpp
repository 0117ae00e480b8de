// SPDX-License-Identifier: GPL-2.0-only
#include "hdf5_calls.h"

namespace ezio::test {

using Kind = ezio::otf2::EventKind;

Hdf5Archive::Hdf5Archive(const std::filesystem::path& anchor)
    : a_(ezio::otf2::read_archive(anchor)) {
  for (const auto& [loc, events] : a_.events) {
    for (const auto& e : events) {
      if (e.kind != Kind::IoOperationBegin || e.attributes.empty() || !object_handle(e.ref))
        continue;
      attributes(e, layouts_[e.ref], &layout_numbers_[e.ref]);
    }
  }
}

bool Hdf5Archive::object_handle(uint64_t handle) const {
  const auto& handles = a_.defs.io_handles;
  auto h = handles.find(static_cast<ezio::otf2::Ref>(handle));
  if (h == handles.end() || h->second.parent == handle || !of_paradigm(handle, "HDF5"))
    return false;
  auto parent = handles.find(h->second.parent);
  return parent != handles.end() && parent->second.file == h->second.file;
}

void Hdf5Archive::object_attributes(const ezio::otf2::Event& e, Hdf5Call& c) const {
  if (!object_handle(e.ref)) return;
  const std::string& name = a_.defs.str(a_.defs.io_handles.at(e.ref).name);
  if (!name.empty()) c.op.emplace("hdf5.object", name);
  if (auto it = layouts_.find(e.ref); it != layouts_.end())
    c.op.insert(it->second.begin(), it->second.end());
  if (auto it = layout_numbers_.find(e.ref); it != layout_numbers_.end())
    c.op_number.insert(it->second.begin(), it->second.end());
  if (e.f1 == OTF2_IO_OPERATION_MODE_READ || e.f1 == OTF2_IO_OPERATION_MODE_WRITE)
    c.op.emplace("hdf5.xfer",
                 e.f2 & OTF2_IO_OPERATION_FLAG_COLLECTIVE ? "collective" : "independent");
}

bool Hdf5Archive::of_paradigm(uint64_t handle, const char* paradigm) const {
  auto h = a_.defs.io_handles.find(static_cast<ezio::otf2::Ref>(handle));
  if (h == a_.defs.io_handles.end()) return false;
  auto p = a_.defs.io_paradigms.find(h->second.paradigm);
  return p != a_.defs.io_paradigms.end() && a_.defs.str(p->second.identification) == paradigm;
}

void Hdf5Archive::attributes(const ezio::otf2::Event& e,
                             std::map<std::string, std::string>& strings,
                             std::map<std::string, uint64_t>* numbers) const {
  for (const auto& attr : e.attributes) {
    std::string name = a_.defs.str(a_.defs.attributes.at(attr.id).name);
    if (attr.type == OTF2_TYPE_STRING) {
      strings[name] = a_.defs.str(attr.value.stringRef);
    } else if (numbers) {
      (*numbers)[name] = attr.value.uint64;
    }
  }
}

// An event inside an outermost HDF5 call: its own HDF5 events, and the writes made under it.
void Hdf5Archive::nested_event(Hdf5Call& c, const ezio::otf2::Event& e, const std::string& region,
                               bool in_mpiio) const {
  bool hdf5 = ezio::otf2::is_io_event(e.kind) && of_paradigm(e.ref, "HDF5");
  if (hdf5 && e.kind == Kind::IoOperationBegin) {
    c.has_op = true;
    c.mode = e.f1;
    c.flags = e.f2;
    c.bytes_request = e.a;
    attributes(e, c.op, &c.op_number);
    object_attributes(e, c);
    c.handle_path = a_.defs.handle_path(e.ref).value_or("");
  } else if (hdf5 && e.kind == Kind::IoOperationComplete) {
    c.bytes_result = e.a;
  } else if (hdf5 && e.kind == Kind::IoCreateHandle) {
    c.created_handle = true;
    c.handle_path = a_.defs.handle_path(e.ref).value_or("");
  } else if (hdf5 && e.kind == Kind::IoDestroyHandle) {
    c.destroyed_handle = true;
  } else if (e.kind == Kind::IoOperationComplete && (region == "pwrite" || region == "write") &&
             e.a != UINT64_MAX) {
    c.posix_write_bytes += e.a;
    if (in_mpiio) c.posix_write_bytes_in_mpiio += e.a;
  } else if (e.kind == Kind::Enter && (region == "syscall:pwrite64" || region == "syscall:write")) {
    for (const auto& attr : e.attributes) {
      if (a_.defs.str(a_.defs.attributes.at(attr.id).name) == "syscall.bytes") {
        c.syscall_write_bytes += attr.value.uint64;
        if (in_mpiio) c.syscall_write_bytes_in_mpiio += attr.value.uint64;
      }
    }
  }
}

std::vector<Hdf5Call> Hdf5Archive::calls(uint64_t location) const {
  const auto& d = a_.defs;
  std::vector<Hdf5Call> out;
  auto ev = a_.events.find(location);
  if (ev == a_.events.end()) return out;
  int call_depth = -1;
  std::vector<std::string> stack;
  // Depth of the outermost MPI_File_* call inside the current HDF5 call, -1 outside one.
  int mpiio_depth = -1;
  for (const auto& e : ev->second) {
    if (e.kind == Kind::Enter) {
      std::string name = d.str(d.regions.at(e.ref).canonical);
      if (call_depth < 0 && name.starts_with("H5")) {
        call_depth = static_cast<int>(stack.size());
        out.emplace_back();
        out.back().name = name;
        attributes(e, out.back().enter, &out.back().enter_number);
      } else if (call_depth >= 0) {
        ++out.back().nested[name];
      }
      if (call_depth >= 0 && mpiio_depth < 0 && name.starts_with("MPI_File_"))
        mpiio_depth = static_cast<int>(stack.size());
      stack.push_back(name);
      if (call_depth >= 0) nested_event(out.back(), e, name, mpiio_depth >= 0);
    } else if (e.kind == Kind::Leave) {
      if (!stack.empty()) stack.pop_back();
      if (static_cast<int>(stack.size()) == mpiio_depth) mpiio_depth = -1;
      if (call_depth >= 0 && static_cast<int>(stack.size()) == call_depth) {
        attributes(e, out.back().leave, nullptr);
        call_depth = -1;
      }
    } else if (call_depth >= 0) {
      nested_event(out.back(), e, stack.empty() ? "" : stack.back(), mpiio_depth >= 0);
    }
  }
  return out;
}

std::string Hdf5Archive::node_string(const std::string& name) const {
  for (const auto& p : a_.defs.node_properties) {
    if (a_.defs.str(p.name) == name && p.type == OTF2_TYPE_STRING)
      return a_.defs.str(p.value.stringRef);
  }
  return "";
}

std::map<std::string, int> count_names(const std::vector<Hdf5Call>& calls) {
  std::map<std::string, int> count;
  for (const auto& c : calls) ++count[c.name];
  return count;
}

}  // namespace ezio::test
