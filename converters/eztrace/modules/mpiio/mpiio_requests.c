// SPDX-License-Identifier: GPL-2.0-only
// Non-blocking MPI-IO operations end when their request completes: MPI_Wait, MPI_Test and their
// -all, -any and -some forms.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "mpiio.h"

struct pending {
  MPI_Request request;
  OTF2_IoHandleRef handle;
  uint64_t matching_id;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct pending* table;
static size_t used, capacity;
// Read without the lock: the completion calls of programs without MPI-IO requests stay cheap.
static atomic_size_t outstanding;

void mpiio_request_add(MPI_Request request, OTF2_IoHandleRef handle, uint64_t matching_id) {
  pthread_mutex_lock(&lock);
  if (used == capacity) {
    size_t n = capacity ? capacity * 2 : 16;
    struct pending* grown = realloc(table, n * sizeof *table);
    if (grown) table = grown, capacity = n;
  }
  if (used < capacity) {
    table[used++] = (struct pending){request, handle, matching_id};
    atomic_store(&outstanding, used);
  }
  pthread_mutex_unlock(&lock);
}

static int take(MPI_Request request, struct pending* out) {
  int found = 0;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < used; i++) {
    if (table[i].request != request) continue;
    *out = table[i];
    table[i] = table[--used];
    atomic_store(&outstanding, used);
    found = 1;
    break;
  }
  pthread_mutex_unlock(&lock);
  return found;
}

static void completed(MPI_Request before, MPI_Status* status) {
  struct pending p;
  if (before != MPI_REQUEST_NULL && take(before, &p))
    mpiio_write_complete(p.handle, p.matching_id, status);
}

// The next definition (EZTrace's mpich module, which calls the next one itself, or MPI's): both
// modules record these calls.
#define NEXT(NAME, TYPE)                                         \
  static TYPE next_##NAME;                                       \
  if (!next_##NAME) next_##NAME = (TYPE)dlsym(RTLD_NEXT, #NAME); \
  if (!next_##NAME) next_##NAME = P##NAME;

typedef int (*wait_fn)(MPI_Request*, MPI_Status*);
typedef int (*test_fn)(MPI_Request*, int*, MPI_Status*);
typedef int (*waitall_fn)(int, MPI_Request[], MPI_Status[]);
typedef int (*testall_fn)(int, MPI_Request[], int*, MPI_Status[]);
typedef int (*waitany_fn)(int, MPI_Request[], int*, MPI_Status*);
typedef int (*testany_fn)(int, MPI_Request[], int*, int*, MPI_Status*);
typedef int (*waitsome_fn)(int, MPI_Request[], int*, int[], MPI_Status[]);
typedef int (*testsome_fn)(int, MPI_Request[], int*, int[], MPI_Status[]);

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  NEXT(MPI_Wait, wait_fn)
  if (!atomic_load(&outstanding)) return next_MPI_Wait(request, status);
  MPI_Status local;
  if (status == MPI_STATUS_IGNORE) status = &local;
  MPI_Request before = *request;
  int rc = next_MPI_Wait(request, status);
  if (rc == MPI_SUCCESS) completed(before, status);
  return rc;
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  NEXT(MPI_Test, test_fn)
  if (!atomic_load(&outstanding)) return next_MPI_Test(request, flag, status);
  MPI_Status local;
  if (status == MPI_STATUS_IGNORE) status = &local;
  MPI_Request before = *request;
  int rc = next_MPI_Test(request, flag, status);
  if (rc == MPI_SUCCESS && *flag) completed(before, status);
  return rc;
}

// The -any forms: one request completed, at *index.
static void completed_any(const MPI_Request* before, int index, MPI_Status* status) {
  if (index != MPI_UNDEFINED) completed(before[index], status);
}

// Copies of the requests and a status array, for the array forms.
struct arrays {
  MPI_Request* before;
  MPI_Status* statuses;
};

static int arrays_init(struct arrays* a, int count, const MPI_Request* requests,
                       MPI_Status* statuses) {
  size_t n = count > 0 ? (size_t)count : 1;
  a->before = malloc(n * sizeof *a->before);
  a->statuses = statuses == MPI_STATUSES_IGNORE ? malloc(n * sizeof *a->statuses) : statuses;
  if (!a->before || !a->statuses) {
    free(a->before);
    if (a->statuses != statuses) free(a->statuses);
    return 0;
  }
  for (int i = 0; i < count; i++) a->before[i] = requests[i];
  return 1;
}

static void arrays_free(struct arrays* a, MPI_Status* statuses) {
  free(a->before);
  if (a->statuses != statuses) free(a->statuses);
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  NEXT(MPI_Waitall, waitall_fn)
  struct arrays a;
  if (!atomic_load(&outstanding) || !arrays_init(&a, count, requests, statuses))
    return next_MPI_Waitall(count, requests, statuses);
  int rc = next_MPI_Waitall(count, requests, a.statuses);
  for (int i = 0; rc == MPI_SUCCESS && i < count; i++) completed(a.before[i], &a.statuses[i]);
  arrays_free(&a, statuses);
  return rc;
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  NEXT(MPI_Testall, testall_fn)
  struct arrays a;
  if (!atomic_load(&outstanding) || !arrays_init(&a, count, requests, statuses))
    return next_MPI_Testall(count, requests, flag, statuses);
  int rc = next_MPI_Testall(count, requests, flag, a.statuses);
  for (int i = 0; rc == MPI_SUCCESS && *flag && i < count; i++)
    completed(a.before[i], &a.statuses[i]);
  arrays_free(&a, statuses);
  return rc;
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  NEXT(MPI_Waitany, waitany_fn)
  struct arrays a;
  if (!atomic_load(&outstanding) || !arrays_init(&a, count, requests, MPI_STATUSES_IGNORE))
    return next_MPI_Waitany(count, requests, index, status);
  MPI_Status* st = status == MPI_STATUS_IGNORE ? a.statuses : status;
  int rc = next_MPI_Waitany(count, requests, index, st);
  if (rc == MPI_SUCCESS) completed_any(a.before, *index, st);
  arrays_free(&a, MPI_STATUSES_IGNORE);
  return rc;
}

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  NEXT(MPI_Testany, testany_fn)
  struct arrays a;
  if (!atomic_load(&outstanding) || !arrays_init(&a, count, requests, MPI_STATUSES_IGNORE))
    return next_MPI_Testany(count, requests, index, flag, status);
  MPI_Status* st = status == MPI_STATUS_IGNORE ? a.statuses : status;
  int rc = next_MPI_Testany(count, requests, index, flag, st);
  if (rc == MPI_SUCCESS && *flag) completed_any(a.before, *index, st);
  arrays_free(&a, MPI_STATUSES_IGNORE);
  return rc;
}

