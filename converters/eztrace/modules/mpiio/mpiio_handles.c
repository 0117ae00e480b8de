// SPDX-License-Identifier: GPL-2.0-only
// One OTF2 I/O handle per MPI_File, and one IoFile per handle or deleted path.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpiio.h"

// Handle refs of rank r start at kBase + r * kPerRank: rank 0 writes every rank's definitions
// (EZTrace's other ranks cannot), so refs must not collide across ranks, nor with posixio's
// (numbered from 0).
enum { kBase = MPIIO_REF_BASE, kPerRank = 1u << 16 };

struct entry {
  MPI_File fh;  // MPI_FILE_NULL: closed, or a deleted path
  OTF2_IoHandleRef ref;
  char* path;
  int split_pending;
  uint64_t split_id, split_bytes;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry* entries;
static size_t count, capacity;
// Bumped by every change of which file has which handle: a thread's copy of its last look-up is
// good while this has not moved (repeated calls on one file skip the lock and the scan).
static atomic_uint_fast64_t handles_changed;
struct last_handle {
  int valid;
  MPI_File fh;
  OTF2_IoHandleRef ref;
  uint_fast64_t seen;
};
static __thread struct last_handle last __attribute__((tls_model("initial-exec")));

static uint32_t rank_base(void) {
  int initialized = 0, finalized = 0, rank = 0;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  if (initialized && !finalized) PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return kBase + (uint32_t)rank * kPerRank;
}

static struct entry* find(MPI_File fh) {
  for (size_t i = count; i-- > 0;)
    if (entries[i].fh == fh && fh != MPI_FILE_NULL) return &entries[i];
  return NULL;
}

static OTF2_IoHandleRef add(MPI_File fh, const char* path) {
  OTF2_IoHandleRef ref = OTF2_UNDEFINED_IO_HANDLE;
  pthread_mutex_lock(&lock);
  if (count == capacity) {
    size_t n = capacity ? capacity * 2 : 16;
    struct entry* grown = realloc(entries, n * sizeof *entries);
    if (grown) entries = grown, capacity = n;
  }
  if (count < capacity && count < kPerRank) {
    atomic_fetch_add(&handles_changed, 1);
    ref = rank_base() + (uint32_t)count;
    entries[count] = (struct entry){fh, ref, strdup(path ? path : "<unnamed>"), 0, 0, 0};
    count++;
  }
  pthread_mutex_unlock(&lock);
  return ref;
}

OTF2_IoHandleRef mpiio_handle_new(MPI_File fh, const char* path) { return add(fh, path); }
OTF2_IoHandleRef mpiio_file_new(const char* path) { return add(MPI_FILE_NULL, path); }

OTF2_IoHandleRef mpiio_handle_of(MPI_File fh) {
  uint_fast64_t changed = atomic_load_explicit(&handles_changed, memory_order_acquire);
  if (last.valid && last.seen == changed && last.fh == fh) return last.ref;
  pthread_mutex_lock(&lock);
  struct entry* e = find(fh);
  OTF2_IoHandleRef ref = e ? e->ref : OTF2_UNDEFINED_IO_HANDLE;
  pthread_mutex_unlock(&lock);
  last = (struct last_handle){1, fh, ref, changed};
  return ref;
}

void mpiio_handle_forget(MPI_File fh) {
  pthread_mutex_lock(&lock);
  atomic_fetch_add(&handles_changed, 1);
  struct entry* e = find(fh);
  if (e) e->fh = MPI_FILE_NULL;
  pthread_mutex_unlock(&lock);
}

void mpiio_split_put(MPI_File fh, uint64_t matching_id, uint64_t bytes) {
  pthread_mutex_lock(&lock);
  struct entry* e = find(fh);
  if (e) e->split_pending = 1, e->split_id = matching_id, e->split_bytes = bytes;
  pthread_mutex_unlock(&lock);
}

int mpiio_split_take(MPI_File fh, uint64_t* matching_id, uint64_t* bytes) {
  pthread_mutex_lock(&lock);
  struct entry* e = find(fh);
  int found = e && e->split_pending;
  if (found) *matching_id = e->split_id, *bytes = e->split_bytes, e->split_pending = 0;
  pthread_mutex_unlock(&lock);
  return found;
}

char* mpiio_handles_serialize(int* size) {
  pthread_mutex_lock(&lock);
  size_t total = 0;
  for (size_t i = 0; i < count; i++) total += strlen(entries[i].path) + 12;
  char* out = malloc(total + 1);
  size_t used = 0;
  for (size_t i = 0; out && i < count; i++)
    used += (size_t)sprintf(out + used, "%u %s", entries[i].ref, entries[i].path) + 1;
  pthread_mutex_unlock(&lock);
  *size = out ? (int)used : 0;
  return out;
}
