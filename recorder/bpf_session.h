#pragma once
// Owns the loaded BPF object and its ring buffer for one recording.
#include <sys/types.h>

#include <array>
#include <cstdint>
#include <memory>

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
  // `plan` (recorder/probe.h) says which layer's programs load.
  BpfSession(uint64_t ring_buffer_bytes, RecordStore& sink, const ProbePlan& plan);
  ~BpfSession();
  BpfSession(const BpfSession&) = delete;
  BpfSession& operator=(const BpfSession&) = delete;

  // Adds the launched process to the traced tree; it is recorded from its execve on.
  void trace_process(pid_t pid);
  // Waits up to timeout_ms for records and hands them to the sink.
  void poll(int timeout_ms);
  // Hands every record still in the ring buffer to the sink.
  void drain();
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
};

// Routes libbpf's messages to our log (debug level, warnings at warn level).
void route_libbpf_logs();

}  // namespace ezio::recorder
