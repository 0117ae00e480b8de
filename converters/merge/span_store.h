// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The kernel spans' summaries of a merge, kept in an unlinked temporary file instead of memory
// (~40 bytes a span, read and written a chunk at a time): the merge's memory stays the same
// whatever the length of the recording. Every location's spans are contiguous (the index appends
// them location by location); the merge walks them in order, one location at a time, so one
// cached chunk serves every access.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "converters/merge/archive_model.h"

namespace ezio::converters {

inline constexpr Ref kNoHandle = OTF2_UNDEFINED_IO_HANDLE;

// What the merge decides on of a top-level span (kernel_spans.h). Trivially copyable: stored as
// bytes.
struct Span {
  uint64_t t0 = 0, t1 = 0;
  uint64_t call_id = 0;               // call.id of its first event (ENTER, request begin); 0: none
  const std::string* call = nullptr;  // canonical region name of the outer ENTER, "" if none
  Ref created = kNoHandle;            // the handle of its last IoCreateHandle
  bool dropped = false;
  bool own = false;    // touches a file under one of the merge's own directories
  bool enter = false;  // its first event is an ENTER
};

class SpanStore {
 public:
  // The file is created in dir (on the output's file system) and gone when the store is.
  explicit SpanStore(const std::filesystem::path& dir);
  SpanStore(const SpanStore&) = delete;
  SpanStore& operator=(const SpanStore&) = delete;

  size_t size() const { return size_; }
  void append(const Span& s);
  // The span at index i: valid until the next call. mut() writes it back once left.
  const Span& get(size_t i) { return load(i)[i - first_]; }
  Span& mut(size_t i) {
    Span& s = load(i)[i - first_];
    dirty_ = true;
    return s;
  }

 private:
  std::vector<Span>& load(size_t i);
  void write_back();

  std::filesystem::path dir_;
  UniqueFd fd_;
  size_t size_ = 0;
  std::vector<Span> chunk_;  // spans [first_, first_ + chunk_.size()), or the appended tail
  size_t first_ = 0;
  bool dirty_ = false;
};

// One location's spans in a store.
class SpanList {
 public:
  SpanList() = default;
  SpanList(SpanStore* store, size_t first) : store_(store), first_(first) {}
  size_t size() const { return count_; }
  const Span& get(size_t i) const { return store_->get(first_ + i); }
  Span& mut(size_t i) const { return store_->mut(first_ + i); }
  void append(const Span& s) {
    store_->append(s);
    ++count_;
  }

 private:
  SpanStore* store_ = nullptr;
  size_t first_ = 0;
  size_t count_ = 0;
};

}  // namespace ezio::converters
