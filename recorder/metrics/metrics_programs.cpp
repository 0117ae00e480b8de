// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/metrics/metrics_programs.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <string_view>

#include "common/error.h"
#include "common/log.h"
#include "recorder/core/bpf_object.h"
#include "recorder/core/syscall_table.h"
#include "recorder/probe/attach_ids.h"
// After the layout it names (metrics.h, through metrics_programs.h).
#include "metrics.skel.h"

namespace ezio::recorder::metrics {
namespace {

uint8_t op_of(const SyscallInfo& s) {
  switch (s.kind) {
    case IoKind::Read:
      return EZIO_M_SC_READ;
    case IoKind::Write:
      return EZIO_M_SC_WRITE;
    case IoKind::Open:
      return EZIO_M_SC_OPEN;
    case IoKind::Close:
      return EZIO_M_SC_CLOSE;
    case IoKind::Flush:
      if (s.name == "fsync") return EZIO_M_SC_FSYNC;
      if (s.name == "fdatasync") return EZIO_M_SC_FDATASYNC;
      if (s.name == "sync_file_range") return EZIO_M_SC_SYNC_FILE_RANGE;
      return EZIO_M_NONE;
    default:
      return EZIO_M_NONE;
  }
}

// Whether the kernel has this tracepoint (its BTF type btf_trace_<name>).
bool has_tracepoint(const char* name) {
  btf* vmlinux = btf__load_vmlinux_btf();
  if (!vmlinux) return true;  // let the load say what is wrong
  bool found = btf__find_by_name_kind(vmlinux, fmt::format("btf_trace_{}", name).c_str(),
                                      BTF_KIND_TYPEDEF) > 0;
  btf__free(vmlinux);
  return found;
}

}  // namespace

void MetricsPrograms::Destroy::operator()(::metrics* skel) const { metrics__destroy(skel); }

MetricsPrograms::MetricsPrograms(uint32_t max_series) : max_series_(max_series) {
  if (max_series == 0) fail("the metrics' table needs room for one series at least");
  route_libbpf_logs();
  // The recorder's handlers of tp_btf/ sections are libbpf's for the whole process (attach_ids.h):
  // these programs load through them too, with their attach points found here.
  register_attach_handlers();
  skel_.reset(metrics__open());
  if (!skel_) fail("cannot open the metrics' BPF object: {}", errno_text(errno));
  for (const SyscallInfo& s : syscall_table()) {
    if (s.nr < EZIO_MAX_SYSCALL_NR) skel_->rodata->syscall_op[s.nr] = op_of(s);
  }
  if (int err = bpf_map__set_max_entries(skel_->maps.series, max_series); err != 0) {
    fail("cannot size the metrics' table: {}", errno_text(-err));
  }
  // Before 6.5 requests start at block_getrq, which the metrics do not take: their requests are
  // then owned from their issue (a flush its asker's, the others no one's).
  if (!has_tracepoint("block_io_start")) {
    bpf_program__set_autoload(skel_->progs.ezio_m_io_start, false);
    spdlog::warn(
        "metrics: this kernel has no block_io_start tracepoint; block requests are "
        "counted per device only");
  }
  {
    AttachIdsInUse ids(skel_->obj, find_attach_ids(btf_attach_sections(skel_->obj)));
    if (int err = metrics__load(skel_.get()); err != 0) {
      fail("cannot load the metrics' BPF programs: {}", errno_text(-err));
    }
  }
  if (int err = metrics__attach(skel_.get()); err != 0) {
    fail("cannot attach the metrics' BPF programs: {}", errno_text(-err));
  }
}

MetricsPrograms::~MetricsPrograms() = default;

std::vector<Series> MetricsPrograms::read() const {
  int fd = bpf_map__fd(skel_->maps.series);
  std::vector<Series> out;
  ezio_metric_key key{}, next{};
  const void* prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    Series s;
    s.key = next;
    // A series removed meanwhile (forget) is skipped.
    if (bpf_map_lookup_elem(fd, &next, &s.value) == 0) out.push_back(s);
    key = next;
    prev = &key;
  }
  return out;
}

void MetricsPrograms::forget(const std::vector<ezio_metric_key>& keys) const {
  int fd = bpf_map__fd(skel_->maps.series);
  for (const ezio_metric_key& k : keys) bpf_map_delete_elem(fd, &k);
}

std::array<uint64_t, EZIO_M_OP_COUNT> MetricsPrograms::overflow() const {
  int fd = bpf_map__fd(skel_->maps.overflow);
  std::array<uint64_t, EZIO_M_OP_COUNT> out{};
  for (uint32_t op = 0; op < EZIO_M_OP_COUNT; ++op) bpf_map_lookup_elem(fd, &op, &out[op]);
  return out;
}

size_t MetricsPrograms::attached_programs() const {
  size_t n = 0;
  for (int i = 0; i < skel_->skeleton->prog_cnt; ++i)
    n += *skel_->skeleton->progs[i].link != nullptr;
  return n;
}

}  // namespace ezio::recorder::metrics
