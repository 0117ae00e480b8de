// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/archive/archive_pipeline.h"

#include <pthread.h>
#include <time.h>

#include <exception>
#include <utility>

namespace ezio::recorder {
namespace {

size_t records_in(const CallRecords& r) {
  return r.syscalls.size() + r.opens.size() + r.procs.size() + r.vfs.size() + r.fs.size() +
         r.files.size() + r.block.size() + r.pagecache.size() + r.throttles.size();
}

}  // namespace

ArchivePipeline::ArchivePipeline(Write write, size_t max_queued, Index index)
    : write_(std::move(write)),
      index_(std::move(index)),
      max_queued_(max_queued),
      thread_([this] { run(); }) {}

ArchivePipeline::~ArchivePipeline() {
  {
    std::lock_guard lock(mutex_);
    stop_ = drop_ = true;
  }
  work_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool ArchivePipeline::has_room() const { return queue_.empty() || queued_ < max_queued_; }

bool ArchivePipeline::offer(RecordStore& store, uint64_t before) {
  {
    std::lock_guard lock(mutex_);
    if (failure_ || stop_) return false;
    if (!has_room()) {
      ++times_full_;
      return false;
    }
  }
  // Taken outside the lock: only this thread adds to the queue, the room can only grow meanwhile.
  Batch b{{store.take_settled(before), before, std::nullopt}, 0};
  b.size = records_in(b.batch.records);  // before indexing moves some of them
  if (index_) index_(b.batch);
  {
    std::lock_guard lock(mutex_);
    queued_ += b.size;
    queue_.push_back(std::move(b));
  }
  work_.notify_one();
  return true;
}

void ArchivePipeline::push(RecordStore& store, uint64_t before) {
  {
    std::unique_lock lock(mutex_);
    room_.wait(lock, [&] { return failure_ || has_room(); });
    if (failure_) throw *failure_;
  }
  offer(store, before);
}

void ArchivePipeline::wait_for_room(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  room_.wait_for(lock, timeout, [&] { return failure_ || has_room(); });
}

void ArchivePipeline::flush() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  work_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (failure_) throw *failure_;
}

std::optional<Error> ArchivePipeline::failure() const {
  std::lock_guard lock(mutex_);
  return failure_;
}

uint64_t ArchivePipeline::times_full() const {
  std::lock_guard lock(mutex_);
  return times_full_;
}

uint64_t ArchivePipeline::writer_cpu_ns() const {
  std::lock_guard lock(mutex_);
  return writer_cpu_ns_;
}

void ArchivePipeline::run() {
  pthread_setname_np(pthread_self(), "ezio-archive");
  std::unique_lock lock(mutex_);
  for (;;) {
    work_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (drop_ || failure_ || (stop_ && queue_.empty())) break;
    Batch b = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    std::optional<Error> error;
    try {
      write_(std::move(b.batch));
    } catch (const Error& e) {
      error = e;
    } catch (const std::exception& e) {
      error = Error(e.what());
    }
    lock.lock();
    queued_ -= b.size;
    if (error) failure_ = std::move(error);
    room_.notify_all();
  }
  timespec cpu{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0) {
    writer_cpu_ns_ = static_cast<uint64_t>(cpu.tv_sec) * 1'000'000'000 + cpu.tv_nsec;
  }
}

}  // namespace ezio::recorder
