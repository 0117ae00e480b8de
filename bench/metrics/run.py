#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""What the always-on metrics cost: `dd bs=4k count=200000` (issue #30's workload: 200 000 reads
and 200 000 writes), interleaved rounds of
  plain      nothing attached;
  floor      empty programs on tp_btf/sys_enter and sys_exit (bench/hooks' hook_cost --hold): what
             any tool on the syscall tracepoints pays before doing anything;
  syscall    eziotraced --metrics --metrics-layers syscall (the system-call series only);
  metrics    eziotraced --metrics running (no recording), every layer, the system calls counted
             the way it chooses (fentry where the kernel attaches it, else the tracepoints);
  metrics-tp the same with fentry refused (EZIOTRACE_DENY_HOOKS=fentry): the tracepoint path;
  timed      `metrics` with every call timed (--metrics-latency-every 1; the default samples the
             latency of one call in 16 per CPU): what the sampling saves;
  base       with --baseline BUILD: `metrics` run by that build's eziotraced (before a change),
             so that before and after are measured in the same rounds;
  bpftrace   a bpftrace script keeping the same kind of aggregate (per cgroup and syscall: calls,
             bytes, log2 latency; read and write only), when bpftrace is installed (our peers'
             way).
Targets: of=/dev/null (the system calls alone), a file in a temporary directory (the page
cache's write path too), that file read back from the cache (its read path: one
mm_filemap_get_pages per read), `1MiB` (dd bs=1M to a file, IOR-like transfers) and with --fio
`fio` (buffered 4 KiB writes, 4 jobs, psync). Prints the medians (wall, and the workload's CPU
time), their ratio to plain and the ns added per system call. Then, with --export, eziotraced's
own CPU per second while scraped every second for 30 s; and, unless --no-stats, once, each
metrics program's own time per run (kernel.bpf_stats_enabled, set back to what it was) under the
same dd runs, beside the empty programs'.
Not a test: run by hand as root; no assertion. In the qemu 6.1 guest, where fentry attaches:
bench/metrics/guest.sh.

  bench/metrics/run.py [-b build-dir] [--baseline build-dir] [-r rounds] [-n count]
                       [--modes LIST] [--fio] [--export]
"""
import argparse, json, os, shutil, signal, socket, statistics, subprocess, sys, tempfile, time
import urllib.request
from pathlib import Path

BPFTRACE = r"""
tracepoint:raw_syscalls:sys_enter /args->id == 0 || args->id == 1/ { @start[tid] = nsecs; }
tracepoint:raw_syscalls:sys_exit /@start[tid]/ {
  @calls[cgroup, args->id] = count();
  @bytes[cgroup, args->id] = sum(args->ret > 0 ? args->ret : 0);
  @lat[cgroup, args->id] = hist(nsecs - @start[tid]);
  delete(@start[tid]);
}
"""


def args():
    p = argparse.ArgumentParser()
    p.add_argument("-b", "--build", default="build")
    p.add_argument("--baseline", help="another build: its eziotraced --metrics as mode 'base'")
    p.add_argument("-r", "--rounds", type=int, default=5)
    p.add_argument("-n", "--count", type=int, default=200000)
    p.add_argument("--modes", default="plain,floor,syscall,metrics,bpftrace",
                   help="comma-separated, among plain, floor, syscall, base, metrics, metrics-tp, "
                        "timed, bpftrace (dropped when not installed; base added by --baseline)")
    p.add_argument("--targets", default="/dev/null,file,cached,1MiB")
    p.add_argument("--fio", action="store_true", help="also fio buffered 4 KiB, 4 jobs")
    p.add_argument("--fio-mib", type=int, default=64, help="MiB each fio job writes")
    p.add_argument("--export", action="store_true",
                   help="eziotraced's CPU per second, scraped every second for 30 s")
    p.add_argument("--no-stats", action="store_true", help="no per-program bpf_stats pass")
    p.add_argument("--dir", help="where the files are written (default: a temporary directory)")
    return p.parse_args()


def timed(cmd):
    """Wall seconds and CPU seconds (user + system, the process and the children it waited for)."""
    t0 = time.monotonic_ns()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit(f"{cmd[0]} failed")
    return (time.monotonic_ns() - t0) / 1e9, ru.ru_utime + ru.ru_stime


def dd(target, count):
    """target: (input, output[, block size]); 1 MiB blocks write count / 256 of them."""
    bs = target[2] if len(target) > 2 else 4096
    return timed(["dd", f"if={target[0]}", f"of={target[1]}", f"bs={bs}",
                  f"count={count * 4096 // bs}", "status=none"])


def fio(directory, mib):
    return timed(["fio", "--name=w", "--rw=write", "--bs=4k", f"--size={mib}M", "--numjobs=4",
                  "--ioengine=psync", f"--directory={directory}", "--group_reporting",
                  "--output-format=terse"])


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_metrics(build, tmp, layers="all", deny=None, extra=()):
    port = free_port()
    env = dict(os.environ)
    if deny:
        env["EZIOTRACE_DENY_HOOKS"] = deny
    p = subprocess.Popen([str(Path(build) / "bin" / "eziotraced"), "--foreground", "--socket",
                          str(Path(tmp) / "sock"), "--group", "root", "--metrics", str(port),
                          "--metrics-layers", layers, *extra],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    if p.stdout.readline().strip() != "eziotraced: ready":
        sys.exit("eziotraced did not start")
    p.port = port
    return p


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as r:
        return r.read().decode()


def syscall_hook(port):
    """The mode eziotraced chose (its eziotrace_syscall_hook series)."""
    for line in scrape(port).splitlines():
        if line.startswith("eziotrace_syscall_hook{"):
            return line.split('"')[1]
    return "?"


def stat_cpu(pid):
    """utime + stime of a process, in seconds (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def export_cost(build, tmp, seconds=30):
    """eziotraced's CPU per second of wall time while scraped every second, and per scrape."""
    print(f"{build}:")
    p = start_metrics(build, tmp)
    scrape(p.port)
    c0, t0 = stat_cpu(p.pid), time.monotonic()
    size = 0
    for _ in range(seconds):
        size = len(scrape(p.port))
        time.sleep(1)
    c1, t1 = stat_cpu(p.pid), time.monotonic()
    stop(p)
    print(f"eziotraced scraped every second for {seconds} s ({size} bytes a scrape): "
          f"{(c1 - c0) / (t1 - t0) * 1e3:.2f} ms CPU per second, "
          f"{(c1 - c0) / seconds * 1e3:.2f} ms per scrape")


def start_bpftrace(tmp):
    script = Path(tmp) / "agg.bt"
    script.write_text(BPFTRACE)
    # bpftrace 0.17 finds tracepoints in tracefs, which this host does not mount: mounted in a
    # mount namespace of its own, the machine's mounts are left as they are (a system that has it
    # mounted, the guest's systemd, keeps its own).
    p = subprocess.Popen(["unshare", "-m", "sh", "-c", "mountpoint -q /sys/kernel/tracing || "
                          f"mount -t tracefs nodev /sys/kernel/tracing; exec bpftrace {script}"], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    p.is_bpftrace = True
    lines = []
    while not lines or "Attaching" not in lines[-1]:
        line = p.stdout.readline()
        if not line:
            sys.exit("bpftrace did not start: " + " | ".join(lines))
        lines.append(line.strip())
    return p


def start_floor(build):
    p = subprocess.Popen([str(Path(build) / "bench" / "hooks" / "ezio_bench_hook_cost"), "--hold"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    if p.stdout.readline().strip() != "ready":
        sys.exit("the empty programs did not attach (build ezio_bench_hook_cost)")
    return p


def stop(p):
    if p.stdin:
        p.stdin.close()
    elif getattr(p, "is_bpftrace", False):
        # SIGINT is what bpftrace waits for (a SIGTERM was once left unanswered, the run hung).
        p.send_signal(signal.SIGINT)
    else:
        p.terminate()
    try:
        p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


BASELINE = None


def start(mode, build, tmp):
    if mode == "base":
        return start_metrics(BASELINE, tmp)
    if mode == "floor":
        return start_floor(build)
    if mode == "syscall":
        return start_metrics(build, tmp, "syscall")
    if mode == "metrics":
        return start_metrics(build, tmp)
    if mode == "metrics-tp":
        return start_metrics(build, tmp, deny="fentry")
    if mode == "timed":
        return start_metrics(build, tmp, extra=("--metrics-latency-every", "1"))
    if mode == "bpftrace":
        return start_bpftrace(tmp)
    return None


def program_stats():
    """ns per run and runs of the loaded programs of the metrics and of the floor, by name."""
    out = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True,
                         check=True).stdout
    stats = {}
    for prog in json.loads(out):
        name = prog.get("name", "")
        if name.startswith(("ezio_m", "floor_sys_")) and prog.get("run_cnt"):
            stats[name] = (prog["run_time_ns"], prog["run_cnt"])
    return stats


def per_program(build, tmp, targets, count, modes):
    """Each program's own time per run under one pass of the three dd runs (bpf_stats)."""
    knob = Path("/proc/sys/kernel/bpf_stats_enabled")
    before = knob.read_text().strip()
    try:
        knob.write_text("1")
        for mode in [m for m in ("floor", "base", "timed", "metrics-tp", "metrics") if m in modes]:
            p = start(mode, build, tmp)
            print(f" {mode}:")
            for path in targets.values():
                dd(path, count)
            stats = program_stats()
            stop(p)
            for name, (ns, runs) in sorted(stats.items()):
                print(f"  {name:28} {ns / runs:8.0f} ns/run  {runs:>10} runs")
    finally:
        knob.write_text(before)


def main():
    a = args()
    if os.geteuid() != 0:
        sys.exit("run as root")
    modes = [m for m in a.modes.split(",") if m != "bpftrace" or shutil.which("bpftrace")]
    if a.baseline:
        global BASELINE
        BASELINE = a.baseline
        if "base" not in modes:
            modes.insert(modes.index("metrics") if "metrics" in modes else len(modes), "base")
    elif "base" in modes:
        sys.exit("mode base needs --baseline BUILD")
    tmp = tempfile.mkdtemp(prefix="ezio-metrics-bench-")
    os.chmod(tmp, 0o755)  # eziotraced wants its socket reachable by its group
    work = tempfile.mkdtemp(prefix="ezio-metrics-bench-", dir=a.dir) if a.dir else tmp
    out = str(Path(work) / "out")
    known = {"/dev/null": ("/dev/zero", "/dev/null"), "file": ("/dev/zero", out),
             "cached": (out, "/dev/null"), "1MiB": ("/dev/zero", out + ".1m", 1 << 20)}
    targets = {t: known[t] for t in a.targets.split(",")}
    if "cached" in targets and "file" not in targets:
        sys.exit("the cached target reads what the file target wrote")
    calls = {t: 2 * a.count * 4096 // (v[2] if len(v) > 2 else 4096) for t, v in targets.items()}
    if a.fio:
        calls["fio"] = 4 * a.fio_mib * 256  # the writes, not fio's own calls
    res = {(m, t): [] for m in modes for t in calls}
    for r in range(a.rounds):
        for m in modes:
            p = start(m, a.build, tmp)
            if r == 0 and (m.startswith("metrics") or m in ("base", "timed")):
                print(f"{m}: system calls counted by {syscall_hook(p.port)}")
            for t, path in targets.items():
                res[(m, t)].append(dd(path, a.count))
            if a.fio:
                fio_dir = Path(work) / "fio"
                fio_dir.mkdir(exist_ok=True)
                res[(m, "fio")].append(fio(fio_dir, a.fio_mib))
                shutil.rmtree(fio_dir)
            if p:
                stop(p)
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)
    print(f"dd bs=4k count={a.count} (1MiB: bs=1M, the same bytes), fio 4 jobs × {a.fio_mib} MiB; "
          f"median of {a.rounds} rounds")
    print(f"{'target':10} {'mode':10} {'wall s':>8} {'cpu s':>8} {'ratio':>7} {'ns/call':>8}")
    for t in calls:
        base = statistics.median(c for _, c in res[("plain", t)])
        for m in modes:
            wall = statistics.median(w for w, _ in res[(m, t)])
            cpu = statistics.median(c for _, c in res[(m, t)])
            print(f"{t:10} {m:10} {wall:8.3f} {cpu:8.3f} {cpu / base:7.3f} "
                  f"{(cpu - base) / calls[t] * 1e9:8.0f}")
    print("ratio and ns/call from the workload's CPU time (user + system), against plain")
    if "base" in modes and "metrics" in modes:
        print("metrics against base (this build's added ns/call against the baseline's):")
        for t in calls:
            base = statistics.median(c for _, c in res[("plain", t)])
            before = statistics.median(c for _, c in res[("base", t)]) - base
            after = statistics.median(c for _, c in res[("metrics", t)]) - base
            ratio = f"{after / before:6.2f}" if before > 0 else "     -"
            print(f"  {t:10} added {before / calls[t] * 1e9:6.0f} -> {after / calls[t] * 1e9:6.0f} "
                  f"ns/call ({ratio} of before)")
    print("load average at the end: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    if a.export:
        if a.baseline:
            export_cost(a.baseline, tmp)
        export_cost(a.build, tmp)
    if not a.no_stats:
        print("per program (kernel.bpf_stats_enabled, one pass of the dd runs):")
        per_program(a.build, tmp, targets, a.count, modes)
    shutil.rmtree(tmp)
    if work != tmp:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