// The -some forms: *outcount requests completed, at indices[0..outcount).
static void completed_some(const struct arrays* a, int outcount, const int* indices) {
  for (int k = 0; outcount != MPI_UNDEFINED && k < outcount; k++)
    completed(a->before[indices[k]], &a->statuses[k]);
}

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  NEXT(MPI_Waitsome, waitsome_fn)
  struct arrays a;
  if (!atomic_load(&outstanding) || !arrays_init(&a, incount, requests, statuses))
    return next_MPI_Waitsome(incount, requests, outcount, indices, statuses);
  int rc = next_MPI_Waitsome(incount, requests, outcount, indices, a.statuses);
  if (rc == MPI_SUCCESS) completed_some(&a, *outcount, indices);
  arrays_free(&a, statuses);
  return rc;
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  NEXT(MPI_Testsome, testsome_fn)
  struct arrays a;
  if (!atomic_load(&outstanding) || !arrays_init(&a, incount, requests, statuses))
    return next_MPI_Testsome(incount, requests, outcount, indices, statuses);
  int rc = next_MPI_Testsome(incount, requests, outcount, indices, a.statuses);
  if (rc == MPI_SUCCESS) completed_some(&a, *outcount, indices);
  arrays_free(&a, statuses);
  return rc;
}

// A freed request completes unobserved: forgotten, so that MPI reusing its handle for another
// request does not complete this operation.
typedef int (*free_fn)(MPI_Request*);

int MPI_Request_free(MPI_Request* request) {
  NEXT(MPI_Request_free, free_fn)
  MPI_Request before = *request;
  int rc = next_MPI_Request_free(request);
  struct pending p;
  if (rc == MPI_SUCCESS && atomic_load(&outstanding)) take(before, &p);
  return rc;
}
