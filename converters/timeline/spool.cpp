// SPDX-License-Identifier: GPL-2.0-only
#include "converters/timeline/spool.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <queue>

#include "common/error.h"

namespace ezio::converters {
namespace {

constexpr size_t kWriteBuffer = 1 << 20;
constexpr size_t kReadBuffer = 64 << 10;
// A record: time (8 bytes), length (4 bytes), the line.
constexpr size_t kHeader = 12;

void write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail("cannot write the export's temporary file: {}", errno_text(errno));
    p += w;
    n -= static_cast<size_t>(w);
  }
}

// Reads one segment's records back, a buffer at a time.
class Cursor {
 public:
  Cursor(int fd, uint64_t begin, uint64_t end) : fd_(fd), next_(begin), end_(end) { advance(); }
  bool done() const { return done_; }
  uint64_t time() const { return time_; }
  std::string_view line() const { return line_; }
  void advance() {
    if (!ensure(kHeader)) {
      done_ = true;
      return;
    }
    uint32_t len;
    std::memcpy(&time_, buf_.data() + pos_, 8);
    std::memcpy(&len, buf_.data() + pos_ + 8, 4);
    if (!ensure(kHeader + len)) fail("the export's temporary file is truncated");
    line_ = std::string_view(buf_.data() + pos_ + kHeader, len);
    pos_ += kHeader + len;
  }

 private:
  // Makes `n` bytes available at pos_; false at the end of the segment.
  bool ensure(size_t n) {
    if (buf_.size() - pos_ >= n) return true;
    buf_.erase(0, pos_);
    pos_ = 0;
    while (buf_.size() < n && next_ < end_) {
      size_t want = static_cast<size_t>(std::min<uint64_t>(end_ - next_, std::max(n, kReadBuffer)));
      size_t old = buf_.size();
      buf_.resize(old + want);
      ssize_t r = pread(fd_, buf_.data() + old, want, static_cast<off_t>(next_));
      if (r <= 0) fail("cannot read the export's temporary file: {}", errno_text(errno));
      buf_.resize(old + static_cast<size_t>(r));
      next_ += static_cast<uint64_t>(r);
    }
    return buf_.size() >= n;
  }
  int fd_;
  uint64_t next_, end_;
  std::string buf_;
  size_t pos_ = 0;
  uint64_t time_ = 0;
  std::string_view line_;
  bool done_ = false;
};

}  // namespace

Spool::Spool(const std::filesystem::path& dir) {
  std::string path = (dir.empty() ? std::filesystem::path(".") : dir).string();
  fd_ = UniqueFd(open(path.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  if (!fd_) fail("cannot create a temporary file in {}: {}", path, errno_text(errno));
  buffer_.reserve(kWriteBuffer);
}

void Spool::begin_segment() { segment_start_ = written_ + buffer_.size(); }

void Spool::add(uint64_t time, std::string_view line) {
  uint32_t len = static_cast<uint32_t>(line.size());
  buffer_.append(reinterpret_cast<const char*>(&time), 8);
  buffer_.append(reinterpret_cast<const char*>(&len), 4);
  buffer_.append(line);
  if (buffer_.size() >= kWriteBuffer) flush();
}

void Spool::end_segment() {
  uint64_t end = written_ + buffer_.size();
  if (end > segment_start_) segments_.push_back({segment_start_, end});
}

void Spool::flush() {
  write_all(fd_.get(), buffer_.data(), buffer_.size());
  written_ += buffer_.size();
  buffer_.clear();
}

void Spool::merge(const std::vector<std::pair<uint64_t, std::string>>& first,
                  const std::function<void(std::string_view)>& out) {
  flush();
  std::vector<Cursor> cursors;
  cursors.reserve(segments_.size());
  for (const Segment& s : segments_) cursors.emplace_back(fd_.get(), s.begin, s.end);
  // Heap of (time, segment index); index -1... as size_t max for `first`.
  using Item = std::pair<uint64_t, size_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
  for (size_t i = 0; i < cursors.size(); ++i) {
    if (!cursors[i].done()) heap.push({cursors[i].time(), i});
  }
  size_t next_first = 0;
  while (!heap.empty() || next_first < first.size()) {
    if (next_first < first.size() &&
        (heap.empty() || first[next_first].first <= heap.top().first)) {
      out(first[next_first++].second);
      continue;
    }
    size_t i = heap.top().second;
    heap.pop();
    out(cursors[i].line());
    cursors[i].advance();
    if (!cursors[i].done()) heap.push({cursors[i].time(), i});
  }
}

}  // namespace ezio::converters
