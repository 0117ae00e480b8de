// SPDX-License-Identifier: GPL-2.0-only
// What the module knows of HDF5's open objects and files, and the refs it defines for them.
#include <eztrace-lib/eztrace.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ezt_hdf5.h"
#include "ezt_hdf5_table.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct hdf5_table objects;  // hid -> index in object_store
static struct hdf5_object* object_store;
static hid_t* object_ids;  // the hid of each stored object
static size_t object_count, object_capacity;
static struct hdf5_table strings;  // text hash -> index in defs
static struct hdf5_table files;    // open file hid -> handle ref
// Bumped by every change of the objects: a thread's copy of the last object it looked up is
// good while this has not moved (repeated transfers on one dataset skip the lock and the table).
static atomic_uint_fast64_t objects_changed;
struct last_object {
  hid_t id;
  uint_fast64_t seen;
  struct hdf5_object object;
};
static __thread struct last_object last __attribute__((tls_model("initial-exec")));

// Everything rank 0 defines for this rank at the end: handles (with their file), objects'
// handles and strings.
struct definition {
  char kind;  // 'H' handle and file, 'O' an object's handle, 'S' string
  uint32_t ref;
  char* text;
};
static struct definition* defs;
static size_t def_count, def_capacity;
static uint32_t refs_used;
static int refs_exhausted;

uint32_t hdf5_rank(void) { return ezt_mpi_rank > 0 ? (uint32_t)ezt_mpi_rank : 0; }

// Under the lock. The ref of a new definition, OTF2_UNDEFINED_UINT32 once this rank's range is
// used up (said at the end, hdf5_refs_exhausted).
static uint32_t define(char kind, const char* text) {
  if (refs_used >= HDF5_REFS_PER_RANK) return refs_exhausted = 1, OTF2_UNDEFINED_UINT32;
  if (def_count == def_capacity) {
    size_t n = def_capacity ? def_capacity * 2 : 64;
    struct definition* grown = realloc(defs, n * sizeof *defs);
    if (!grown) return OTF2_UNDEFINED_UINT32;
    defs = grown, def_capacity = n;
  }
  char* copy = strdup(text);
  if (!copy) return OTF2_UNDEFINED_UINT32;
  uint32_t ref = HDF5_REF_BASE + hdf5_rank() * HDF5_REFS_PER_RANK + refs_used++;
  defs[def_count++] = (struct definition){kind, ref, copy};
  return ref;
}

int hdf5_refs_exhausted(void) { return refs_exhausted; }

static uint64_t text_hash(const char* text) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (const unsigned char* p = (const unsigned char*)text; *p; p++)
    h = (h ^ *p) * 1099511628211ull;
  return h;
}

static int same_text(uint32_t index, const void* text) { return !strcmp(defs[index].text, text); }

OTF2_StringRef hdf5_string(const char* text) {
  uint64_t key = text_hash(text);
  uint32_t index;
  pthread_mutex_lock(&lock);
  OTF2_StringRef ref = OTF2_UNDEFINED_STRING;
  if (hdf5_table_find(&strings, key, same_text, text, &index)) {
    ref = defs[index].ref;
  } else {
    ref = define('S', text);
    if (ref != OTF2_UNDEFINED_STRING) hdf5_table_put(&strings, key, (uint32_t)def_count - 1, 0);
  }
  pthread_mutex_unlock(&lock);
  return ref;
}

OTF2_IoHandleRef hdf5_handle_new(hid_t file, const char* path) {
  pthread_mutex_lock(&lock);
  OTF2_IoHandleRef ref = define('H', path ? path : "<unnamed>");
  if (ref != OTF2_UNDEFINED_IO_HANDLE) hdf5_table_put(&files, (uint64_t)file, ref, 1);
  pthread_mutex_unlock(&lock);
  return ref;
}

OTF2_IoHandleRef hdf5_handle_of_file(hid_t file) {
  uint32_t ref = OTF2_UNDEFINED_IO_HANDLE;
  pthread_mutex_lock(&lock);
  hdf5_table_find(&files, (uint64_t)file, NULL, NULL, &ref);
  pthread_mutex_unlock(&lock);
  return ref;
}

void hdf5_handle_forget(hid_t file) {
  pthread_mutex_lock(&lock);
  hdf5_table_remove(&files, (uint64_t)file);
  pthread_mutex_unlock(&lock);
}

OTF2_IoHandleRef hdf5_handle_of_object(hid_t id) {
  const struct hdf5_api* h5 = hdf5_api();
  if (!h5->Iget_file_id || !h5->Idec_ref) return OTF2_UNDEFINED_IO_HANDLE;
  hid_t file = h5->Iget_file_id(id);
  if (file < 0) return OTF2_UNDEFINED_IO_HANDLE;
  OTF2_IoHandleRef ref = hdf5_handle_of_file(file);
  h5->Idec_ref(file);
  return ref;
}

