// SPDX-License-Identifier: GPL-2.0-only
/* LD_PRELOADed next to EZTrace (after its libraries) in every traced process.
 *
 * It writes one record per process image into $EZIOTRACE_SIDECAR_DIR/<pid>.<ctor_ns>.json: the
 * image's EZTrace `first_timestamp` (EZTrace time = CLOCK_MONOTONIC - first_timestamp), the
 * boundaries of EZTrace's own work, and at exit its thread table (TID -> EZTrace thread rank and
 * OTF2 location). That is what the merge needs to put EZTrace's events on the kernel's clock and
 * threads exactly, and to drop EZTrace's own work from the kernel side.
 *
 * Why this way:
 * - Placed after EZTrace in LD_PRELOAD, its constructor runs before EZTrace's, so `ctor_ns`
 *   marks the start of EZTrace's start-up work (its `rm -rf` child, mkdir, /proc/self/cmdline);
 *   `ctor_before_eztrace` says whether that held. It wraps __libc_start_main: `main_ns` marks the
 *   end of that work (every library constructor has run), and the record is written there once,
 *   so that an image that never exits normally (exec, _exit) still says where EZTrace's start-up
 *   was. EZTrace's atexit list gives `finalize_ns`, the start of its finalization.
 * - At exit the record is rewritten with the values read from EZTrace's own exported state
 *   (first_timestamp, ezt_get_nb_threads, get_thread_info), looked up with dlsym so the helper
 *   neither links against EZTrace nor breaks a process EZTrace skipped. Its files lie under the
 *   sidecar directory, which the merge filters out of the kernel side.
 * - With EZIOTRACE_TRACE_BASE set, each image gets its own EZTRACE_TRACE_DIR below it (EZTrace
 *   names its trace after the program only: two processes of one program would overwrite it).
 * - An exec'd program loads the helper again and writes its own record; a forked child that does
 *   not exec is not traced by EZTrace and writes nothing.
 * - With EZIOTRACE_GATE=<read fd>,<write fd>,<recorder pid> (set by the recorder for the process
 *   it starts, recorder/session/launcher.h), the program's own code waits at __libc_start_main
 *   until the recorder says the kernel side filters on this process: the recorder loads its BPF
 *   programs while the loader and EZTrace start up, instead of before. The helper says on the write
 *   fd that it reached the gate, and when (so the recorder knows the program did not run ungated,
 *   and which side waited), then
 *   waits for a byte on the read fd; EOF there means the recorder went away: the program never
 *   starts. The variable is removed in the constructor and both fds are close-on-exec from then
 *   on: EZTrace's `rm -rf` child and every later image start ungated, as they should (they are
 *   filtered, or started after the gate opened).
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
#include <sys/syscall.h>
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
static uint64_t main_ns;     /* the program's start routine: EZTrace's start-up is over */
static uint64_t finalize_ns; /* EZTrace's finalization started (its atexit list) */
static int ctor_before_eztrace;
static char cwd[4096];
/* Read once in the constructor, from libc's own environment: a program may define getenv and
 * setenv itself (bash does, and answers from its own variables, built from main's envp). */
static char sidecar_dir[4096];
static char trace_dir_env[4096];
/* The start gate's pipe ends (EZIOTRACE_GATE), -1 when this image has none. */
static int gate_fd = -1;
static int gate_report_fd = -1;

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

/* This process image's record: <dir>/<pid>.<ctor_ns>.json. A program that execs keeps its pid, so
 * the name carries the constructor's time too: each image has a file of its own. */
static int record_path(char* path, size_t size, const char* dir) {
  int n = snprintf(path, size, "%s/%d.%llu.json", dir, (int)ctor_pid, (unsigned long long)ctor_ns);
  return n > 0 && (size_t)n < size;
}

/* The fields every record has: who this image is and where EZTrace started. */
static void put_identity(struct out* o, const char* dir, const uint64_t* first) {
  putf(o, "{\"version\":2,\"pid\":%llu", (unsigned long long)getpid());
  putf(o, ",\"ppid\":%llu", (unsigned long long)getppid());
  put(o, ",\"program\":", 11);
  put_json_string(o, program_invocation_short_name);
  put(o, ",\"cwd\":", 7);
  put_json_string(o, cwd);
  put(o, ",\"trace_dir_env\":", 17);
  put_json_string(o, trace_dir_env);
  PUT_LITERAL(o, ",\"sidecar_dir\":");
  put_json_string(o, dir);
  putf(o, ",\"first_timestamp\":%llu", (unsigned long long)*first);
  putf(o, ",\"ctor_ns\":%llu", (unsigned long long)ctor_ns);
  if (ctor_before_eztrace) {
    PUT_LITERAL(o, ",\"ctor_before_eztrace\":true");
  } else {
    PUT_LITERAL(o, ",\"ctor_before_eztrace\":false");
  }
  putf(o, ",\"main_ns\":%llu", (unsigned long long)main_ns);
}

