// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The service's epoll sets (its loop's, the scontrol children's) wake on a readable fd, found by
// the fd itself in the event.
#include <sys/epoll.h>

#include <cerrno>

#include "common/error.h"

namespace ezio::recorder::service {

inline void watch(int epoll, int fd) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  if (epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &ev) != 0) fail("epoll_ctl: {}", errno_text(errno));
}

}  // namespace ezio::recorder::service