// Objects' handles, one per file handle, path, layout and chunk size: a dataset opened again
// (h5py opens one per access) keeps its handle.
struct object_handle {
  OTF2_IoHandleRef file;
  OTF2_StringRef name;
  int layout;
  uint64_t chunk_bytes;
  uint32_t ref;
};
static struct object_handle* object_handles;
static size_t object_handle_count, object_handle_capacity;
static struct hdf5_table object_handle_index;  // hash of the four -> index in object_handles
// By a handle's place in its rank's range: whether a transfer said its layout. Set before the
// first object handle is handed out, never freed (its pages are touched only as refs are used).
static _Atomic(unsigned char)* announced;

static uint64_t object_key(const struct hdf5_object* o) {
  const uint64_t parts[] = {o->handle, o->name, (uint64_t)(int64_t)o->layout, o->chunk_bytes};
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the words
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) h = (h ^ parts[i]) * 1099511628211ull;
  return h == 0 || h == UINT64_MAX ? 1 : h;  // the table's empty and removed keys
}

static int same_object(uint32_t index, const void* ctx) {
  const struct object_handle* h = &object_handles[index];
  const struct hdf5_object* o = ctx;
  return h->file == o->handle && h->name == o->name && h->layout == o->layout &&
         h->chunk_bytes == o->chunk_bytes;
}

// Under the lock. UNDEFINED for an object of no known file, or when no ref or memory is left.
static OTF2_IoHandleRef object_handle_of(const struct hdf5_object* o) {
  if (o->handle == OTF2_UNDEFINED_IO_HANDLE) return OTF2_UNDEFINED_IO_HANDLE;
  uint64_t key = object_key(o);
  uint32_t index;
  if (hdf5_table_find(&object_handle_index, key, same_object, o, &index))
    return object_handles[index].ref;
  if (!announced) announced = calloc(HDF5_REFS_PER_RANK, sizeof *announced);
  if (object_handle_count == object_handle_capacity) {
    size_t n = object_handle_capacity ? object_handle_capacity * 2 : 64;
    struct object_handle* grown = realloc(object_handles, n * sizeof *grown);
    if (grown) object_handles = grown, object_handle_capacity = n;
  }
  if (!announced || object_handle_count == object_handle_capacity) return OTF2_UNDEFINED_IO_HANDLE;
  char text[32];
  snprintf(text, sizeof text, "%u %u", o->handle, o->name);
  uint32_t ref = define('O', text);
  if (ref == OTF2_UNDEFINED_IO_HANDLE) return ref;
  object_handles[object_handle_count] =
      (struct object_handle){o->handle, o->name, o->layout, o->chunk_bytes, ref};
  hdf5_table_put(&object_handle_index, key, (uint32_t)object_handle_count++, 0);
  return ref;
}

int hdf5_object_announce(OTF2_IoHandleRef object_handle) {
  uint32_t at = (object_handle - HDF5_REF_BASE) % HDF5_REFS_PER_RANK;
  if (!announced || object_handle < HDF5_REF_BASE) return 0;
  if (atomic_load_explicit(&announced[at], memory_order_relaxed)) return 0;
  return !atomic_exchange_explicit(&announced[at], 1, memory_order_relaxed);
}

void hdf5_object_put(hid_t id, struct hdf5_object* object) {
  pthread_mutex_lock(&lock);
  atomic_fetch_add(&objects_changed, 1);
  object->object_handle = object_handle_of(object);
  uint32_t index;
  if (hdf5_table_find(&objects, (uint64_t)id, NULL, NULL, &index)) {
    object_store[index] = *object;
  } else {
    if (object_count == object_capacity) {
      size_t n = object_capacity ? object_capacity * 2 : 64;
      struct hdf5_object* grown = realloc(object_store, n * sizeof *grown);
      if (grown) object_store = grown;
      hid_t* ids = grown ? realloc(object_ids, n * sizeof *ids) : NULL;
      if (ids) object_ids = ids, object_capacity = n;
    }
    if (object_count < object_capacity) {
      object_store[object_count] = *object;
      object_ids[object_count] = id;
      hdf5_table_put(&objects, (uint64_t)id, (uint32_t)object_count++, 1);
    }
  }
  pthread_mutex_unlock(&lock);
}

// The last stored object moves into the freed slot.
void hdf5_object_forget(hid_t id) {
  pthread_mutex_lock(&lock);
  atomic_fetch_add(&objects_changed, 1);
  uint32_t index;
  if (hdf5_table_find(&objects, (uint64_t)id, NULL, NULL, &index)) {
    hdf5_table_remove(&objects, (uint64_t)id);
    if (index != --object_count) {
      object_store[index] = object_store[object_count];
      object_ids[index] = object_ids[object_count];
      hdf5_table_put(&objects, (uint64_t)object_ids[index], index, 1);
    }
  }
  pthread_mutex_unlock(&lock);
}

