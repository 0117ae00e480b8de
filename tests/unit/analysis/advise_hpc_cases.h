// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Archives for advise's MPI-IO and HDF5 rules (advise_rules_test.cpp's cases): each builds one
// where its rule fires (`fire`) and one where it does not.
#include "tests/support/trace_builder.h"

namespace ezio::test {

void mpiio_small_independent(TraceBuilder& b, bool fire);
void collective_small_requests(TraceBuilder& b, bool fire);
void shared_file_pointer(TraceBuilder& b, bool fire);
void hdf5_small_writes(TraceBuilder& b, bool fire);
void hdf5_small_chunks(TraceBuilder& b, bool fire);
void hdf5_metadata(TraceBuilder& b, bool fire);

}  // namespace ezio::test
