// SPDX-License-Identifier: GPL-2.0-only
#include "ezt_hdf5_table.h"

#include <stdlib.h>

enum { kEmpty = 0 };
#define REMOVED UINT64_MAX

// Keys 0 and UINT64_MAX mark slots: ids never take them (HDF5's are positive), hashes are moved.
static uint64_t usable(uint64_t key) { return key == kEmpty ? 1 : key == REMOVED ? 2 : key; }

static size_t start(const struct hdf5_table* t, uint64_t key) {
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdull;
  key ^= key >> 33;
  return (size_t)key & (t->capacity - 1);
}

int hdf5_table_find(const struct hdf5_table* t, uint64_t key,
                    int (*match)(uint32_t value, const void* ctx), const void* ctx,
                    uint32_t* value) {
  if (!t->capacity) return 0;
  key = usable(key);
  for (size_t i = start(t, key), n = 0; n < t->capacity; i = (i + 1) & (t->capacity - 1), n++) {
    if (t->keys[i] == kEmpty) return 0;
    if (t->keys[i] == key && (!match || match(t->values[i], ctx))) {
      *value = t->values[i];
      return 1;
    }
  }
  return 0;
}

static void insert(struct hdf5_table* t, uint64_t key, uint32_t value) {
  size_t i = start(t, key);
  while (t->keys[i] != kEmpty && t->keys[i] != REMOVED) i = (i + 1) & (t->capacity - 1);
  if (t->keys[i] == kEmpty) t->filled++;
  t->keys[i] = key;
  t->values[i] = value;
}

// Doubles (or just drops the removed slots) when more than half the slots are taken.
static int grow(struct hdf5_table* t) {
  size_t live = 0;
  for (size_t i = 0; i < t->capacity; i++) live += t->keys[i] != kEmpty && t->keys[i] != REMOVED;
  size_t capacity = t->capacity ? t->capacity : 64;
  while (live * 2 + 2 > capacity) capacity *= 2;
  uint64_t* keys = calloc(capacity, sizeof *keys);
  uint32_t* values = calloc(capacity, sizeof *values);
  if (!keys || !values) {
    free(keys);
    free(values);
    return 0;
  }
  struct hdf5_table old = *t;
  *t = (struct hdf5_table){keys, values, capacity, 0};
  for (size_t i = 0; i < old.capacity; i++)
    if (old.keys[i] != kEmpty && old.keys[i] != REMOVED) insert(t, old.keys[i], old.values[i]);
  free(old.keys);
  free(old.values);
  return 1;
}

int hdf5_table_put(struct hdf5_table* t, uint64_t key, uint32_t value, int replace) {
  key = usable(key);
  if (replace && t->capacity) {
    for (size_t i = start(t, key), n = 0; n < t->capacity && t->keys[i] != kEmpty;
         i = (i + 1) & (t->capacity - 1), n++) {
      if (t->keys[i] == key) {
        t->values[i] = value;
        return 1;
      }
    }
  }
  if ((t->filled + 1) * 2 > t->capacity && !grow(t)) return 0;
  insert(t, key, value);
  return 1;
}

void hdf5_table_remove(struct hdf5_table* t, uint64_t key) {
  if (!t->capacity) return;
  key = usable(key);
  for (size_t i = start(t, key), n = 0; n < t->capacity && t->keys[i] != kEmpty;
       i = (i + 1) & (t->capacity - 1), n++) {
    if (t->keys[i] == key) {
      t->keys[i] = REMOVED;
      return;
    }
  }
}
