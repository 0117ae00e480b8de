// SPDX-License-Identifier: GPL-2.0-only
#include "converters/merge/span_store.h"

#include <algorithm>

#include "converters/merge/temp_file.h"

namespace ezio::converters {
namespace {

constexpr size_t kChunk = 4096;  // spans read or written at a time

}  // namespace

SpanStore::SpanStore(const std::filesystem::path& dir) : dir_(dir), fd_(temporary_file(dir)) {
  chunk_.reserve(kChunk);
}

void SpanStore::append(const Span& s) {
  // Appending: the chunk is the tail not written yet.
  if (first_ + chunk_.size() != size_) load(size_);
  if (chunk_.size() == kChunk) {
    write_back();
    first_ += chunk_.size();
    chunk_.clear();
  }
  chunk_.push_back(s);
  dirty_ = true;
  ++size_;
}

std::vector<Span>& SpanStore::load(size_t i) {
  if (i >= first_ && i < first_ + chunk_.size()) return chunk_;
  write_back();
  first_ = i - i % kChunk;
  chunk_.resize(std::min(kChunk, size_ - first_));
  const size_t bytes = chunk_.size() * sizeof(Span);
  read_fully(fd_.get(), chunk_.data(), bytes, first_ * sizeof(Span), dir_);
  return chunk_;
}

void SpanStore::write_back() {
  if (!dirty_ || chunk_.empty()) return;
  const size_t bytes = chunk_.size() * sizeof(Span);
  write_fully(fd_.get(), chunk_.data(), bytes, first_ * sizeof(Span), dir_);
  dirty_ = false;
}

}  // namespace ezio::converters
