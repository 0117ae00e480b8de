#include "converters/archive_model.h"

namespace ezio::converters {

const char* event_kind_name(EventKind k) {
  switch (k) {
    case EventKind::Enter:
      return "ENTER";
    case EventKind::Leave:
      return "LEAVE";
    case EventKind::ThreadBegin:
      return "THREAD_BEGIN";
    case EventKind::ThreadEnd:
      return "THREAD_END";
    case EventKind::IoCreateHandle:
      return "IO_CREATE_HANDLE";
    case EventKind::IoDestroyHandle:
      return "IO_DESTROY_HANDLE";
    case EventKind::IoDuplicateHandle:
      return "IO_DUPLICATE_HANDLE";
    case EventKind::IoSeek:
      return "IO_SEEK";
    case EventKind::IoChangeStatusFlags:
      return "IO_CHANGE_STATUS_FLAGS";
    case EventKind::IoDeleteFile:
      return "IO_DELETE_FILE";
    case EventKind::IoOperationBegin:
      return "IO_OPERATION_BEGIN";
    case EventKind::IoOperationTest:
      return "IO_OPERATION_TEST";
    case EventKind::IoOperationIssued:
      return "IO_OPERATION_ISSUED";
    case EventKind::IoOperationComplete:
      return "IO_OPERATION_COMPLETE";
    case EventKind::IoOperationCancelled:
      return "IO_OPERATION_CANCELLED";
    case EventKind::Metric:
      return "METRIC";
    case EventKind::MpiSend:
      return "MPI_SEND";
    case EventKind::MpiIsend:
      return "MPI_ISEND";
    case EventKind::MpiIsendComplete:
      return "MPI_ISEND_COMPLETE";
    case EventKind::MpiIrecvRequest:
      return "MPI_IRECV_REQUEST";
    case EventKind::MpiRecv:
      return "MPI_RECV";
    case EventKind::MpiIrecv:
      return "MPI_IRECV";
    case EventKind::MpiRequestTest:
      return "MPI_REQUEST_TEST";
    case EventKind::MpiRequestCancelled:
      return "MPI_REQUEST_CANCELLED";
    case EventKind::MpiCollectiveBegin:
      return "MPI_COLLECTIVE_BEGIN";
    case EventKind::MpiCollectiveEnd:
      return "MPI_COLLECTIVE_END";
  }
  return "?";
}

bool is_io_event(EventKind k) {
  return k >= EventKind::IoCreateHandle && k <= EventKind::IoOperationCancelled;
}

bool is_mpi_event(EventKind k) { return k >= EventKind::MpiSend; }

const std::string& Definitions::str(Ref r) const {
  static const std::string empty;
  auto it = strings.find(r);
  return it == strings.end() ? empty : it->second;
}

std::optional<uint64_t> Definitions::group_property(Ref group, std::string_view name) const {
  for (const auto& p : group_properties) {
    if (p.owner == group && str(p.name) == name) return p.value.uint64;
  }
  return std::nullopt;
}

std::optional<uint64_t> Definitions::location_property(OTF2_LocationRef loc,
                                                       std::string_view name) const {
  for (const auto& p : location_properties) {
    if (p.location == loc && str(p.name) == name) return p.value.uint64;
  }
  return std::nullopt;
}

std::optional<std::string> Definitions::handle_path(Ref handle) const {
  auto h = io_handles.find(handle);
  if (h == io_handles.end()) return std::nullopt;
  auto f = io_files.find(h->second.file);
  if (f == io_files.end()) return std::nullopt;
  return str(f->second.name);
}

}  // namespace ezio::converters