/* Writes the record with one write(); errno is left as the application had it. System calls, not
 * libc's functions: EZTrace wraps those once started, and the helper's work must not show up in
 * the application's trace. */
static void write_record(const char* dir, const struct out* o) {
  char path[sizeof sidecar_dir + 64];
  if (!record_path(path, sizeof path, dir)) return;
  int saved_errno = errno;
  long fd = syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0 && o->buf) {
    long r = syscall(SYS_write, fd, o->buf, o->len);
    (void)r; /* a short record is reported by the merge, which cannot parse it */
  }
  if (fd >= 0) syscall(SYS_close, fd);
  errno = saved_errno;
}

/* EZTrace runs its atexit list when its finalization starts: from there on, until its last write
 * into its trace directory, the I/O is its own. */
static void finalization_starts(void* unused) {
  (void)unused;
  if (getpid() == ctor_pid && !finalize_ns) finalize_ns = monotonic_ns();
}

/* One EZTrace trace directory per process image (merged mode, EZIOTRACE_TRACE_BASE set):
 * EZTrace names its trace after the program only, so processes of one program (git's, a script's
 * tools) would overwrite each other's. Set before EZTrace's constructor reads it. */
typedef char* (*getenv_fn)(const char*);
typedef int (*setenv_fn)(const char*, const char*, int);

static void copy_env(getenv_fn get, const char* name, char* to, size_t size) {
  const char* v = get(name);
  if (v && strlen(v) < size) strcpy(to, v);
}

static void own_trace_dir(getenv_fn get) {
  const char* base = get("EZIOTRACE_TRACE_BASE");
  setenv_fn set = (setenv_fn)dlsym(RTLD_NEXT, "setenv");
  if (!base || !*base || !ctor_before_eztrace || !set) return;
  char dir[sizeof trace_dir_env];
  int n = snprintf(dir, sizeof dir, "%s/%d.%llu", base, (int)ctor_pid, (unsigned long long)ctor_ns);
  /* EZTrace creates the directories of its trace path itself. */
  if (n > 0 && (size_t)n < sizeof dir) set("EZTRACE_TRACE_DIR", dir, 1);
}

/* Takes the start gate's fds from EZIOTRACE_GATE and removes the variable, so that no later image
 * (EZTrace's `rm -rf` child, what the program execs) takes fds of the same numbers for a gate. */
typedef int (*unsetenv_fn)(const char*);

static void take_gate(getenv_fn get) {
  const char* v = get("EZIOTRACE_GATE");
  if (!v) return;
  char* end = NULL;
  long r = strtol(v, &end, 10);
  long w = *end == ',' ? strtol(end + 1, &end, 10) : -1;
  long recorder = *end == ',' ? strtol(end + 1, &end, 10) : -1;
  unsetenv_fn unset = (unsetenv_fn)dlsym(RTLD_NEXT, "unsetenv");
  if (unset) unset("EZIOTRACE_GATE");
  /* Only the recorder's own child holds the gate: not a process that another preloaded library's
   * constructor started before this one removed the variable. */
  if (*end || r < 0 || w < 0 || r > 65535 || w > 65535 || recorder != (long)getppid()) return;
  /* Close-on-exec from now on: only this image holds the gate. */
  if (fcntl((int)r, F_SETFD, FD_CLOEXEC) != 0 || fcntl((int)w, F_SETFD, FD_CLOEXEC) != 0) return;
  gate_fd = (int)r;
  gate_report_fd = (int)w;
}

/* The program's own code (its constructors, main) starts only once the recorder filters on this
 * process. Raw system calls: EZTrace's wrappers are active, and this is not the program's I/O. */
