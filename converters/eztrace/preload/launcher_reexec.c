// SPDX-License-Identifier: GPL-2.0-only
/* Part of the preload helper (eziotrace_preload.c): an MPI launcher that got EZTrace preloaded
 * (started by a script or `sh -c`, where eziotrace cannot rewrite its command line) re-executes
 * itself with EZTrace's preload handed to its ranks only, as eziotrace does for a launcher it
 * starts itself (converters/eztrace/mpi_launcher.cpp).
 *
 * Why: EZTrace in the launcher ends badly either way. Open MPI's orterun never calls MPI_Init
 * and EZTrace's finalization aborts it at exit; and EZTrace 2.0's posixio wrappers are not
 * async-signal-safe: orterun's libevent writes to its signal pipe from its SIGCHLD handler when
 * the ranks exit; when that signal lands while orterun's thread is inside a posixio wrapper
 * holding EZTrace's file-table lock (a close), the handler's write() waits on that lock forever:
 * orterun hangs after its ranks ended (docs/mpiio.md, "Open MPI").
 *
 * Runs as a constructor before EZTrace's (the helper comes after EZTrace in LD_PRELOAD) and the
 * helper's other one (priority 101), so EZTrace never starts in the launcher. A launcher eziotrace
 * started itself (it holds the start gate) is left alone: eziotrace already rewrote its command. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char** environ;

/* The option that passes a variable to the ranks, by the launcher's real name (its path in exe);
 * NULL for any other program. */
static const char* rank_env_option(char* exe, size_t size) {
  ssize_t n = readlink("/proc/self/exe", exe, size - 1);
  if (n <= 0) return NULL;
  exe[n] = 0;
  const char* name = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
  if (strcmp(name, "orterun") == 0 || strcmp(name, "prterun") == 0) return "-x";
  if (strncmp(name, "mpiexec.hydra", 13) == 0) return "-genv";
  return NULL;
}

static int is_tool_variable(const char* e) {
  return strncmp(e, "EZTRACE_", 8) == 0 || strncmp(e, "EZIOTRACE_", 10) == 0;
}

__attribute__((constructor(101))) static void launcher_reexec(int argc, char** argv) {
  /* The real path, not /proc/self/exe: the process keeps its name (comm) for the recording. */
  static char exe[PATH_MAX];
  const char* option = rank_env_option(exe, sizeof exe);
  const char* preload = getenv("LD_PRELOAD");
  if (!option || !preload || !strstr(preload, "eztrace") || getenv("EZIOTRACE_GATE") || argc < 1)
    return;
  int vars = 0;
  for (char** e = environ; *e; e++) vars += is_tool_variable(*e);
  char** args = calloc((size_t)(argc + 2 * vars + 4), sizeof *args);
  char* preload_copy = strdup(preload);
  char* preload_var = malloc(strlen(preload) + sizeof "LD_PRELOAD=");
  if (!args || !preload_copy || !preload_var) return;
  strcpy(preload_var, "LD_PRELOAD=");
  strcat(preload_var, preload);
  int k = 0;
  args[k++] = argv[0];
  args[k++] = (char*)option;
  if (strcmp(option, "-x") == 0) {
    /* Open MPI: `-x NAME=VALUE`, and `-x NAME` for the value the launcher has. */
    args[k++] = preload_var;
    for (char** e = environ; *e; e++) {
      if (!is_tool_variable(*e)) continue;
      args[k++] = (char*)"-x";
      args[k++] = strndup(*e, (size_t)(strchr(*e, '=') - *e));
    }
  } else {
    /* MPICH's hydra passes its whole environment to the ranks: LD_PRELOAD alone. */
    args[k++] = (char*)"LD_PRELOAD";
    args[k++] = preload_copy;
  }
  for (int i = 1; i < argc; i++) args[k++] = argv[i];
  args[k] = NULL;
  unsetenv("LD_PRELOAD");
  execv(exe, args);
  setenv("LD_PRELOAD", preload_copy, 1); /* not re-executed: traced as it was */
}
