// SPDX-License-Identifier: GPL-2.0-only
// An open-addressing table from 64-bit keys to 32-bit values (the module's look-ups by hid_t and by
// text hash). Not locked: the caller holds its lock.
#ifndef EZT_HDF5_TABLE_H
#define EZT_HDF5_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct hdf5_table {
  uint64_t* keys;  // 0: empty, UINT64_MAX: removed
  uint32_t* values;
  size_t capacity, filled;
};

// With `match` (keys that may collide: text hashes), a slot counts only if match(value, ctx).
int hdf5_table_find(const struct hdf5_table* t, uint64_t key,
                    int (*match)(uint32_t value, const void* ctx), const void* ctx,
                    uint32_t* value);
// Adds key -> value, or with `replace` sets the value of the key's slot; 0 when out of memory.
int hdf5_table_put(struct hdf5_table* t, uint64_t key, uint32_t value, int replace);
void hdf5_table_remove(struct hdf5_table* t, uint64_t key);

#endif
