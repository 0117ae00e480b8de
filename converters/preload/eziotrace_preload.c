/* LD_PRELOADed next to EZTrace (after its libraries) in every traced process.
 *
 * It writes one sidecar line per process, at exit, into $EZIOTRACE_SIDECAR_DIR/<pid>.json:
 * the process's EZTrace `first_timestamp` (EZTrace time = CLOCK_MONOTONIC - first_timestamp) and
 * its thread table (TID -> EZTrace thread rank and OTF2 location). That is what the merge needs to
 * put EZTrace's events on the kernel's clock and threads exactly.
 *
 * Why this way:
 * - Nothing is written while the application runs: the values are read once at exit, from
 *   EZTrace's own exported state (first_timestamp, ezt_get_nb_threads, get_thread_info), looked up
 *   with dlsym so the helper neither links against EZTrace nor breaks a process EZTrace skipped.
 *   The one file it writes (open/write/close) lies under the sidecar directory, which the merge
 *   filters out of the kernel side.
 * - Placed after EZTrace in LD_PRELOAD, its constructor runs before EZTrace's, so `ctor_ns`
 *   marks the start of EZTrace's start-up work (its `rm -rf`, mkdir, first .def write); the merge
 *   uses that window to filter EZTrace's own I/O. `ctor_before_eztrace` says whether that held.
 * - An exec'd program loads the helper again and writes its own line (own first_timestamp); a
 *   forked child that does not exec is not traced by EZTrace and writes nothing. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Layout of struct ezt_thread_info in eztrace-lib/eztrace.h (EZTrace 2.0). */
struct ezt_thread_info {
  int thread_rank;
  pid_t tid;
  char thread_name[50];
  int otf2_thread_id;
};

static pid_t ctor_pid;
static uint64_t ctor_ns;
static int ctor_before_eztrace;
static char cwd[4096];

static uint64_t monotonic_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* A bounded output buffer; the whole line is built in memory and written with one write(). */
struct out {
  char* buf;
  size_t len, cap;
};

static void put(struct out* o, const char* s, size_t n) {
  if (o->len + n >= o->cap) {
    size_t cap = (o->cap + n) * 2;
    char* b = realloc(o->buf, cap);
    if (!b) return;
    o->buf = b;
    o->cap = cap;
  }
  memcpy(o->buf + o->len, s, n);
  o->len += n;
}

static void putf(struct out* o, const char* fmt, unsigned long long v) {
  char tmp[64];
  int n = snprintf(tmp, sizeof tmp, fmt, v);
  if (n > 0) put(o, tmp, (size_t)n);
}

static void put_json_string(struct out* o, const char* s) {
  put(o, "\"", 1);
  for (; s && *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      char e[2] = {'\\', (char)c};
      put(o, e, 2);
    } else if (c < 0x20) {
      putf(o, "\\u%04llx", c);
    } else {
      put(o, (const char*)&c, 1);
    }
  }
  put(o, "\"", 1);
}

__attribute__((constructor)) static void eziotrace_preload_init(void) {
  ctor_pid = getpid();
  ctor_ns = monotonic_ns();
  const uint64_t* first = dlsym(RTLD_DEFAULT, "first_timestamp");
  ctor_before_eztrace = first && *first == 0;
  /* EZTrace puts <prog>_trace in EZTRACE_TRACE_DIR or the working directory at start. */
  if (!getcwd(cwd, sizeof cwd)) cwd[0] = 0;
}

__attribute__((destructor)) static void eziotrace_preload_fini(void) {
  const char* dir = getenv("EZIOTRACE_SIDECAR_DIR");
  if (!dir || getpid() != ctor_pid) return; /* not asked for, or a forked child EZTrace ignores */
  const uint64_t* first = dlsym(RTLD_DEFAULT, "first_timestamp");
  int (*nb_threads)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "ezt_get_nb_threads");
  struct ezt_thread_info* (*thread_info)(int) =
      (struct ezt_thread_info * (*)(int)) dlsym(RTLD_DEFAULT, "get_thread_info");
  if (!first || !nb_threads || !thread_info) return; /* EZTrace is not loaded in this process */
  uint64_t exit_ns = monotonic_ns();

  struct out o = {0};
  putf(&o, "{\"version\":1,\"pid\":%llu", (unsigned long long)getpid());
  putf(&o, ",\"ppid\":%llu", (unsigned long long)getppid());
  put(&o, ",\"program\":", 11);
  put_json_string(&o, program_invocation_short_name);
  put(&o, ",\"cwd\":", 7);
  put_json_string(&o, cwd);
  put(&o, ",\"trace_dir_env\":", 17);
  put_json_string(&o, getenv("EZTRACE_TRACE_DIR"));
  putf(&o, ",\"first_timestamp\":%llu", (unsigned long long)*first);
  putf(&o, ",\"ctor_ns\":%llu", (unsigned long long)ctor_ns);
  put(&o, ctor_before_eztrace ? ",\"ctor_before_eztrace\":true" : ",\"ctor_before_eztrace\":false",
      ctor_before_eztrace ? 27 : 28);
  putf(&o, ",\"exit_ns\":%llu", (unsigned long long)exit_ns);
  put(&o, ",\"threads\":[", 12);
  int n = nb_threads();
  int written = 0;
  for (int i = 0; i < n; ++i) {
    struct ezt_thread_info* t = thread_info(i);
    if (!t) continue;
    if (written++) put(&o, ",", 1);
    putf(&o, "{\"tid\":%llu", (unsigned long long)t->tid);
    putf(&o, ",\"rank\":%llu", (unsigned long long)t->thread_rank);
    putf(&o, ",\"location\":%llu", (unsigned long long)t->otf2_thread_id);
    put(&o, ",\"name\":", 8);
    char name[sizeof t->thread_name + 1];
    memcpy(name, t->thread_name, sizeof t->thread_name);
    name[sizeof t->thread_name] = 0;
    put_json_string(&o, name);
    put(&o, "}", 1);
  }
  put(&o, "]}\n", 3);

  char path[4096];
  snprintf(path, sizeof path, "%s/%d.json", dir, (int)getpid());
  int saved_errno = errno;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0 && o.buf) {
    ssize_t r = write(fd, o.buf, o.len);
    (void)r; /* a short sidecar is reported by the merge, which cannot find the process */
  }
  if (fd >= 0) close(fd);
  errno = saved_errno;
  free(o.buf);
}
