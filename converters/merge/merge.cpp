// SPDX-License-Identifier: GPL-2.0-only
#include "converters/merge/merge.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <future>

#include "common/schema/layers.h"
#include "converters/merge/interleave.h"
#include "converters/merge/merger.h"

// The merge's stages in order (merger.h lists where each lives).
namespace ezio::converters {
namespace {

// Logs how long each step took (`eziotrace -v`): what the time after the application is spent on.
class StepClock {
 public:
  void done(const char* step) {
    auto now = std::chrono::steady_clock::now();
    spdlog::debug("merge: {} in {:.3f} s", step,
                  std::chrono::duration<double>(now - last_).count());
    last_ = now;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace

namespace merge_stages {

bool opens_a_call(EventKind k) {
  return k == EventKind::Enter || k == EventKind::ThreadBegin || k == EventKind::IoOperationBegin ||
         k == EventKind::IoDestroyHandle || k == EventKind::MpiCollectiveBegin;
}

KernelLocation* Merger::kernel_location(OTF2_LocationRef loc) {
  auto it = kernel.locations.find(loc);
  return it == kernel.locations.end() ? nullptr : &it->second;
}

void Merger::run(const std::filesystem::path& out_dir) {
  StepClock clock;
  // Decide on the span summaries: what is EZTrace's own, which processes have no user trace.
  index_kernel();
  filter_own_io();
  find_untraced();
  count_lost_syscalls();
  clock.done("EZTrace's own I/O found");

  Output out(out_dir, kernel.defs);
  for (const auto& in : inputs) out.comms.add_archive(in.archive->defs);
  define_kernel_locations(out);
  // Each user thread's location, checked against its kernel spans.
  std::vector<Process> processes = map_threads(out);
  define_comm_ranks(out);
  clock.done("threads mapped and checked");

  SpanWriter writer(*this, out);
  write_threads(out, writer, processes);
  write_kernel_only(out, writer);
  clock.done("events written");
  write_properties(out);  // and closes the archive
  clock.done("archive closed");
  std::set<const EventStore*> stores = {kernel.events.get()};
  for (const auto& in : inputs) stores.insert(in.archive->events.get());
  for (const EventStore* s : stores) report.store_bytes += s->bytes();
  report.kernel_events_recorded = kernel.recorded;
}

}  // namespace merge_stages

std::string_view region_layer(std::string_view canonical) {
  for (std::string_view layer : schema::kKernelIoLayers) {
    if (canonical.size() > layer.size() && canonical.substr(0, layer.size()) == layer &&
        canonical[layer.size()] == ':') {
      return layer;
    }
  }
  return {};
}

bool is_user_event(const Definitions& d, const Event& e) {
  switch (e.kind) {
    case EventKind::Enter:
    case EventKind::Leave: {
      auto r = d.regions.find(e.ref);
      return r == d.regions.end() || region_layer(d.str(r->second.canonical)).empty();
    }
    case EventKind::ThreadBegin:
    case EventKind::ThreadEnd:
      return true;
    case EventKind::Metric:
      return false;
    case EventKind::MpiSend:
    case EventKind::MpiIsend:
    case EventKind::MpiIsendComplete:
    case EventKind::MpiIrecvRequest:
    case EventKind::MpiRecv:
    case EventKind::MpiIrecv:
    case EventKind::MpiRequestTest:
    case EventKind::MpiRequestCancelled:
    case EventKind::MpiCollectiveBegin:
    case EventKind::MpiCollectiveEnd:
      return true;  // the kernel side has no MPI events
    case EventKind::IoDeleteFile:
      return d.str(d.io_paradigms.count(e.ref) ? d.io_paradigms.at(e.ref).identification
                                               : OTF2_UNDEFINED_STRING) != "linux";
    default: {
      auto h = d.io_handles.find(e.ref);
      if (h == d.io_handles.end()) return true;
      auto p = d.io_paradigms.find(h->second.paradigm);
      return p == d.io_paradigms.end() || d.str(p->second.identification) != "linux";
    }
  }
}

namespace {

// The directories whose files are EZTrace's or the helper's, normalized: those given and every
// image's trace directory.
std::vector<std::string> own_directories(const std::vector<std::filesystem::path>& dirs,
                                         const std::vector<Sidecar>& images) {
  std::vector<std::string> own;
  for (const auto& d : dirs) own.push_back(d.lexically_normal().string());
  for (const auto& i : images) own.push_back(i.trace_dir().string());
  return own;
}

KernelIndex index_kernel(const std::filesystem::path& anchor, const std::vector<std::string>& own,
                         const std::filesystem::path& out_dir,
                         std::unique_ptr<EventStore> recorded = nullptr) {
  // The span summaries and events go next to the output, on its file system.
  return index_kernel_spans(anchor, own, std::filesystem::absolute(out_dir).parent_path(),
                            std::move(recorded));
}

MergeReport merge_indexed(const EztraceInputs& eztrace, const std::vector<Sidecar>& images,
                          KernelIndex kernel, const std::filesystem::path& out_dir) {
  merge_stages::Merger m(eztrace, images, std::move(kernel));
  m.run(out_dir);
  return std::move(m.report);
}

}  // namespace

MergeReport merge_archives(const EztraceInputs& eztrace, const std::filesystem::path& kernel_anchor,
                           const std::filesystem::path& out_dir,
                           const std::vector<std::filesystem::path>& own_dirs,
                           const std::vector<Sidecar>& images) {
  std::vector<std::string> own = own_directories(own_dirs, images);
  for (const auto& i : eztrace.traces) own.push_back(i.process.trace_dir().string());
  for (const auto& u : eztrace.unreadable) own.push_back(u.process.trace_dir().string());
  return merge_indexed(eztrace, images, index_kernel(kernel_anchor, own, out_dir), out_dir);
}

MergeReport merge_archives(const std::function<EztraceInputs()>& load_eztrace,
                           const std::filesystem::path& kernel_anchor,
                           const std::filesystem::path& out_dir,
                           const std::vector<std::filesystem::path>& own_dirs,
                           const std::vector<Sidecar>& images,
                           std::unique_ptr<EventStore> kernel_events) {
  const std::vector<std::string> own = own_directories(own_dirs, images);
  // The future waits for the thread however this function is left.
  StepClock clock;
  double kernel_s = 0;  // logged by this thread: the logger is single-threaded
  auto kernel = std::async(std::launch::async, [&] {
    auto t0 = std::chrono::steady_clock::now();
    KernelIndex index = index_kernel(kernel_anchor, own, out_dir, std::move(kernel_events));
    kernel_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return index;
  });
  const EztraceInputs eztrace = load_eztrace();
  clock.done("EZTrace's archives read");
  KernelIndex index = kernel.get();
  clock.done("then the kernel archive's index awaited");
  spdlog::debug("merge: kernel archive indexed ({}) in {:.3f} s, on a thread of its own",
                index.recorded ? "the recorder's copy replayed" : "its events decoded", kernel_s);
  return merge_indexed(eztrace, images, std::move(index), out_dir);
}

}  // namespace ezio::converters
