// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/decode/record_store.h"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace ezio::recorder {
namespace {

// Kernel strings are NUL-terminated within their field, but a corrupt record must not make us read
// past it.
std::string bounded_string(const char* s, size_t max) { return std::string(s, strnlen(s, max)); }

template <typename T>
bool read_as(const void* data, size_t size, T& out) {
  if (size != sizeof(T)) return false;
  std::memcpy(&out, data, sizeof(T));
  return true;
}

// The header of a record split out of a syscall's: same process, thread and version.
template <typename Rec>
ezio_header split_header(const ezio_header& h, uint8_t kind, uint8_t layer) {
  return {h.version, kind, layer, sizeof(Rec), h.pid, h.tid};
}

ezio_vfs_rec derived_vfs(const ezio_syscall_vfs_rec& r) {
  ezio_vfs_rec v{};
  v.h = split_header<ezio_vfs_rec>(r.sc.h, EZIO_REC_VFS, EZIO_LAYER_VFS);
  v.call_id = r.sc.call_id;
  v.t_enter = r.sc.t_enter;
  v.t_exit = r.sc.t_exit;
  v.file_key = r.vfs.file_key;
  v.ino = r.vfs.ino;
  v.offset = r.vfs.offset;
  v.ret = r.sc.ret;
  v.dev = r.vfs.dev;
  v.op = r.vfs.op;
  v.flags = EZIO_VFSF_DERIVED;
  std::memcpy(v.fstype, r.vfs.fstype, sizeof(v.fstype));
  return v;
}

ezio_fs_rec fs_run(const ezio_syscall_vfs_rec& r) {
  ezio_fs_rec f{};
  f.h = split_header<ezio_fs_rec>(r.sc.h, EZIO_REC_FS, EZIO_LAYER_FS);
  f.call_id = r.sc.call_id;
  f.t_enter = r.fs.t_first;
  f.t_exit = r.fs.t_last;
  f.ino = r.fs.ino;
  f.offset = r.fs.offset;
  f.bytes = r.fs.bytes;
  f.dev = r.fs.dev;
  f.op = r.fs.op;
  f.flags = EZIO_FSF_POINT | EZIO_FSF_RUN;
  f.hits = r.fs.hits;
  return f;
}

// Moves the elements of v that satisfy done into out, keeping the order of both parts.
template <typename T, typename Done>
void move_out(std::vector<T>& v, std::vector<T>& out, Done done) {
  // Records are held in arrival order, their end-time order but for a margin: the ones done are a
  // prefix but for the last few, and only what lies between the first not done and the last done
  // is moved about.
  auto last_done = std::find_if(v.rbegin(), v.rend(), [&](const T& x) { return done(x); }).base();
  auto keep = std::find_if_not(v.begin(), last_done, [&](const T& x) { return done(x); });
  if (keep != last_done) {
    keep = std::stable_partition(keep, last_done, [&](const T& x) { return done(x); });
  }
  if (keep == v.end()) {
    // All of them (the ring emptied): handed over whole, and room made for as many again, so
    // that the next batch is not copied over and over as its vector grows.
    out.swap(v);
    v.clear();
    v.reserve(out.size());
    return;
  }
  out.assign(std::make_move_iterator(v.begin()), std::make_move_iterator(keep));
  v.erase(v.begin(), keep);
}

}  // namespace

CallRecords RecordStore::take_settled(uint64_t before) {
  CallRecords s;
  move_out(calls_.syscalls, s.syscalls,
           [&](const ezio_syscall_rec& r) { return r.t_exit < before; });
  move_out(calls_.opens, s.opens, [&](const OpenCall& o) { return o.sc.t_exit < before; });
  move_out(calls_.procs, s.procs, [&](const ProcEvent& p) { return p.ts < before; });
  move_out(calls_.vfs, s.vfs, [&](const ezio_vfs_rec& r) { return r.t_exit < before; });
  move_out(calls_.fs, s.fs, [&](const ezio_fs_rec& r) { return r.t_exit < before; });
  move_out(calls_.throttles, s.throttles,
           [&](const ezio_throttle_rec& r) { return r.t_exit < before; });
  s.files.swap(calls_.files);
  s.block.swap(calls_.block);
  s.pagecache.swap(calls_.pagecache);
  return s;
}

bool RecordStore::holds_settled(uint64_t before) const {
  auto ended = [before](const auto& v, auto end) {
    return std::any_of(v.begin(), v.end(), [&](const auto& r) { return end(r) < before; });
  };
  return ended(calls_.syscalls, [](const ezio_syscall_rec& r) { return r.t_exit; }) ||
         ended(calls_.opens, [](const OpenCall& o) { return o.sc.t_exit; }) ||
         ended(calls_.procs, [](const ProcEvent& p) { return p.ts; }) ||
         ended(calls_.vfs, [](const ezio_vfs_rec& r) { return r.t_exit; }) ||
         ended(calls_.fs, [](const ezio_fs_rec& r) { return r.t_exit; }) ||
         ended(calls_.throttles, [](const ezio_throttle_rec& r) { return r.t_exit; });
}

