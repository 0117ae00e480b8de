// SPDX-License-Identifier: GPL-2.0-only
// Registration with EZTrace, the definitions written at the end of the run, and the note that
// tells eziotrace this process used HDF5.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <eztrace-lib/eztrace.h>
#include <eztrace-lib/eztrace_module.h>
#include <fcntl.h>

#include "ezt_hdf5.h"

#define CURRENT_MODULE hdf5
DECLARE_CURRENT_MODULE;

// The module wraps HDF5 by defining its functions, not by EZTrace's symbol hijacking: the list
// EZTrace expects is empty.
PPTRACE_START_INTERCEPT_FUNCTIONS(hdf5)
PPTRACE_END_INTERCEPT_FUNCTIONS(hdf5)

static const char* const fixed_strings[HDF5_STR_COUNT] = {
    [HDF5_STR_PARADIGM_ID] = "HDF5",
    [HDF5_STR_PARADIGM_NAME] = "HDF5",
    [HDF5_STR_CONTIGUOUS] = "contiguous",
    [HDF5_STR_CHUNKED] = "chunked",
    [HDF5_STR_COMPACT] = "compact",
    [HDF5_STR_VIRTUAL] = "virtual",
    [HDF5_STR_INDEPENDENT] = "independent",
    [HDF5_STR_COLLECTIVE] = "collective",
    [HDF5_STR_ATTR_OBJECT] = "hdf5.object",
    [HDF5_STR_ATTR_LAYOUT] = "hdf5.layout",
    [HDF5_STR_ATTR_CHUNK_BYTES] = "hdf5.chunk_bytes",
    [HDF5_STR_ATTR_XFER] = "hdf5.xfer",
    [HDF5_STR_ATTR_OBJECT_DESC] = "the object's path in the file (attributes: path@name)",
    [HDF5_STR_ATTR_LAYOUT_DESC] = "the dataset's storage layout",
    [HDF5_STR_ATTR_CHUNK_BYTES_DESC] = "a chunk's size in bytes (chunked datasets)",
    [HDF5_STR_ATTR_XFER_DESC] = "the transfer mode the transfer property list asks for",
};

static void define_fixed(OTF2_GlobalDefWriter* w, int parallel) {
  for (int k = 0; k < HDF5_STR_COUNT; k++)
    OTF2_GlobalDefWriter_WriteString(w, HDF5_FIXED_STRING(k), fixed_strings[k]);
  static const struct {
    enum hdf5_attribute attribute;
    enum hdf5_fixed_string name, description;
    OTF2_Type type;
  } attributes[] = {
      {HDF5_ATTR_OBJECT, HDF5_STR_ATTR_OBJECT, HDF5_STR_ATTR_OBJECT_DESC, OTF2_TYPE_STRING},
      {HDF5_ATTR_LAYOUT, HDF5_STR_ATTR_LAYOUT, HDF5_STR_ATTR_LAYOUT_DESC, OTF2_TYPE_STRING},
      {HDF5_ATTR_CHUNK_BYTES, HDF5_STR_ATTR_CHUNK_BYTES, HDF5_STR_ATTR_CHUNK_BYTES_DESC,
       OTF2_TYPE_UINT64},
      {HDF5_ATTR_XFER, HDF5_STR_ATTR_XFER, HDF5_STR_ATTR_XFER_DESC, OTF2_TYPE_STRING},
  };
  for (size_t i = 0; i < sizeof attributes / sizeof *attributes; i++)
    OTF2_GlobalDefWriter_WriteAttribute(
        w, HDF5_ATTRIBUTE(attributes[i].attribute), HDF5_FIXED_STRING(attributes[i].name),
        HDF5_FIXED_STRING(attributes[i].description), attributes[i].type);
  OTF2_GlobalDefWriter_WriteIoParadigm(
      w, HDF5_PARADIGM, HDF5_FIXED_STRING(HDF5_STR_PARADIGM_ID),
      HDF5_FIXED_STRING(HDF5_STR_PARADIGM_NAME),
      parallel ? OTF2_IO_PARADIGM_CLASS_PARALLEL : OTF2_IO_PARADIGM_CLASS_SERIAL,
      OTF2_IO_PARADIGM_FLAG_NONE, 0, NULL, NULL, NULL);
}

// An object's handle: named by its path, on its file's IoFile, child of its file's handle (whose
// refs are the same).
static void define_object(OTF2_GlobalDefWriter* w, OTF2_IoHandleRef ref, const char* text) {
  unsigned file = 0, name = 0;
  if (sscanf(text, "%u %u", &file, &name) != 2) return;
  OTF2_GlobalDefWriter_WriteIoHandle(w, ref, (OTF2_StringRef)name, (OTF2_IoFileRef)file,
                                     HDF5_PARADIGM, OTF2_IO_HANDLE_FLAG_NONE, OTF2_UNDEFINED_COMM,
                                     (OTF2_IoHandleRef)file);
}