// The object's path (H5Iget_name), into buf or a malloc'd string (*owned).
static char* name_of(hid_t id, char* buf, size_t size, char** owned) {
  const struct hdf5_api* h5 = hdf5_api();
  *owned = NULL;
  ssize_t n = h5->Iget_name ? h5->Iget_name(id, buf, size) : -1;
  if (n <= 0) return NULL;  // an anonymous object has no path
  if ((size_t)n < size) return buf;
  *owned = malloc((size_t)n + 1);
  if (*owned) h5->Iget_name(id, *owned, (size_t)n + 1);
  return *owned;
}

OTF2_StringRef hdf5_path_of(hid_t loc, const char* name, const char* attribute) {
  char buf[512], *owned = NULL;
  const char* base = "";
  if (!name || name[0] != '/') base = name_of(loc, buf, sizeof buf, &owned);
  if (!base) return OTF2_UNDEFINED_STRING;
  size_t size = strlen(base) + (name ? strlen(name) : 0) + (attribute ? strlen(attribute) : 0) + 4;
  char* path = malloc(size);
  OTF2_StringRef ref = OTF2_UNDEFINED_STRING;
  if (path) {
    hdf5_join_path(path, base, name, attribute);
    ref = hdf5_string(path);
    free(path);
  }
  free(owned);
  return ref;
}

// An object the module did not see opened: described from HDF5, its error printing off (the id
// may be the program's mistake, which HDF5 reports once, in the program's own call).
static void describe(hid_t id, int is_attribute, struct hdf5_object* o) {
  const struct hdf5_api* h5 = hdf5_api();
  *o = (struct hdf5_object){
      OTF2_UNDEFINED_STRING,   OTF2_UNDEFINED_IO_HANDLE, HDF5_LAYOUT_NONE, 0, 0,
      OTF2_UNDEFINED_IO_HANDLE};
  H5E_auto2_t report = NULL;
  void* report_data = NULL;
  if (h5->Eget_auto2) h5->Eget_auto2(H5E_DEFAULT, &report, &report_data);
  if (h5->Eset_auto2) h5->Eset_auto2(H5E_DEFAULT, NULL, NULL);
  o->handle = hdf5_handle_of_object(id);
  if (is_attribute) {
    char attr[256];
    ssize_t n = h5->Aget_name ? h5->Aget_name(id, sizeof attr, attr) : -1;
    if (n >= 0) o->name = hdf5_path_of(id, NULL, attr);
    hid_t space = h5->Aget_space ? h5->Aget_space(id) : -1;
    if (space >= 0) {
      hssize_t points = h5->Sget_select_npoints(space);
      o->points = points > 0 ? (uint64_t)points : 0;
      h5->Sclose(space);
    }
  } else {
    o->name = hdf5_path_of(id, NULL, NULL);
    hid_t dcpl = h5->Dget_create_plist ? h5->Dget_create_plist(id) : -1;
    hid_t type = h5->Dget_type ? h5->Dget_type(id) : -1;
    if (dcpl >= 0) {
      o->layout = hdf5_layout_of(dcpl, type, &o->chunk_bytes);
      h5->Pclose(dcpl);
    }
    if (type >= 0) h5->Tclose(type);
  }
  if (h5->Eset_auto2) h5->Eset_auto2(H5E_DEFAULT, report, report_data);
}

int hdf5_object_get(hid_t id, int is_attribute, struct hdf5_object* out) {
  uint_fast64_t changed = atomic_load_explicit(&objects_changed, memory_order_acquire);
  if (last.id == id && last.seen == changed && id > 0) {
    *out = last.object;
    return 1;
  }
  uint32_t index;
  pthread_mutex_lock(&lock);
  int found = hdf5_table_find(&objects, (uint64_t)id, NULL, NULL, &index);
  if (found) *out = object_store[index];
  pthread_mutex_unlock(&lock);
  if (found) {
    last = (struct last_object){id, changed, *out};
    return 1;
  }
  describe(id, is_attribute, out);
  hdf5_object_put(id, out);
  return 1;
}

char* hdf5_definitions_serialize(int* size) {
  pthread_mutex_lock(&lock);
  size_t total = 0;
  for (size_t i = 0; i < def_count; i++) total += strlen(defs[i].text) + 14;
  char* out = malloc(total + 1);
  size_t used = 0;
  for (size_t i = 0; out && i < def_count; i++)
    used += (size_t)sprintf(out + used, "%c %u %s", defs[i].kind, defs[i].ref, defs[i].text) + 1;
  pthread_mutex_unlock(&lock);
  *size = out ? (int)used : 0;
  return out;
}
