// SPDX-License-Identifier: GPL-2.0-only
// Finding HDF5's real functions without linking a libhdf5 (docs/hdf5.md, "One build").
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "ezt_hdf5.h"

struct lookup {
  const char* symbol;
  const char* self;  // this module's file: its definitions are the wrappers
  void* found;
};

// The object's definition, unless it is ours. A handle of a library searches it and its
// dependencies only, never the preloaded wrappers.
static int search_object(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  struct lookup* l = data;
  if (!info->dlpi_name || !*info->dlpi_name || strcmp(info->dlpi_name, l->self) == 0) return 0;
  void* handle = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
  if (!handle) return 0;
  void* p = dlsym(handle, l->symbol);
  Dl_info where;
  if (p && dladdr(p, &where) && where.dli_fname && strcmp(where.dli_fname, l->self) != 0)
    l->found = p;
  dlclose(handle);
  return l->found != NULL;
}

void* hdf5_real_symbol(const char* name) {
  void* p = dlsym(RTLD_NEXT, name);
  if (p) return p;
  // h5py's extensions are loaded by python with RTLD_LOCAL, libhdf5 with them: RTLD_NEXT (the
  // global scope) does not see it.
  Dl_info self;
  if (!dladdr((void*)(uintptr_t)hdf5_real_symbol, &self) || !self.dli_fname) return NULL;
  struct lookup l = {name, self.dli_fname, NULL};
  dl_iterate_phdr(search_object, &l);
  return l.found;
}

int hdf5_missing(const char* name) {
  static int said;
  if (!said++)
    fprintf(stderr, "EZTrace hdf5 module: %s called but no loaded library defines it\n", name);
  return -1;
}

static struct hdf5_api api;
static pthread_once_t api_once = PTHREAD_ONCE_INIT;

#define RESOLVE(FIELD) api.FIELD = (__typeof__(api.FIELD))(uintptr_t)hdf5_real_symbol("H5" #FIELD)

static void resolve_api(void) {
  RESOLVE(Sget_select_npoints);
  RESOLVE(Sclose);
  RESOLVE(Tget_size);
  RESOLVE(Dget_space);
  RESOLVE(Dget_create_plist);
  RESOLVE(Dget_type);
  RESOLVE(Aget_space);
  RESOLVE(Aget_name);
  RESOLVE(Pget_layout);
  RESOLVE(Pget_chunk);
  RESOLVE(Pclose);
  RESOLVE(Tclose);
  RESOLVE(Iget_name);
  RESOLVE(Iget_file_id);
  RESOLVE(Idec_ref);
  RESOLVE(Eget_auto2);
  RESOLVE(Eset_auto2);
  RESOLVE(Pget_dxpl_mpio);
}

const struct hdf5_api* hdf5_api(void) {
  static _Atomic int resolved;
  if (!atomic_load_explicit(&resolved, memory_order_acquire)) {
    pthread_once(&api_once, resolve_api);
    atomic_store_explicit(&resolved, 1, memory_order_release);
  }
  return &api;
}

static int find_hdf5(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  (void)data;
  const char* base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
  return base && strncmp(base + 1, "libhdf5", 7) == 0;
}

int hdf5_library_loaded(void) { return dl_iterate_phdr(find_hdf5, NULL); }
