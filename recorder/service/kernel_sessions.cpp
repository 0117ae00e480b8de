#include "recorder/service/kernel_sessions.h"

#include "common/error.h"

namespace ezio::recorder::service {

// Until KernelPrograms (s24-kernel) is merged: service_source.cpp and this adapter need it.
std::unique_ptr<SessionKernel> load_kernel_sessions(const std::string&) {
  fail("this eziotraced was built without the session-capable programs");
}

}  // namespace ezio::recorder::service
