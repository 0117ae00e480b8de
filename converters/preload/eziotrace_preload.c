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
 *   forked child that does not exec is not traced by EZTrace and writes nothing.
 * - In MPI mode EZTrace's clock is MPI_Wtime()*1e9, not CLOCK_MONOTONIC. MPICH refuses MPI_Wtime
 *   after MPI_Finalize, so the offset between the two clocks is sampled from EZTrace's atexit
 *   list, which it runs inside its MPI_Finalize wrapper while MPI is still up. MPICH's MPI_Wtime
 *   is CLOCK_REALTIME minus a whole number of seconds: with the kernel's exact REALTIME -
 *   MONOTONIC offset (/proc/timer_list, readable by root) the sampled offset is snapped to the
 *   nanosecond; otherwise it is known to half the sampling bracket, which the line says. */
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

/* EZTrace's raw MPI clock minus CLOCK_MONOTONIC, sampled while MPI is up (see above). */
static int clock_sampled;
static int64_t clock_offset;
static uint64_t clock_bracket;

static uint64_t monotonic_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

typedef double (*wtime_fn)(void);

static wtime_fn eztrace_mpi_clock(void) {
  wtime_fn* w = dlsym(RTLD_DEFAULT, "EZT_MPI_Wtime");
  return w ? *w : NULL;
}

static void sample_clock(void* unused) {
  (void)unused;
  wtime_fn w = eztrace_mpi_clock();
  if (!w || getpid() != ctor_pid) return;
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 64; ++i) {
    uint64_t a = monotonic_ns();
    uint64_t raw = w() * 1e9; /* converted exactly as ezt_get_timestamp() does */
    uint64_t b = monotonic_ns();
    if (b - a < best) {
      best = b - a;
      clock_offset = (int64_t)raw - (int64_t)(a + (b - a) / 2);
    }
  }
  clock_bracket = best;
  clock_sampled = 1;
}

/* The kernel's CLOCK_REALTIME - CLOCK_MONOTONIC offset, exactly: hrtimer clock base 1 (REALTIME)
 * in /proc/timer_list. 0 when it cannot be read (not root, other layout). */
static int64_t realtime_offset(void) {
  int fd = open("/proc/timer_list", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  static char buf[8192];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  const char* base = strstr(buf, " clock 1:");
  const char* off = base ? strstr(base, ".offset:") : NULL;
  if (!off) return 0;
  return strtoll(off + 8, NULL, 10);
}

/* MPICH's MPI_Wtime is CLOCK_REALTIME minus whole seconds: when the sampled offset says so, the
 * exact value follows from the kernel's offset. Returns the remaining uncertainty in ns. */
static uint64_t snap_clock_offset(void) {
  uint64_t error = clock_bracket / 2 + 1;
  int64_t real = realtime_offset();
  if (real <= 0) return error;
  int64_t epoch = real - clock_offset; /* MPI_Wtime = REALTIME - epoch */
  int64_t whole = (epoch + 500000000) / 1000000000 * 1000000000;
  int64_t miss = epoch - whole;
  if (miss < 0) miss = -miss;
  if ((uint64_t)miss > error + 1000) return error; /* not whole seconds: keep the sample */
  clock_offset = real - whole;
  return 1; /* EZTrace truncates MPI_Wtime()*1e9 to an integer */
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

#define PUT_LITERAL(o, s) put((o), (s), sizeof(s) - 1)

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
  /* EZTrace's atexit list is a zero-initialised global: registering before its constructor is
   * safe, and the callback runs during its finalization (in MPI mode before PMPI_Finalize). */
  void (*at_exit)(void (*)(void*), void*) =
      (void (*)(void (*)(void*), void*))dlsym(RTLD_DEFAULT, "eztrace_atexit");
  if (at_exit) at_exit(sample_clock, NULL);
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
  int mpi_clock = clock_sampled || eztrace_mpi_clock();
  uint64_t clock_error = clock_sampled ? snap_clock_offset() : 0;

  struct out o = {0};
  putf(&o, "{\"version\":1,\"pid\":%llu", (unsigned long long)getpid());
  putf(&o, ",\"ppid\":%llu", (unsigned long long)getppid());
  put(&o, ",\"program\":", 11);
  put_json_string(&o, program_invocation_short_name);
  put(&o, ",\"cwd\":", 7);
  put_json_string(&o, cwd);
  put(&o, ",\"trace_dir_env\":", 17);
  put_json_string(&o, getenv("EZTRACE_TRACE_DIR"));
  PUT_LITERAL(&o, ",\"sidecar_dir\":");
  put_json_string(&o, dir);
  putf(&o, ",\"first_timestamp\":%llu", (unsigned long long)*first);
  putf(&o, ",\"ctor_ns\":%llu", (unsigned long long)ctor_ns);
  put(&o, ctor_before_eztrace ? ",\"ctor_before_eztrace\":true" : ",\"ctor_before_eztrace\":false",
      ctor_before_eztrace ? 27 : 28);
  putf(&o, ",\"exit_ns\":%llu", (unsigned long long)exit_ns);
  if (mpi_clock) {
    /* Without a sample the merge cannot place this process and says so. */
    PUT_LITERAL(&o, ",\"clock\":\"MPI_Wtime\"");
    if (clock_sampled) {
      char tmp[64];
      int n = snprintf(tmp, sizeof tmp, ",\"clock_offset_ns\":%lld", (long long)clock_offset);
      if (n > 0) put(&o, tmp, (size_t)n);
      putf(&o, ",\"clock_offset_error_ns\":%llu", (unsigned long long)clock_error);
    }
  } else {
    PUT_LITERAL(&o, ",\"clock\":\"CLOCK_MONOTONIC\"");
  }
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
