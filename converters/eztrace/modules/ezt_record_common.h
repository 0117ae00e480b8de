// SPDX-License-Identifier: GPL-2.0-only
// What the modules' recording files (hdf5's ezt_hdf5_record.c, mpiio's mpiio_record.c) share:
// EZTrace's per-thread state read by address, matching ids taken by blocks, and one reusable
// OTF2 attribute list per thread. Included by the one file of a module that records (each gets
// its own copies of the statics).
#ifndef EZT_RECORD_COMMON_H
#define EZT_RECORD_COMMON_H

#include <eztrace-lib/eztrace.h>
#include <otf2/otf2.h>
#include <pthread.h>
#include <stdatomic.h>

// EZTrace's per-thread state, by address: its variables live in libeztrace, where each access
// from a module is a call to the TLS resolver; their addresses do not change in a thread's life.
struct ezt_thread {
  enum ezt_trace_status* status;
  OTF2_EvtWriter** writer;
};
static __thread struct ezt_thread ezt_thread_state __attribute__((tls_model("initial-exec")));

// EZTRACE_SAFE, and a writer to write with.
static inline int ezt_can_record(void) {
  if (!ezt_thread_state.writer) ezt_thread_state = (struct ezt_thread){&thread_status, &evt_writer};
  return _ezt_trace.status == ezt_trace_status_running &&
         *ezt_thread_state.status == ezt_trace_status_running && eztrace_should_trace &&
         *ezt_thread_state.writer;
}
// The thread's event writer (ezt_can_record() first).
static inline OTF2_EvtWriter* ezt_writer(void) { return *ezt_thread_state.writer; }

// Matching ids, unique in the process: a thread takes them by blocks, one atomic add per block.
static atomic_uint_fast64_t ezt_next_matching_id = 1;
static inline uint64_t ezt_matching_id(void) {
  enum { kBlock = 1024 };
  static __thread uint64_t next, end __attribute__((tls_model("initial-exec")));
  if (next == end) {
    next = atomic_fetch_add(&ezt_next_matching_id, kBlock);
    end = next + kBlock;
  }
  return next++;
}

// The OTF2 attribute list a module's events carry, one per thread and reused: OTF2 empties a list
// when it writes the event that carries it, and a list made per event costs an allocation and a
// free on every call.
static pthread_key_t ezt_thread_list_key;  // deletes a thread's list when the thread ends
static pthread_once_t ezt_thread_list_once = PTHREAD_ONCE_INIT;
static void ezt_thread_list_delete(void* list) { OTF2_AttributeList_Delete(list); }
static void ezt_thread_list_make_key(void) {
  pthread_key_create(&ezt_thread_list_key, ezt_thread_list_delete);
}

// The thread's list, emptied; NULL when none could be made.
static inline OTF2_AttributeList* ezt_thread_attributes(void) {
  static __thread OTF2_AttributeList* list __attribute__((tls_model("initial-exec")));
  if (!list) {
    pthread_once(&ezt_thread_list_once, ezt_thread_list_make_key);
    list = OTF2_AttributeList_New();
    if (list) pthread_setspecific(ezt_thread_list_key, list);
  }
  if (list) OTF2_AttributeList_RemoveAllAttributes(list);
  return list;
}

#endif
