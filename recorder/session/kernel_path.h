// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Which path a recording takes (--service / --no-service, docs/service.md): eziotraced when asked
// for or when its socket is there, else the programs loaded in this process.
#include <functional>
#include <memory>

#include "recorder/load/kernel_source.h"
#include "recorder/session/record.h"

namespace ezio::recorder::service {

// A ServiceSource when the options and the machine say so; otherwise in_process() (which checks
// the privileges). Without the privileges and without a service, the refusal points to the
// service.
// Whether open_service_or() will take the in-process path without trying the service (asked
// before it is called: the start gate, recorder/session/start_gate.h, needs it).
bool goes_in_process(const RecordOptions& options);

// first: see FirstProcess (kernel_source.h); in_process() gets none.
std::unique_ptr<KernelSource> open_service_or(
    const RecordOptions& options, uint64_t ring_bytes, RecordStore& store, FirstProcess first,
    const std::function<std::unique_ptr<KernelSource>()>& in_process);

}  // namespace ezio::recorder::service