// "H ref path", "S ref text" and "O ref file name" records (hdf5_definitions_serialize) of one
// rank.
static void define_records(OTF2_GlobalDefWriter* w, const char* records, int size) {
  for (int at = 0; at < size;) {
    const char* rec = records + at;
    at += (int)strlen(rec) + 1;
    char kind = rec[0];
    char* text = NULL;
    unsigned long ref = strtoul(rec + 1, &text, 10);
    if (!text || *text != ' ') continue;
    text++;
    if (kind == 'O') {
      define_object(w, (OTF2_IoHandleRef)ref, text);
      continue;
    }
    OTF2_GlobalDefWriter_WriteString(w, (OTF2_StringRef)ref, text);
    if (kind != 'H') continue;
    // One IoFile per handle, with the handle's ref: the merge joins files by path.
    OTF2_GlobalDefWriter_WriteIoRegularFile(w, (OTF2_IoFileRef)ref, (OTF2_StringRef)ref, 0);
    OTF2_GlobalDefWriter_WriteIoHandle(w, (OTF2_IoHandleRef)ref, (OTF2_StringRef)ref,
                                       (OTF2_IoFileRef)ref, HDF5_PARADIGM, OTF2_IO_HANDLE_FLAG_NONE,
                                       OTF2_UNDEFINED_COMM, OTF2_UNDEFINED_IO_HANDLE);
  }
}

enum { kTagSize = 0x4844, kTagRecords = 0x4845 };

// Whether this process is an MPI process between MPI_Init and MPI_Finalize. EZTrace's MPI
// mode alone does not say so: its MPI module is also loaded into processes that never call
// MPI_Init (a launcher started by a script, a rank's child), where an EZT_MPI_* call aborts the
// process. The two queries have the same C signature in every MPI's ABI: no MPI linked here.
static int mpi_is_up(void) {
  int (*initialized)(int*) = (int (*)(int*))dlsym(RTLD_DEFAULT, "PMPI_Initialized");
  int (*finalized)(int*) = (int (*)(int*))dlsym(RTLD_DEFAULT, "PMPI_Finalized");
  int up = 0, down = 0;
  if (!initialized || !finalized || initialized(&up) != 0 || finalized(&down) != 0) return 0;
  return up && !down;
}

// EZTrace writes global definitions on rank 0 only: the other ranks send theirs there through
// EZTrace's own MPI calls (EZT_MPI_*, set by its mpich or openmpi module, whichever MPI it is).
static void gather_and_define(OTF2_GlobalDefWriter* w, const char* mine, int size) {
  int mpi = ezt_is_mpi_mode() && EZT_MPI_Send && EZT_MPI_Recv && EZT_MPI_Reduce && mpi_is_up();
  int rank = (int)hdf5_rank(), one = 1, ranks = 1;
  if (mpi) EZT_MPI_Reduce(&one, &ranks, 1, EZT_MPI_INT, EZT_MPI_SUM, 0);
  if (mpi && rank != 0) {
    EZT_MPI_Send(&size, sizeof size, 0, kTagSize);
    EZT_MPI_Send((void*)mine, (size_t)size, 0, kTagRecords);
    return;
  }
  if (rank != 0) return;
  set_recursion_shield_on();
  if (w) define_fixed(w, mpi);
  if (w && mine) define_records(w, mine, size);
  for (int r = 1; mpi && r < ranks; r++) {
    int n = 0;
    EZT_MPI_Recv(&n, sizeof n, r, kTagSize);
    char* theirs = malloc(n > 0 ? (size_t)n : 1);
    EZT_MPI_Recv(theirs, (size_t)n, r, kTagRecords);
    if (w && theirs) define_records(w, theirs, n);
    free(theirs);
  }
  set_recursion_shield_off();
}

// For eziotrace: a file in its alignment directory (its own, filtered from the kernel's view)
// says that this process loaded libhdf5; none from any process means the program does not use
// HDF5. Plain EZTrace users are told directly.
static void note_use(void) {
  const char* dir = getenv("EZIOTRACE_SIDECAR_DIR");
  int used = hdf5_library_loaded();
  if (!dir || !*dir) {
    if (!used)
      fprintf(stderr,
              "EZTrace hdf5 module: this program does not use libhdf5 (HDF5): no HDF5 call "
              "recorded\n");
    return;
  }
  if (!used) return;
  char path[4096];
  snprintf(path, sizeof path, "%s/%d.hdf5-used", dir, (int)getpid());
  int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  if (fd >= 0) close(fd);
}

// Runs in EZTrace's finalization, on every rank (inside its MPI_Finalize wrapper in MPI mode).
static void write_definitions(void* unused) {
  (void)unused;
  int size = 0;
  char* mine = hdf5_definitions_serialize(&size);
  gather_and_define(_ezt_trace.global_def_writer, mine, size);
  free(mine);
  if (hdf5_refs_exhausted())
    fprintf(stderr,
            "EZTrace hdf5 module: rank %u opened more files and objects than its %u refs: the "
            "rest are recorded without a handle or path\n",
            hdf5_rank(), HDF5_REFS_PER_RANK);
  note_use();
}

static void init_hdf5(void) {
  eztrace_atexit(write_definitions, NULL);
  if (eztrace_autostart_enabled()) eztrace_start();
}

static void finalize_hdf5(void) {}

static void _hdf5_init(void) __attribute__((constructor));
static void _hdf5_init(void) {
  EZT_REGISTER_MODULE(hdf5, "HDF5: file, group, dataset and attribute calls", init_hdf5,
                      finalize_hdf5);
}
