#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Start-up and overhead of recording through eziotraced vs in-process. Not a test: run
by hand, as root, on an idle machine. In one session, interleaved repetitions of:
  start-up   the command to the application's exec (bench/service/exec_stamp), plain / in-process
             / service, and `eziotrace record -- true` wall time;
  fio        buffered 100 MiB, 1 job (4 KiB writes, sync engine): plain / in-process / service;
             with --scenarios/--jobs also direct+fsync 10 MiB and 2/4/8 jobs (the talk's set).
Prints medians and ratios to plain (and service to in-process), and the events lost; for the
start-up, also eziotrace's own CPU time until the application's exec (its schedstat, read by
exec_stamp), which the other loads of a shared machine inflate far less than the wall time.

  bench/service/run.py [-b build-dir] [-r repetitions] [--scenarios buffered,direct] [--jobs 1,2,4,8]
"""
import argparse, os, re, shutil, statistics, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def args():
    p = argparse.ArgumentParser()
    p.add_argument("-b", "--build", default="build")
    p.add_argument("-r", "--reps", type=int, default=7)
    p.add_argument("--scenarios", default="buffered")
    p.add_argument("--jobs", default="1")
    return p.parse_args()


def run(argv, out=None, **kw):
    # A fresh output each time (no -f: replacing an archive checks more than a first recording).
    if out:
        shutil.rmtree(out, ignore_errors=True)
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, argv))}\n{r.stderr}")
    return r


def main():
    a = args()
    build = ROOT / a.build
    ez, daemon, stamp = build / "bin/eziotrace", build / "bin/eziotraced", build / "bench/service/exec_stamp"
    for f in (ez, daemon, stamp):
        if not f.exists():
            sys.exit(f"no {f}: build eziotrace, eziotraced and exec_stamp first")
    if os.geteuid() != 0:
        sys.exit("run as root (the in-process path and the service need it)")
    work = Path(tempfile.mkdtemp(prefix="ezio-bench-service."))
    os.chmod(work, 0o755)  # eziotraced serves a socket there: its group must reach it
    sock = work / "eziotraced.sock"
    # Root is the only client here: group root will do where group eziotrace is not set up.
    d = subprocess.Popen([daemon, "--foreground", "--socket", sock, "--group", "root"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    if d.stdout.readline().strip() != "eziotraced: ready":
        sys.exit("eziotraced did not start")
    modes = {
        "plain": [],
        "in-process": [ez, "record", "--no-service", "-o", work / "t", "--"],
        "service": [ez, "record", f"--service={sock}", "-o", work / "t", "--"],
    }
    fios = {}
    for scenario in a.scenarios.split(","):
        for jobs in a.jobs.split(","):
            size = ["--size=100M"] if scenario == "buffered" else ["--size=10M", "--direct=1", "--fsync=1"]
            fios[f"fio {scenario} {jobs} job(s)"] = [
                "fio", "--name=w", "--rw=write", "--ioengine=sync", "--bs=4k", "--thread",
                f"--numjobs={jobs}", f"--directory={work}", "--output=/dev/null"] + size
    res = {k: [] for k in ["startup", "startup CPU", "true"] + list(fios)}
    lost = {"in-process": 0, "service": 0}
    try:
        for _ in range(a.reps):
            for mode, prefix in modes.items():
                t0 = time.monotonic_ns()
                run(prefix + [stamp, work / "stamp"], work / "t")
                at, cpu = map(int, (work / "stamp").read_text().split())
                res["startup"].append((mode, (at - t0) / 1e6))
                if mode != "plain" and cpu >= 0:
                    res["startup CPU"].append((mode, cpu / 1e6))
                if mode != "plain":
                    t0 = time.monotonic_ns()
                    run(prefix + ["true"], work / "t")
                    res["true"].append((mode, (time.monotonic_ns() - t0) / 1e6))
                for name, fio in fios.items():
                    for f in work.glob("w.*"):
                        f.unlink()
                    run(["sync"])
                    t0 = time.monotonic_ns()
                    r = run(prefix + fio, work / "t")
                    res[name].append((mode, (time.monotonic_ns() - t0) / 1e6))
                    m = re.search(r"(\d+) events were lost", r.stderr)
                    if mode in lost and m:
                        lost[mode] += int(m.group(1))
    finally:
        d.terminate()
        d.wait()
    report(res)
    print(f"events lost in the kernel over all fio runs: {lost}")


def report(res):
    units = {"startup": "ms to the application's exec", "true": "ms wall, record -- true",
             "startup CPU": "ms of eziotrace's CPU until the application's exec"}
    for name in res:
        unit = units.get(name, "ms wall")
        med = {}
        for mode in ("plain", "in-process", "service"):
            xs = [v for m, v in res[name] if m == mode]
            if xs:
                med[mode] = statistics.median(xs)
        print(f"{name}: {unit}")
        for mode, v in med.items():
            ratio = f"  {v / med['plain']:.2f}x plain" if "plain" in med and mode != "plain" else ""
            print(f"  {mode:<11} {v:9.2f}{ratio}")
        if "service" in med and "in-process" in med:
            print(f"  service / in-process: {med['service'] / med['in-process']:.2f}x")


if __name__ == "__main__":
    main()
