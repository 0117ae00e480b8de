// SPDX-License-Identifier: GPL-2.0-only
/* A library whose constructor ends the process with status $GATE_PROBE_EXIT when it is set: the
 * program linked with it (gate_probe_lib) then never reaches eziotrace's start gate
 * (tests/e2e/merge/start_gate_test.cpp). */
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void maybe_exit(void) {
  const char* status = getenv("GATE_PROBE_EXIT");
  if (status) _exit(atoi(status));
}
