#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""What the always-on metrics cost: `dd bs=4k count=200000` (issue #30's workload: 200 000 reads
and 200 000 writes), interleaved rounds of
  plain      nothing attached;
  floor      empty programs on tp_btf/sys_enter and sys_exit (bench/hooks' hook_cost --hold): what
             any tool on the syscall tracepoints pays before doing anything;
  syscall    eziotraced --metrics --metrics-layers syscall (the system-call series only);
  metrics    eziotraced --metrics running (no recording), every layer;
  bpftrace   a bpftrace script keeping the same kind of aggregate (per cgroup and syscall: calls,
             bytes, log2 latency; read and write only), when bpftrace is installed (our peers'
             way).
Three targets: of=/dev/null (the system calls alone), a file in a temporary directory (the page
cache's write path too), and that file read back from the cache (its read path: one
mm_filemap_get_pages per read). Prints the medians (wall, and dd's CPU time), their ratio to plain and the ns added
per system call. Then, once, each metrics program's own time per run (kernel.bpf_stats_enabled,
set back to what it was) under the same three dd runs, beside the empty programs'.
Not a test: run by hand as root; no assertion.

  bench/metrics/run.py [-b build-dir] [-r rounds] [-n count]
"""
import argparse, json, os, shutil, socket, statistics, subprocess, sys, tempfile, time
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
    p.add_argument("-r", "--rounds", type=int, default=5)
    p.add_argument("-n", "--count", type=int, default=200000)
    return p.parse_args()


def dd(target, count):
    """target: (input, output)."""
    t0 = time.monotonic_ns()
    p = subprocess.Popen(["dd", f"if={target[0]}", f"of={target[1]}", "bs=4096", f"count={count}",
                          "status=none"])
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit("dd failed")
    return (time.monotonic_ns() - t0) / 1e9, ru.ru_utime + ru.ru_stime


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_metrics(build, tmp, layers="all"):
    port = free_port()
    p = subprocess.Popen([str(Path(build) / "bin" / "eziotraced"), "--foreground", "--socket",
                          str(Path(tmp) / "sock"), "--group", "root", "--metrics", str(port),
                          "--metrics-layers", layers],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if p.stdout.readline().strip() != "eziotraced: ready":
        sys.exit("eziotraced did not start")
    return p


def start_bpftrace(tmp):
    script = Path(tmp) / "agg.bt"
    script.write_text(BPFTRACE)
    # bpftrace 0.17 finds tracepoints in tracefs, which this host does not mount: mounted in a
    # mount namespace of its own, the machine's mounts are left as they are.
    p = subprocess.Popen(["unshare", "-m", "sh", "-c", "mount -t tracefs nodev /sys/kernel/tracing"
                          f" && exec bpftrace {script}"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    if "Attaching" not in p.stdout.readline():
        sys.exit("bpftrace did not start")
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
    else:
        p.terminate()
    p.wait()


def start(mode, build, tmp):
    if mode == "floor":
        return start_floor(build)
    if mode == "syscall":
        return start_metrics(build, tmp, "syscall")
    if mode == "metrics":
        return start_metrics(build, tmp)
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
        if name.startswith(("ezio_m_", "floor_sys_")) and prog.get("run_cnt"):
            stats[name] = (prog["run_time_ns"], prog["run_cnt"])
    return stats


def per_program(build, tmp, targets, count):
    """Each program's own time per run under one pass of the three dd runs (bpf_stats)."""
    knob = Path("/proc/sys/kernel/bpf_stats_enabled")
    before = knob.read_text().strip()
    try:
        knob.write_text("1")
        for mode in ("floor", "metrics"):
            p = start(mode, build, tmp)
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
    modes = ["plain", "floor", "syscall", "metrics"] + (["bpftrace"] if shutil.which("bpftrace")
                                                         else [])
    tmp = tempfile.mkdtemp(prefix="ezio-metrics-bench-")
    os.chmod(tmp, 0o755)  # eziotraced wants its socket reachable by its group
    out = str(Path(tmp) / "out")
    targets = {"/dev/null": ("/dev/zero", "/dev/null"), "file": ("/dev/zero", out),
               "cached": (out, "/dev/null")}
    res = {(m, t): [] for m in modes for t in targets}
    for r in range(a.rounds):
        for m in modes:
            p = start(m, a.build, tmp)
            for t, path in targets.items():
                res[(m, t)].append(dd(path, a.count))
            if p:
                stop(p)
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)
    calls = 2 * a.count
    print(f"dd bs=4k count={a.count} ({calls} system calls), median of {a.rounds} rounds")
    print(f"{'target':10} {'mode':9} {'wall s':>8} {'cpu s':>8} {'ratio':>7} {'ns/call':>8}")
    for t in targets:
        base = statistics.median(c for _, c in res[("plain", t)])
        for m in modes:
            wall = statistics.median(w for w, _ in res[(m, t)])
            cpu = statistics.median(c for _, c in res[(m, t)])
            print(f"{t:10} {m:9} {wall:8.3f} {cpu:8.3f} {cpu / base:7.3f} "
                  f"{(cpu - base) / calls * 1e9:8.0f}")
    print("ratio and ns/call from dd's CPU time (user + system), against plain")
    print("load average at the end: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print("per program (kernel.bpf_stats_enabled, one pass of the three runs):")
    per_program(a.build, tmp, targets, a.count)
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