void RecordStore::saw(uint64_t t) {
  newest_ = std::max(newest_, t);
  if (ring_ < rings_.size()) rings_[ring_].newest = std::max(rings_[ring_].newest, t);
}

void RecordStore::from_ring(unsigned ring) {
  if (ring >= rings_.size()) rings_.resize(ring + 1);
  ring_ = ring;
}

void RecordStore::ring_emptied(unsigned ring, uint64_t at_ns) {
  if (ring >= rings_.size()) rings_.resize(ring + 1);
  rings_[ring].emptied_at = std::max(rings_[ring].emptied_at, at_ns);
}

uint64_t RecordStore::newest() const {
  if (rings_.empty()) return newest_;
  uint64_t least = UINT64_MAX;
  for (const RingFrontier& f : rings_) least = std::min(least, std::max(f.newest, f.emptied_at));
  return least;
}

size_t RecordStore::held() const {
  return calls_.syscalls.size() + calls_.opens.size() + calls_.procs.size() + calls_.vfs.size() +
         calls_.fs.size() + calls_.files.size() + calls_.block.size() + calls_.throttles.size();
}

// A record as it comes. A call's end (syscall, VFS, FS, a throttle pause) is the newest time seen
// when it is the latest; the other records (files, block requests, page-cache counters) carry none.
template <typename Rec>
bool RecordStore::add_as_is(const void* data, size_t size, std::vector<Rec>& to) {
  Rec r;
  if (!read_as(data, size, r)) return false;
  to.push_back(r);
  if constexpr (requires { r.t_exit; }) saw(r.t_exit);
  return true;
}

// Split into the records the layers are made of: the VFS call shares the syscall's times, result
// and call id (its hook is the syscall exit); the FS hits are there when hits > 0.
bool RecordStore::add_syscall_vfs(const void* data, size_t size) {
  ezio_syscall_vfs_rec r;
  if (!read_as(data, size, r)) return false;
  calls_.syscalls.push_back(r.sc);
  saw(r.sc.t_exit);
  calls_.vfs.push_back(derived_vfs(r));
  ++received_[EZIO_LAYER_VFS];
  if (r.fs.hits) {
    calls_.fs.push_back(fs_run(r));
    ++received_[EZIO_LAYER_FS];
  }
  return true;
}

bool RecordStore::add_open(const void* data, size_t size) {
  ezio_open_rec r;
  if (!read_as(data, size, r)) return false;
  calls_.opens.push_back({r.sc, r.open_flags, r.mode, bounded_string(r.path, sizeof(r.path))});
  saw(r.sc.t_exit);
  return true;
}

bool RecordStore::add_proc(const ezio_header& h, const void* data, size_t size) {
  ezio_proc_rec r;
  if (!read_as(data, size, r)) return false;
  calls_.procs.push_back({h.kind, r.ts, h.pid, h.tid, r.ppid, r.parent_tid, r.is_thread != 0,
                          r.exit_code, bounded_string(r.comm, sizeof(r.comm)),
                          bounded_string(r.filename, sizeof(r.filename))});
  saw(r.ts);
  return true;
}

void RecordStore::add(const void* data, size_t size) {
  ezio_header h;
  if (size < sizeof(h)) {
    ++malformed_;
    return;
  }
  std::memcpy(&h, data, sizeof(h));
  if (h.version != EZIO_RECORD_VERSION || h.size != size || h.layer >= EZIO_LAYER_COUNT) {
    ++malformed_;
    return;
  }
  bool ok = false;
  switch (h.kind) {
    case EZIO_REC_SYSCALL:
      ok = add_as_is(data, size, calls_.syscalls);
      break;
    case EZIO_REC_SYSCALL_VFS:
      ok = add_syscall_vfs(data, size);
      break;
    case EZIO_REC_OPEN:
      ok = add_open(data, size);
      break;
    case EZIO_REC_FORK:
    case EZIO_REC_EXEC:
    case EZIO_REC_EXIT:
    case EZIO_REC_LEAVE:
      ok = add_proc(h, data, size);
      break;
    case EZIO_REC_VFS:
      ok = add_as_is(data, size, calls_.vfs);
      break;
    case EZIO_REC_FS:
      ok = add_as_is(data, size, calls_.fs);
      break;
    case EZIO_REC_THROTTLE:
      ok = add_as_is(data, size, calls_.throttles);
      break;
    case EZIO_REC_FILE:
      ok = add_as_is(data, size, calls_.files);
      break;
    case EZIO_REC_BLOCK:
      ok = add_as_is(data, size, calls_.block);
      break;
    case EZIO_REC_PAGECACHE:
      ok = add_as_is(data, size, calls_.pagecache);
      break;
    default:
      break;
  }
  if (ok) {
    ++received_[h.layer];
  } else {
    ++malformed_;
  }
}

}  // namespace ezio::recorder
