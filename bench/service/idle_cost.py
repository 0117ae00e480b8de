#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""What eziotraced costs the processes it does not record: `dd if=/dev/zero of=/dev/null bs=64
count=2000000` (4 M cheap system calls), run beside the service, never recorded. Not a test: run
by hand, as root, on an idle machine. Each round, interleaved:
  plain      no eziotraced running;
  idle       eziotraced started, no session (its programs loaded, not attached);
  session    one session open (a recording of a command that waits), dd beside it;
  teardown   that session ended, eziotraced still running (its programs detached again).
Prints the median of each (wall time, and dd's own CPU time, which the other loads of a shared
machine inflate less), its ratio to plain and the cost per system call.

  bench/service/idle_cost.py [-b build-dir] [-r rounds] [-n count]
"""
import argparse, os, shutil, statistics, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def args():
    p = argparse.ArgumentParser()
    p.add_argument("-b", "--build", default="build")
    p.add_argument("-r", "--rounds", type=int, default=7)
    p.add_argument("-n", "--count", type=int, default=2000000)
    return p.parse_args()


def dd(count):
    """dd's wall time and its CPU time (user + system: the programs run in its system calls), s."""
    t0 = time.monotonic_ns()
    p = subprocess.Popen(["dd", "if=/dev/zero", "of=/dev/null", "bs=64", f"count={count}", "status=none"])
    _, status, ru = os.wait4(p.pid, 0)
    wall = (time.monotonic_ns() - t0) / 1e9
    if status != 0:
        sys.exit("dd failed")
    return wall, ru.ru_utime + ru.ru_stime


def links_of(pid):
    """The BPF links and perf events whose fds pid holds (its attached programs)."""
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:[perf_event]":
                n += 1
            elif "link_id:" in Path(f"/proc/{pid}/fdinfo/{fd}").read_text():
                n += 1
        except OSError:
            pass
    return n


def wait_until(cond, what):
    for _ in range(400):
        if cond():
            return
        time.sleep(0.05)
    sys.exit(f"timed out waiting for {what}")


def main():
    a = args()
    build = ROOT / a.build
    ez, daemon = build / "bin/eziotrace", build / "bin/eziotraced"
    for f in (ez, daemon):
        if not f.exists():
            sys.exit(f"no {f}: build eziotrace and eziotraced first")
    if os.geteuid() != 0:
        sys.exit("run as root (eziotraced needs it)")
    work = Path(tempfile.mkdtemp(prefix="ezio-bench-idle."))
    os.chmod(work, 0o755)  # eziotraced serves a socket there: its group must reach it
    sock = work / "eziotraced.sock"
    res = {k: [] for k in ("plain", "idle", "session", "teardown")}
    attached = {}
    for _ in range(a.rounds):
        res["plain"].append(dd(a.count))
        d = subprocess.Popen([daemon, "--foreground", "--socket", sock, "--group", "root"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            if d.stdout.readline().strip() != "eziotraced: ready":
                sys.exit("eziotraced did not start")
            attached["idle"] = links_of(d.pid)
            res["idle"].append(dd(a.count))
            go = work / "go"
            go.unlink(missing_ok=True)
            shutil.rmtree(work / "t", ignore_errors=True)
            rec = subprocess.Popen([ez, "record", f"--service={sock}", "-o", work / "t", "--", "sh", "-c",
                                    f"while [ ! -e {go} ]; do sleep 0.05; done"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            wait_until(lambda: links_of(d.pid) > 0, "the session's programs")
            attached["session"] = links_of(d.pid)
            res["session"].append(dd(a.count))
            go.touch()
            if rec.wait() != 0:
                sys.exit(f"the recording failed: {rec.stderr.read()}")
            wait_until(lambda: links_of(d.pid) == 0, "the programs' detach")
            attached["teardown"] = links_of(d.pid)
            res["teardown"].append(dd(a.count))
        finally:
            d.terminate()
            d.wait()
    shutil.rmtree(work, ignore_errors=True)
    print(f"dd bs=64 count={a.count} to /dev/null ({2 * a.count} system calls), beside eziotraced, "
          f"median of {a.rounds} interleaved rounds (load {os.getloadavg()[0]:.1f}):")
    for i, what in enumerate(("wall time", "dd's CPU time (user + system)")):
        plain = statistics.median(x[i] for x in res["plain"])
        print(f" {what}:")
        for mode, xs in res.items():
            m = statistics.median(x[i] for x in xs)
            per_call = (m - plain) / (2 * a.count) * 1e9
            links = f"  ({attached[mode]} links/perf events held)" if mode in attached else ""
            print(f"  {mode:<9} {m:7.3f} s  {m / plain:5.2f}x plain  {per_call:+6.1f} ns/call{links}")


if __name__ == "__main__":
    main()
