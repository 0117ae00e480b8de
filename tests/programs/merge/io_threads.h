// SPDX-License-Identifier: GPL-2.0-only
/* What io_threads and its child do, shared by the programs and the tests, which derive every
 * expected count from these numbers. */
#pragma once

/* Exit status of io_threads: eziotrace must pass it on. */
#define IO_THREADS_EXIT_STATUS 3

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

/* The user calls that always reach the kernel, each checked by the merge to contain its system
 * call (docs/merge.md): fopen and fclose twice (stdio thread), the 7 calls of the posix thread, the
 * child's 2 open, CHILD_WRITES write, pwrite, 2 close, pread and read. */
#define DIRECT_CALLS (2 + 2 + 7 + (2 + CHILD_WRITES + 1 + 2 + 1 + 1))
