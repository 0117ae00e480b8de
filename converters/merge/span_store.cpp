#include "converters/merge/span_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "common/error.h"

namespace ezio::converters {
namespace {

constexpr size_t kChunk = 4096;  // spans read or written at a time

UniqueFd temporary_file(const std::filesystem::path& dir) {
  UniqueFd fd(open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  if (fd) return fd;
  // File systems without O_TMPFILE: a named file, unlinked at once.
  std::string path = (dir / ".eziotrace-spans.XXXXXX").string();
  fd = UniqueFd(mkostemp(path.data(), O_CLOEXEC));
  if (!fd) fail("{}: cannot create the merge's temporary file: {}", dir.string(), strerror(errno));
  unlink(path.c_str());
  return fd;
}

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
  ssize_t got = pread(fd_.get(), chunk_.data(), bytes, static_cast<off_t>(first_ * sizeof(Span)));
  if (got != static_cast<ssize_t>(bytes)) {
    fail("{}: cannot read the merge's temporary file: {}", dir_.string(),
         got < 0 ? strerror(errno) : "short read");
  }
  return chunk_;
}

void SpanStore::write_back() {
  if (!dirty_ || chunk_.empty()) return;
  const size_t bytes = chunk_.size() * sizeof(Span);
  ssize_t put = pwrite(fd_.get(), chunk_.data(), bytes, static_cast<off_t>(first_ * sizeof(Span)));
  if (put != static_cast<ssize_t>(bytes)) {
    fail("{}: cannot write the merge's temporary file: {}", dir_.string(),
         put < 0 ? strerror(errno) : "disk full");
  }
  dirty_ = false;
}

}  // namespace ezio::converters
