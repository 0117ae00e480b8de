// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/service/ring_maker.h"

#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>

#include "common/error.h"
#include "common/log.h"
#include "recorder/service/daemon.h"

namespace ezio::recorder::service {

RingMaker::RingMaker(SessionKernel& kernel)
    : kernel_(kernel), ready_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (!ready_) fail("eventfd: {}", errno_text(errno));
  thread_ = std::thread([this] { run(); });
}

RingMaker::~RingMaker() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void RingMaker::request(const Job& job) {
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back(job);
  }
  wake_.notify_one();
}

// A spare's memory is zeroed by the kernel (milliseconds of CPU): at the lowest priority, it does
// not slow down the start of the clients being served on a busy machine. The daemon runs as
// root, which may lower a thread's nice value again.
void RingMaker::set_nice(int nice) {
  if (pid_t tid = tid_.load()) (void)setpriority(PRIO_PROCESS, id_t(tid), nice);
}

void RingMaker::hurry(unsigned slot) {
  std::lock_guard lock(mutex_);
  for (Job& job : jobs_) {
    if (job.slot == slot) job.spare = false;
  }
  if (current_.slot == slot && current_.spare) {
    current_.spare = false;
    set_nice(0);
  }
}

std::vector<RingMaker::Done> RingMaker::take() {
  uint64_t n = 0;
  (void)read(ready_.get(), &n, sizeof n);  // resets the eventfd: every result is taken below
  std::lock_guard lock(mutex_);
  return std::exchange(done_, {});
}

RingMaker::Done RingMaker::work(const Job& job) {
  Done d{job, {}, {}};
  try {
    if (job.ring_bytes == 0) {
      kernel_.remove_ring(job.slot);
    } else {
      d.rings = kernel_.make_rings(job.slot, job.ring_bytes, job.per_cpu);
    }
  } catch (const Error& e) {
    d.error = e.what();
  }
  return d;
}

void RingMaker::run() {
  tid_ = gettid();
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (stopping_) return;
      job = current_ = jobs_.front();
      jobs_.pop_front();
      set_nice(job.spare ? 19 : 0);
    }
    Done d = work(job);
    {
      std::lock_guard lock(mutex_);
      current_ = Job{};
      done_.push_back(std::move(d));
    }
    uint64_t one = 1;
    if (write(ready_.get(), &one, sizeof one) != sizeof one) {
      spdlog::error("cannot wake eziotraced's loop: {}", errno_text(errno));
    }
  }
}

}  // namespace ezio::recorder::service
