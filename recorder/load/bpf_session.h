#pragma once
// Owns the loaded BPF object and its ring buffer for one recording.
#include <sys/types.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/unique_fd.h"
#include "record.h"

struct eziotrace;
struct ring_buffer;

namespace ezio::recorder {

class RecordStore;
struct ProbePlan;

struct SkeletonDeleter {
  void operator()(eziotrace* s) const;
};
struct RingBufferDeleter {
  void operator()(ring_buffer* rb) const;
};

class BpfSession {
 public:
  // Loads and attaches the programs; records go to `sink`. ring_buffer_bytes must be a power of two
  // and a multiple of the page size.
  // `plan` (recorder/probe/probe.h) says which layer's programs load; core_btf, when not empty, is
  // the cut-down kernel BTF for the CO-RE relocations (recorder/probe/core_btf.h).
  BpfSession(uint64_t ring_buffer_bytes, RecordStore& sink, const ProbePlan& plan,
             const std::string& core_btf = {});
  ~BpfSession();
  BpfSession(const BpfSession&) = delete;
  BpfSession& operator=(const BpfSession&) = delete;

  // Adds the launched process to the traced tree; it is recorded from its execve on.
  void trace_process(pid_t pid);
  // Waits up to timeout_ms for records, or for `fd` to become readable, and hands the records to
  // the sink. The programs wake the recorder only when the ring buffer fills up (a wake-up per
  // record would cost the application), so without such an fd every wait lasts its timeout.
  // Returns drain()'s answer.
  bool poll(int timeout_ms);
  void wake_on(int fd);
  // Stops watching an fd given to wake_on (an exited process's pidfd stays readable).
  void unwatch(int fd);
  // Processes of the traced tree still alive (the kernel forgets one when its last thread exits).
  size_t traced_processes() const;
  // Hands the records in the ring buffer to the sink until it is empty (returns true) or the sink
  // is full (RecordStore::full(); returns false: the rest waits in the ring buffer).
  bool drain();
  // Unhooks every program (all links at once): nothing is recorded after this. The maps and the
  // ring buffer stay readable.
  void detach();
  // Events dropped in the kernel so far, per layer, summed over CPUs.
  std::array<uint64_t, EZIO_LAYER_COUNT> drops() const;
  // The fd of a map of the BPF object (for the layers' counter tables); fails if there is none.
  int map_fd(const char* name) const;

 private:
  std::unique_ptr<eziotrace, SkeletonDeleter> skel_;
  std::unique_ptr<ring_buffer, RingBufferDeleter> rb_;
  UniqueFd epoll_;  // the ring buffer's epoll fd and wake_on()'s fds
};

// Fails unless the size is a power of two and a multiple of the page size.
void check_ring_buffer_size(uint64_t ring_buffer_bytes);

// The embedded BPF object (ELF), as the skeleton loads it.
std::string_view bpf_object_elf();

// Routes libbpf's messages to our log (debug level, warnings at warn level).
void route_libbpf_logs();

}  // namespace ezio::recorder