static void pass_gate(void) {
  /* 'G' and when (CLOCK_MONOTONIC ns), in one write: the recorder logs which side waited. */
  char reached[1 + sizeof(uint64_t)] = {'G'};
  uint64_t now = monotonic_ns();
  memcpy(reached + 1, &now, sizeof now);
  long n = syscall(SYS_write, gate_report_fd, reached, sizeof reached);
  (void)n; /* a recorder that cannot read it never opens the gate either */
  syscall(SYS_close, gate_report_fd);
  char go = 0;
  do {
    n = syscall(SYS_read, gate_fd, &go, 1);
  } while (n < 0 && errno == EINTR);
  syscall(SYS_close, gate_fd);
  gate_fd = gate_report_fd = -1;
  if (n != 1) syscall(SYS_exit_group, 125); /* the recorder went away before opening the gate */
}

__attribute__((constructor)) static void eziotrace_preload_init(void) {
  ctor_pid = getpid();
  ctor_ns = monotonic_ns();
  const uint64_t* first = dlsym(RTLD_DEFAULT, "first_timestamp");
  ctor_before_eztrace = first && *first == 0;
  /* EZTrace puts <prog>_trace in EZTRACE_TRACE_DIR or the working directory at start. */
  if (!getcwd(cwd, sizeof cwd)) cwd[0] = 0;
  getenv_fn get = (getenv_fn)dlsym(RTLD_NEXT, "getenv");
  if (!get) return;
  take_gate(get);
  if (first) own_trace_dir(get);
  copy_env(get, "EZIOTRACE_SIDECAR_DIR", sidecar_dir, sizeof sidecar_dir);
  copy_env(get, "EZTRACE_TRACE_DIR", trace_dir_env, sizeof trace_dir_env);
  /* EZTrace's atexit list is a zero-initialised global: registering before its constructor is
   * safe, and the callbacks run during its finalization (in MPI mode before PMPI_Finalize). */
  void (*at_exit)(void (*)(void*), void*) =
      (void (*)(void (*)(void*), void*))dlsym(RTLD_DEFAULT, "eztrace_atexit");
  if (at_exit) {
    at_exit(finalization_starts, NULL);
    at_exit(sample_clock, NULL);
  }
}

/* Every shared library's constructor has run (EZTrace's start-up is over) when the program's
 * start routine is called; the program's own code starts here (its constructors run inside it):
 * the start gate is here. The record written now is what the merge has of an image that never
 * exits normally (it execs another program, or ends with _exit as dash does): its start-up window,
 * to drop EZTrace's start-up work from the kernel side. */
typedef int (*main_fn)(int, char**, char**);
typedef int (*start_fn)(main_fn, int, char**, void (*)(void), void (*)(void), void (*)(void),
                        void*);

__attribute__((visibility("default"))) int __libc_start_main(main_fn main, int argc, char** argv,
                                                             void (*init)(void), void (*fini)(void),
                                                             void (*rtld_fini)(void),
                                                             void* stack_end) {
  start_fn real = (start_fn)dlsym(RTLD_NEXT, "__libc_start_main");
  if (!real) abort(); /* cannot happen with glibc: the executable was linked against it */
  /* Before main_ns: the gate's calls fall in EZTrace's start-up window, which the merge drops. */
  if (gate_fd >= 0 && getpid() == ctor_pid) pass_gate();
  const char* dir = sidecar_dir;
  const uint64_t* first = dlsym(RTLD_DEFAULT, "first_timestamp");
  if (*dir && first && getpid() == ctor_pid) {
    main_ns = monotonic_ns();
    struct out o = {0};
    put_identity(&o, dir, first);
    put(&o, "}\n", 2);
    write_record(dir, &o);
    free(o.buf);
  }
  return real(main, argc, argv, init, fini, rtld_fini, stack_end);
}

__attribute__((destructor)) static void eziotrace_preload_fini(void) {
  const char* dir = sidecar_dir;
  if (!*dir || getpid() != ctor_pid) return; /* not asked for, or a forked child EZTrace ignores */
  const uint64_t* first = dlsym(RTLD_DEFAULT, "first_timestamp");
  int (*nb_threads)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "ezt_get_nb_threads");
  struct ezt_thread_info* (*thread_info)(int) =
      (struct ezt_thread_info * (*)(int)) dlsym(RTLD_DEFAULT, "get_thread_info");
  if (!first || !nb_threads || !thread_info) return; /* EZTrace is not loaded in this process */
  uint64_t exit_ns = monotonic_ns();
  int mpi_clock = clock_sampled || eztrace_mpi_clock();
  uint64_t clock_error = clock_sampled ? snap_clock_offset() : 0;

  struct out o = {0};
  put_identity(&o, dir, first);
  putf(&o, ",\"finalize_ns\":%llu", (unsigned long long)finalize_ns);
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
  write_record(dir, &o);
  free(o.buf);
}
