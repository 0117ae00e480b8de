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

// The tracepoint's argument count from the kernel's BTF (btf_trace_<name>: a pointer to a
// prototype of void *__data and the arguments); -1 when the kernel has no such tracepoint, -2 when
// its BTF cannot be read (the load will say what is wrong).
int tracepoint_args(const char* name) {
  btf* vmlinux = btf__load_vmlinux_btf();
  if (!vmlinux) return -2;
  int id =
      btf__find_by_name_kind(vmlinux, fmt::format("btf_trace_{}", name).c_str(), BTF_KIND_TYPEDEF);
  int n = -1;
  if (id > 0) {
    const btf_type* t = btf__type_by_id(vmlinux, id);
    for (int hops = 0; t && hops < 2; ++hops) t = btf__type_by_id(vmlinux, t->type);
    if (t && btf_is_func_proto(t) && btf_vlen(t) >= 1) n = btf_vlen(t) - 1;
  }
  btf__free(vmlinux);
  return n;
}

bool has_tracepoint(const char* name) { return tracepoint_args(name) != -1; }

// The programs of tracepoints this kernel lacks (6.1 has no mm_filemap_get_pages) are left out,
// their series stay absent; balance_dirty_pages' program is the one of the kernel's layout.
void plan_optional_programs(::metrics* skel) {
  auto leave_out = [](bpf_program* p, const char* tp) {
    bpf_program__set_autoload(p, false);
    spdlog::warn("metrics: this kernel has no usable {} tracepoint; its series are not kept", tp);
  };
  if (!has_tracepoint("mm_filemap_add_to_page_cache") || !has_tracepoint("mm_filemap_get_pages")) {
    leave_out(skel->progs.ezio_m_pc_add, "mm_filemap_add_to_page_cache");
    leave_out(skel->progs.ezio_m_pc_get_pages, "mm_filemap_get_pages");
  }
  if (!has_tracepoint("mm_filemap_delete_from_page_cache")) {
    leave_out(skel->progs.ezio_m_pc_delete, "mm_filemap_delete_from_page_cache");
  }
  int throttle = tracepoint_args("balance_dirty_pages");
  if (throttle != 8 && throttle != -2)
    bpf_program__set_autoload(skel->progs.ezio_m_throttle_8, false);
  if (throttle != 12) bpf_program__set_autoload(skel->progs.ezio_m_throttle_12, false);
  if (throttle != 8 && throttle != 12 && throttle != -2) {
    spdlog::warn(
        "metrics: balance_dirty_pages has {} arguments here (8 or 12 known): the time "
        "throttled by the dirty-page limits is not kept",
        throttle);
  }
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
  plan_optional_programs(skel_.get());
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
