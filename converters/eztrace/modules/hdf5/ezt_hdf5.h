// SPDX-License-Identifier: GPL-2.0-only
// The `hdf5` EZTrace module (docs/hdf5.md): HDF5's file, group, dataset and attribute calls
// wrapped by defining them in a preloaded library, the real ones found with dlsym, and recorded
// into EZTrace's archive with its clock and event writer, as OTF2 I/O operations of the "HDF5"
// paradigm inside a region named after the function.
//
// No libhdf5 is linked: one build serves Debian's serial, MPICH and Open MPI flavours. The
// serial headers give the types; the two parallel-only functions are optional symbols.
#ifndef EZT_HDF5_H
#define EZT_HDF5_H

#include <hdf5.h>
#include <otf2/otf2.h>
#include <stdint.h>

// ---- The real functions (ezt_hdf5_real.c) ----
// The definition that is not ours: dlsym(RTLD_NEXT), or, for a libhdf5 loaded RTLD_LOCAL (h5py
// under python), the first loaded object that defines it. NULL when no object does.
void* hdf5_real_symbol(const char* name);
// Resolves `real_NAME` once (a static of the calling function); a wrapper whose function no
// loaded object defines fails as HDF5 does (-1), saying so once.
#define HDF5_REAL(NAME)                                                                  \
  static __typeof__(&NAME) real_##NAME;                                                  \
  if (!real_##NAME) real_##NAME = (__typeof__(&NAME))(uintptr_t)hdf5_real_symbol(#NAME); \
  if (!real_##NAME) return hdf5_missing(#NAME)
int hdf5_missing(const char* name);
// HDF5 functions the module itself calls (never recorded): NULL until libhdf5 is loaded.
struct hdf5_api {
  hssize_t (*Sget_select_npoints)(hid_t);
  herr_t (*Sclose)(hid_t);
  size_t (*Tget_size)(hid_t);
  hid_t (*Dget_space)(hid_t);
  hid_t (*Dget_create_plist)(hid_t);
  hid_t (*Dget_type)(hid_t);
  hid_t (*Aget_space)(hid_t);
  ssize_t (*Aget_name)(hid_t, size_t, char*);
  H5D_layout_t (*Pget_layout)(hid_t);
  int (*Pget_chunk)(hid_t, int, hsize_t*);
  herr_t (*Pclose)(hid_t);
  herr_t (*Tclose)(hid_t);
  ssize_t (*Iget_name)(hid_t, char*, size_t);
  hid_t (*Iget_file_id)(hid_t);
  int (*Idec_ref)(hid_t);
  herr_t (*Eget_auto2)(hid_t, H5E_auto2_t*, void**);
  herr_t (*Eset_auto2)(hid_t, H5E_auto2_t, void*);
  // Parallel HDF5 only (optional): the transfer mode is an enum, 1 = collective.
  herr_t (*Pget_dxpl_mpio)(hid_t, int*);
};
// Resolved on the first wrapped call (libhdf5 is loaded by then); NULL members are absent.
const struct hdf5_api* hdf5_api(void);
// Points a dataset transfer moves: the memory selection, else the file selection, else the
// dataset's extent (H5S_ALL; in HDF5 1.14 also H5S_BLOCK and H5S_PLIST, ids 1 and 2).
uint64_t hdf5_points(hid_t dataset, hid_t mem_space, hid_t file_space);
uint64_t hdf5_points_of_space(hid_t space);
// The same for a space of the program's, kept until it changes (ezt_hdf5_spaces.c).
uint64_t hdf5_space_points(hid_t space);
// The size of a type (H5Tget_size; predefined native types from a table read once).
uint64_t hdf5_type_size(hid_t type);
// 1 when the transfer plist asks for collective I/O (parallel HDF5), else 0.
int hdf5_xfer_collective(hid_t dxpl);
// Whether a libhdf5 is loaded in this process.
int hdf5_library_loaded(void);

// ---- Objects and handles (ezt_hdf5_objects.c) ----
enum hdf5_layout { HDF5_LAYOUT_NONE = -1 };  // else H5D_layout_t
// What the module knows of an open HDF5 object, by hid_t (HDF5 does not reuse ids soon).
struct hdf5_object {
  OTF2_StringRef name;      // its path in the file (`/g/d`, `/g/d@attr`), or UNDEFINED
  OTF2_IoHandleRef handle;  // the IoHandle of its file
  int layout;               // datasets: H5D_layout_t, else HDF5_LAYOUT_NONE
  uint64_t chunk_bytes;     // chunked datasets: chunk dims product x type size
  uint64_t points;          // attributes: the points of their dataspace
  // Its own IoHandle (set by hdf5_object_put): named by its path, child of its file's handle,
  // one per path, layout and chunk size in a file; UNDEFINED when the file or a ref is missing.
  OTF2_IoHandleRef object_handle;
};
// The object's record, looked up, or computed from HDF5 and kept (ids made by calls the module
// does not wrap: H5Oopen, h5py's). `is_attribute` picks how it is described.
int hdf5_object_get(hid_t id, int is_attribute, struct hdf5_object* out);
// Stores the object, its object_handle set (found or defined).
void hdf5_object_put(hid_t id, struct hdf5_object* object);
// 1 the first time it is asked for this object handle in the process, then 0: the transfer that
// says the object's layout (the handle's definition has no place for it).
int hdf5_object_announce(OTF2_IoHandleRef object_handle);
void hdf5_object_forget(hid_t id);
// The IoHandle of the file an object belongs to (H5Iget_file_id), UNDEFINED if unknown.
OTF2_IoHandleRef hdf5_handle_of_object(hid_t id);
// One IoHandle (with its IoRegularFile) per H5Fcreate/H5Fopen, by file id.
OTF2_IoHandleRef hdf5_handle_new(hid_t file, const char* path);
OTF2_IoHandleRef hdf5_handle_of_file(hid_t file);
void hdf5_handle_forget(hid_t file);
// The module's own string refs (paths, attribute values), one per distinct text.
OTF2_StringRef hdf5_string(const char* text);
// `loc`'s path joined with `name` (absolute names alone), `.` and empty parts dropped.
OTF2_StringRef hdf5_path_of(hid_t loc, const char* name, const char* attribute);
// `path` (room for base + name + attribute + 4) = `base`/`name`[@`attribute`], normalized.
void hdf5_join_path(char* path, const char* base, const char* name, const char* attribute);
// A dataset creation plist's layout, and for chunks their size in bytes (type may be -1: 0).
int hdf5_layout_of(hid_t dcpl, hid_t type, uint64_t* chunk_bytes);
// Whether this rank defined more refs than its range holds (the rest are undefined).
int hdf5_refs_exhausted(void);
// Serialized definitions: "H ref path\0" (handle and file), "S ref text\0" and
// "O ref file name\0" (an object's handle: its file's handle and its path's string) records.
char* hdf5_definitions_serialize(int* size);

// H5F_ACC_* values: HDF5's macros call H5open(), which the module must not link.
#define HDF5_ACC_RDWR 0x0001u
#define HDF5_ACC_EXCL 0x0004u

// ---- Recording (ezt_hdf5_record.c) ----
struct hdf5_call {
  int region;  // -1: not recorded (EZTrace not running, or nested in another HDF5 call)
  OTF2_IoHandleRef handle;
  uint64_t matching_id;
  uint64_t bytes;
  int entered;  // the ENTER is written: the LEAVE is owed
};
// What the ENTER of a create or open (or the first IoOperationBegin of an object's handle) says
// about the object, as OTF2 attributes.
struct hdf5_describe {
  OTF2_StringRef object;  // OTF2_UNDEFINED_STRING: none
  int layout;             // HDF5_LAYOUT_NONE: none
  uint64_t chunk_bytes;   // 0: none
  int xfer;               // -1: none, 0 independent, 1 collective
};
#define HDF5_DESCRIBE_NONE \
  { OTF2_UNDEFINED_STRING, HDF5_LAYOUT_NONE, 0, -1 }

// Whether a call made now would be recorded (outermost, EZTrace running): what to describe.
int hdf5_will_record(void);
// ENTER; returns whether the call is recorded. `describe` may be NULL.
int hdf5_enter(struct hdf5_call* call, int* region_cache, const char* name,
               const struct hdf5_describe* describe);
// LEAVE, with attributes when `describe` is not NULL.
void hdf5_leave(struct hdf5_call* call, const struct hdf5_describe* describe);
// A call that is one I/O operation: hdf5_enter_io says whether it is recorded (and writes
// nothing), hdf5_io_begin then writes its ENTER and IoOperationBegin on `handle` (attributes
// when `describe` is not NULL), hdf5_io_end its IoOperationComplete and LEAVE.
int hdf5_enter_io(struct hdf5_call* call, int* region_cache, const char* name);
void hdf5_io_begin(struct hdf5_call* call, OTF2_IoHandleRef handle, OTF2_IoOperationMode mode,
                   OTF2_IoOperationFlag flags, uint64_t bytes,
                   const struct hdf5_describe* describe);
// The IoOperationBegin of a dataset's or attribute's transfer: on the object's handle, its
// layout said once; on the file's handle with the object, layout and transfer mode as
// attributes when the object has no handle of its own.
void hdf5_transfer_begin(struct hdf5_call* call, const struct hdf5_object* object,
                         OTF2_IoOperationMode mode, int collective, uint64_t bytes);
void hdf5_io_end(struct hdf5_call* call, int succeeded);
void hdf5_handle_created(struct hdf5_call* call, OTF2_IoHandleRef handle, unsigned flags,
                         int created);
void hdf5_handle_destroyed(struct hdf5_call* call, OTF2_IoHandleRef handle);

// ---- Refs (out of EZTrace's ranges, which start at 0 and collide across ranks) ----
// The IoParadigm every handle of this module belongs to (posixio: 0 and 1, mpiio: 2).
#define HDF5_PARADIGM ((OTF2_IoParadigmRef)3)
// Handles, files and strings of rank r: HDF5_REF_BASE + r * HDF5_REFS_PER_RANK + n.
#define HDF5_REF_BASE 0x50000000u
#define HDF5_REFS_PER_RANK (1u << 20)
// Fixed strings and attribute definitions, the same on every rank, just below.
#define HDF5_FIXED_BASE (HDF5_REF_BASE - 64u)
enum hdf5_fixed_string {
  HDF5_STR_PARADIGM_ID,
  HDF5_STR_PARADIGM_NAME,
  HDF5_STR_CONTIGUOUS,
  HDF5_STR_CHUNKED,
  HDF5_STR_COMPACT,
  HDF5_STR_VIRTUAL,
  HDF5_STR_INDEPENDENT,
  HDF5_STR_COLLECTIVE,
  HDF5_STR_ATTR_OBJECT,
  HDF5_STR_ATTR_LAYOUT,
  HDF5_STR_ATTR_CHUNK_BYTES,
  HDF5_STR_ATTR_XFER,
  HDF5_STR_ATTR_OBJECT_DESC,
  HDF5_STR_ATTR_LAYOUT_DESC,
  HDF5_STR_ATTR_CHUNK_BYTES_DESC,
  HDF5_STR_ATTR_XFER_DESC,
  HDF5_STR_COUNT
};
#define HDF5_FIXED_STRING(k) ((OTF2_StringRef)(HDF5_FIXED_BASE + (k)))
enum hdf5_attribute { HDF5_ATTR_OBJECT, HDF5_ATTR_LAYOUT, HDF5_ATTR_CHUNK_BYTES, HDF5_ATTR_XFER };
#define HDF5_ATTRIBUTE(k) ((OTF2_AttributeRef)(HDF5_FIXED_BASE + 32u + (k)))
// This process's MPI rank (0 without MPI), for its refs.
uint32_t hdf5_rank(void);

#endif
