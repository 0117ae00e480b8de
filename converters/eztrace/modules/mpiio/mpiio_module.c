// SPDX-License-Identifier: GPL-2.0-only
// Registration with EZTrace and the definitions written at the end of the run.
#include <eztrace-lib/eztrace.h>
#include <eztrace-lib/eztrace_module.h>

#include "mpiio.h"

#define CURRENT_MODULE mpiio
DECLARE_CURRENT_MODULE;

// The module wraps MPI_File_* by defining them (PMPI), not by EZTrace's symbol hijacking: the
// list EZTrace expects is empty.
PPTRACE_START_INTERCEPT_FUNCTIONS(mpiio)
PPTRACE_END_INTERCEPT_FUNCTIONS(mpiio)

static void define_handles(OTF2_GlobalDefWriter* w, const char* records, int size) {
  for (int at = 0; at < size;) {
    const char* rec = records + at;
    at += (int)strlen(rec) + 1;
    char* path = NULL;
    unsigned long ref = strtoul(rec, &path, 10);
    if (!path || *path != ' ') continue;
    path++;
    // EZTrace no longer writes the strings it registers once its finalization started: the
    // module writes its own, numbered like its handles (out of EZTrace's range).
    OTF2_StringRef name = (OTF2_StringRef)ref;
    OTF2_GlobalDefWriter_WriteString(w, name, path);
    // One IoFile per handle, with the handle's ref: the merge joins files by path.
    OTF2_GlobalDefWriter_WriteIoRegularFile(w, (OTF2_IoFileRef)ref, name, 0);
    OTF2_GlobalDefWriter_WriteIoHandle(w, (OTF2_IoHandleRef)ref, name, (OTF2_IoFileRef)ref,
                                       MPIIO_PARADIGM, OTF2_IO_HANDLE_FLAG_NONE,
                                       OTF2_UNDEFINED_COMM, OTF2_UNDEFINED_IO_HANDLE);
  }
}

static void define_paradigm(OTF2_GlobalDefWriter* w) {
  OTF2_StringRef ident = MPIIO_STRING_BASE, name = MPIIO_STRING_BASE + 1;
  OTF2_GlobalDefWriter_WriteString(w, ident, "MPI-IO");
  OTF2_GlobalDefWriter_WriteString(w, name, "MPI I/O");
  OTF2_GlobalDefWriter_WriteIoParadigm(w, MPIIO_PARADIGM, ident, name,
                                       OTF2_IO_PARADIGM_CLASS_PARALLEL, OTF2_IO_PARADIGM_FLAG_NONE,
                                       0, NULL, NULL, NULL);
}

// EZTrace writes global definitions on rank 0 only: every rank sends its handles there. Runs in
// EZTrace's finalization (inside its MPI_Finalize wrapper, where MPI still works), on every rank.
static void write_definitions(void* unused) {
  (void)unused;
  int size = 0, rank = 0, ranks = 1, initialized = 0, finalized = 0;
  char* mine = mpiio_handles_serialize(&size);
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  char* all = mine;
  int total = size;
  int* sizes = NULL;
  int* displs = NULL;
  if (initialized && !finalized) {
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (rank == 0) {
      sizes = calloc((size_t)ranks, sizeof *sizes);
      displs = calloc((size_t)ranks, sizeof *displs);
    }
    PMPI_Gather(&size, 1, MPI_INT, sizes, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      total = 0;
      for (int r = 0; r < ranks; r++) displs[r] = total, total += sizes[r];
      all = malloc((size_t)total + 1);
    }
    PMPI_Gatherv(mine, size, MPI_CHAR, all, sizes, displs, MPI_CHAR, 0, MPI_COMM_WORLD);
  }
  if (rank == 0 && _ezt_trace.global_def_writer) {
    set_recursion_shield_on();
    define_paradigm(_ezt_trace.global_def_writer);
    if (all) define_handles(_ezt_trace.global_def_writer, all, total);
    set_recursion_shield_off();
  }
  if (all != mine) free(all);
  free(mine);
  free(sizes);
  free(displs);
}

static void init_mpiio(void) {
  eztrace_atexit(write_definitions, NULL);
  if (eztrace_autostart_enabled()) eztrace_start();
}

static void finalize_mpiio(void) {}

static void _mpiio_init(void) __attribute__((constructor));
static void _mpiio_init(void) {
  EZT_REGISTER_MODULE(mpiio, "MPI-IO: every MPI_File_* call that does I/O or changes a file",
                      init_mpiio, finalize_mpiio);
}
