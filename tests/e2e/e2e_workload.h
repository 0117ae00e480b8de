/* What tests/e2e's programs do, shared by e2e_app.c, e2e_child.c and the test, which derives every
 * expected count from these numbers. */
#pragma once

/* Exit status of e2e_app: eziotrace must pass it on. */
#define E2E_EXIT_STATUS 3

/* stdio thread: fopen "w" with a full buffer of STDIO_BUF bytes (setvbuf), N_FWRITE x fwrite of
 * FWRITE_BYTES, fclose; fopen "r" with the same buffer size, N_FREAD x fread of FREAD_BYTES,
 * fclose. FWRITE_BYTES and FREAD_BYTES are below STDIO_BUF and not divisors of it. */
#define STDIO_BUF 4096
#define N_FWRITE 10
#define FWRITE_BYTES 1000
#define N_FREAD 5
#define FREAD_BYTES 1000

/* posix thread: open, write POSIX_BYTES, pwrite POSIX_BYTES at POSIX_BYTES, fsync, pread
 * POSIX_BYTES at 0, lseek 0, read POSIX_BYTES, close. */
#define POSIX_BYTES 4096

/* child (exec'd by the spawner thread's fork): open, CHILD_WRITES x write CHILD_BYTES,
 * pwrite CHILD_BYTES at CHILD_WRITES * CHILD_BYTES, close; open, pread CHILD_TOTAL at 0,
 * read CHILD_TOTAL, close. */
#define CHILD_WRITES 3
#define CHILD_BYTES 1000
#define CHILD_TOTAL ((CHILD_WRITES + 1) * CHILD_BYTES)
