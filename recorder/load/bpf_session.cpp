#include "recorder/load/bpf_session.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/log.h"
#include "recorder/decode/record_store.h"
#include "recorder/decode/syscall_table.h"
#include "recorder/load/bpf_map_walk.h"
#include "recorder/load/concurrent_close.h"
#include "recorder/load/skeleton.h"
#include "recorder/probe/probe_apply.h"

namespace ezio::recorder {

void SkeletonDeleter::operator()(eziotrace* s) const { eziotrace__destroy(s); }
void RingBufferDeleter::operator()(ring_buffer* rb) const { ring_buffer__free(rb); }

namespace {

// Returned by on_record to stop a drain: libbpf keeps the record taken and leaves the rest.
constexpr int kStoreFull = -ENOBUFS;

int on_record(void* ctx, void* data, size_t size) {
  auto* store = static_cast<RecordStore*>(ctx);
  store->add(data, size);
  return store->full() ? kStoreFull : 0;
}

int libbpf_log(enum libbpf_print_level level, const char* fmt, va_list args) {
  static char buf[1 << 20];
  int n = vsnprintf(buf, sizeof(buf), fmt, args);
  std::string msg(buf, n > 0 ? std::min<size_t>(n, sizeof(buf) - 1) : 0);
  while (!msg.empty() && msg.back() == '\n') msg.pop_back();
  if (level == LIBBPF_WARN) {
    spdlog::debug("libbpf: {}", msg);  // failures are reported by us, with context
  } else if (level == LIBBPF_INFO) {
    spdlog::debug("libbpf: {}", msg);
  }
  return 0;
}

}  // namespace

void route_libbpf_logs() { libbpf_set_print(libbpf_log); }

std::string_view bpf_object_elf() {
  size_t size = 0;
  const void* data = eziotrace__elf_bytes(&size);
  return {static_cast<const char*>(data), size};
}

void check_ring_buffer_size(uint64_t ring_buffer_bytes) {
  long page = sysconf(_SC_PAGESIZE);
  if (ring_buffer_bytes < static_cast<uint64_t>(page) ||
      (ring_buffer_bytes & (ring_buffer_bytes - 1)) != 0) {
    fail("the ring buffer size must be a power of two of at least {} bytes, not {}", page,
         ring_buffer_bytes);
  }
}

BpfSession::BpfSession(uint64_t ring_buffer_bytes, RecordStore& sink, const ProbePlan& plan,
                       const std::string& core_btf) {
  check_ring_buffer_size(ring_buffer_bytes);
  LIBBPF_OPTS(bpf_object_open_opts, open_opts);
  open_opts.btf_custom_path = core_btf.empty() ? nullptr : core_btf.c_str();
  skel_.reset(eziotrace__open_opts(&open_opts));
  if (!skel_) fail("cannot open the BPF object: {}", errno_text(errno));

  for (const auto& sc : syscall_table()) {
    skel_->rodata->sc_desc[sc.nr] = sc.desc;
  }
  skel_->rodata->wakeup_bytes = ring_buffer_bytes / 8;
  apply_probe_plan(skel_.get(), plan);
  if (int err = bpf_map__set_max_entries(skel_->maps.events, ring_buffer_bytes)) {
    fail("cannot size the ring buffer: {}", errno_text(-err));
  }
  if (int err = eziotrace__load(skel_.get())) {
    fail("cannot load the BPF programs: {} (run with --verbose for the verifier log)",
         errno_text(-err));
  }
  if (int err = eziotrace__attach(skel_.get())) {
    fail("cannot attach the BPF programs: {}", errno_text(-err));
  }
  rb_.reset(ring_buffer__new(bpf_map__fd(skel_->maps.events), on_record, &sink, nullptr));
  if (!rb_) fail("cannot open the ring buffer: {}", errno_text(errno));
  epoll_ = UniqueFd(epoll_create1(EPOLL_CLOEXEC));
  if (!epoll_) fail("cannot create an epoll set: {}", errno_text(errno));
  wake_on(ring_buffer__epoll_fd(rb_.get()));
}

BpfSession::~BpfSession() = default;

void BpfSession::trace_process(pid_t pid) {
  uint32_t key = pid;
  uint8_t pending = 1;  // EZIO_PENDING_EXEC in common.bpf.h
  if (bpf_map__update_elem(skel_->maps.traced, &key, sizeof(key), &pending, sizeof(pending),
                           BPF_ANY)) {
    fail("cannot add process {} to the traced set: {}", pid, errno_text(errno));
  }
}

void BpfSession::wake_on(int fd) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
    fail("cannot watch fd {}: {}", fd, errno_text(errno));
  }
}

void BpfSession::unwatch(int fd) {
  if (epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr) != 0) {
    fail("cannot stop watching fd {}: {}", fd, errno_text(errno));
  }
}

size_t BpfSession::traced_processes() const {
  size_t n = 0;
  for_each_key(bpf_map__fd(skel_->maps.traced), [&](uint32_t) { ++n; });
  return n;
}

bool BpfSession::poll(int timeout_ms) {
  epoll_event ev[2];
  if (epoll_wait(epoll_.get(), ev, 2, timeout_ms) < 0 && errno != EINTR) {
    fail("waiting for records failed: {}", errno_text(errno));
  }
  return drain();
}

bool BpfSession::drain() {
  // Before reading: a record committed after the reading has begun may then wake us again,
  // and none is left unannounced until the wait's timeout (common.bpf.h, submit()).
  __atomic_store_n(&skel_->bss->recorder_woken, 0, __ATOMIC_SEQ_CST);
  int n = ring_buffer__consume(rb_.get());
  if (n == kStoreFull) return false;
  if (n < 0 && n != -EINTR) fail("reading the ring buffer failed: {}", errno_text(-n));
  return n != -EINTR;
}

void BpfSession::detach() {
  std::vector<bpf_link*> links, kprobes;
  for (int i = 0; i < skel_->skeleton->prog_cnt; ++i) {
    bpf_link** link = skel_->skeleton->progs[i].link;
    if (!*link) continue;
    bool kprobe = bpf_program__type(*skel_->skeleton->progs[i].prog) == BPF_PROG_TYPE_KPROBE;
    (kprobe ? kprobes : links).push_back(std::exchange(*link, nullptr));
  }
  destroy_concurrently(links, kprobes);
}

int BpfSession::map_fd(const char* name) const {
  int fd = bpf_object__find_map_fd_by_name(skel_->obj, name);
  if (fd < 0) fail("the BPF object has no map {}", name);
  return fd;
}

std::array<uint64_t, EZIO_LAYER_COUNT> BpfSession::drops() const {
  std::array<uint64_t, EZIO_LAYER_COUNT> total{};
  int ncpu = libbpf_num_possible_cpus();
  if (ncpu <= 0) fail("cannot count the CPUs: {}", errno_text(-ncpu));
  std::vector<uint64_t> per_cpu(ncpu);
  for (uint32_t layer = 0; layer < EZIO_LAYER_COUNT; ++layer) {
    if (bpf_map__lookup_elem(skel_->maps.drops, &layer, sizeof(layer), per_cpu.data(),
                             per_cpu.size() * sizeof(uint64_t), 0)) {
      fail("cannot read the drop counters: {}", errno_text(errno));
    }
    for (uint64_t v : per_cpu) total[layer] += v;
  }
  return total;
}

}  // namespace ezio::recorder
