#!/usr/bin/env python3
"""iopscheck's engine against fio, alternately, on the same directory and job.

For each back end (psync, posixaio, io_uring) and each target (a tmpfs, where the tools' own
cost is the limit, and a directory on the disk, with the Swimlane job scaled down) it runs
PAIRS pairs, iopscheck then fio (the order alternates between pairs), and reports per back end
the median and spread (min-max) of the ratio iopscheck/fio for: IOPS, CPU time per I/O,
clat p50 and p99; and the median peak memory (max RSS) of both.

CPU time and peak memory come from wait4()'s rusage of each process tree; IOPS and clat from
each tool's own JSON. Prints a Markdown table (for the README) and writes the raw runs as
JSON next to it.

Usage: bench/vs-fio.sh [--pairs N] [--disk-dir DIR] [--tmpfs-dir DIR] [--quick | --full]
       bench/vs-fio.sh --rows direct,throttle,floor   (the other tables, see below)

Modes:
  (default)  the rows above, 5 pairs each (about 10 minutes)
  --quick    every table with tiny sizes and 1-2 s runs, 1 pair: a smoke test (CI) that each
             row produces figures; the figures themselves mean little
  --full     the Swimlane job as prescribed (4 GiB, 60 s, posixaio, end fsync) against fio, at
             least 6 interleaved pairs, with `sync; echo 3 > /proc/sys/vm/drop_caches` and a
             pause before each run (root): median and spread of the IOPS ratio and of the end
             fsync's share of each tool's runtime (about 20 minutes). On a fresh ext4 on a
             loop device over an image in --disk-dir (see ScratchFs), or with --full-fs dir
             in --disk-dir itself

Each pair's figures are printed to stderr and appended to target/vs-fio-pairs.jsonl as soon as
the pair ends.
Other tables (--rows, comma-separated; all of them with --quick):
  direct     on the disk with O_DIRECT: the gitlab-gitaly job (4k randrw 75/25, libaio, QD 64)
             time-based for the same seconds in both tools, and psync QD 1 randwrite
             (--direct-jobs gitaly or psync for one of them); then, per job, what moves with
             a run's IOPS over all runs of both tools (Pearson r): the time the hypervisor stole
             from the I/O thread's CPU (over the whole process, and over the timed seconds
             alone: the seconds in which the disk ran at least half its busiest rate), where
             on the disk the run's fresh test file lies, the CPU the I/O thread ran on, the
             order in the pair, and the tool; and each figure's ratio as measured and at equal
             stolen time (a least-squares line through the pairs' log ratios against the
             difference in the timed seconds' stolen time, read at zero difference).
             --control fio (or iopscheck) runs that one tool in both slots of every pair: an
             A/A round, to show how far two runs of the same tool differ on this machine
  throttle   a loop device throttled with cgroup v1 blkio.throttle.write_iops_device to about
             2,900, 3,100 and 10,000 write IOPS (root): both tools' figures and their verdicts
             against 3,000 write IOPS side by side
  stages     the direct table's psync row with each run traced through the kernel's
             tracepoints (root, tracefs): each write's cycle split into the tool's own time
             between writes, the kernel's submission, queue and completion, and the device's
             time (bench/stages.py), per tool, to tell what a gap between the tools is made of;
             and the gitlab-gitaly job traced with its io_submit/io_getevents calls: where its
             64 I/Os are on average (I/O scheduler, device, completed but not yet reaped), how
             long each call takes, and the tool's own time per I/O between calls
  floor      a bare 4 KiB random pwrite loop on tmpfs (bench/floor.c) against both tools'
             psync: iopscheck/floor and fio/floor (--baseline BINARY: another iopscheck
             build in the same rounds, to measure a change)

--pin CPUS runs every tool under `taskset -c CPUS`; --pin-tool iopscheck:CPUS (or fio:CPUS) only
that tool, the other left where the scheduler puts it. Each run records its I/O thread's CPU time
per CPU (the pair lines and the direct table show it), each CPU's share of time stolen by the
hypervisor during the run (/proc/stat), where the run's test file lies on the disk (filefrag,
a second into the run), and the disk's writes and discards during the run (in the raw JSON):
on a VM whose disk has one queue, a synchronous I/O completes sooner on the CPU that takes the
disk's interrupt (README).
"""

import argparse
import contextlib
import json
import math
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --pin: every tool's command runs under `taskset -c PIN`, so that both tools' I/O threads are
# on the same CPU (see the README: on a VM with one disk queue, the CPU that takes the disk's
# interrupt completes a synchronous I/O sooner than the other).
PIN = None
# --pin-tool TOOL:CPUS: only that tool's commands run under taskset (to ask whether where one
# tool's I/O thread runs is what separates it from the other).
PIN_TOOL = {}


def threads_of(pid):
    """The threads of a process and of its children (fio runs each job in a child), as
    /proc/PID/task/TID paths: /proc/TID/stat gives the whole process's CPU time whichever of
    its threads TID names, so read there every thread of iopscheck looked equally busy."""
    pids = [pid]
    for e in os.listdir("/proc"):
        if e.isdigit():
            try:
                with open(f"/proc/{e}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        pids.append(int(e))
            except (OSError, ValueError, IndexError):
                pass
    tids = []
    for p in pids:
        try:
            tids += [f"/proc/{p}/task/{t}" for t in os.listdir(f"/proc/{p}/task")]
        except OSError:
            pass
    return tids


class Placement:
    """Samples, every 100 ms, which CPU each thread of a run last ran on and how much CPU time
    it used since the last sample; `shares()` gives the busiest thread's (the I/O thread's) CPU
    time per CPU as fractions."""

    def __init__(self, pid):
        self.pid, self.per, self.stop = pid, {}, threading.Event()
        self.t = threading.Thread(target=self.loop, daemon=True)
        self.t.start()

    def loop(self):
        prev = {}
        while not self.stop.wait(0.1):
            for tid in threads_of(self.pid):
                try:
                    with open(f"{tid}/stat") as f:
                        st = f.read().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                used, cpu = int(st[11]) + int(st[12]), int(st[36])
                d = used - prev.get(tid, used)
                prev[tid] = used
                c = self.per.setdefault(tid, {})
                c[cpu] = c.get(cpu, 0) + d

    def shares(self):
        self.stop.set()
        self.t.join()
        if not self.per:
            return {}
        busiest = max(self.per.values(), key=lambda c: sum(c.values()))
        total = sum(busiest.values()) or 1
        return {str(k): round(v / total, 2) for k, v in sorted(busiest.items())}


def disk_of(path):
    """The block device under `path` as its /proc/diskstats name (the whole disk for a
    partition), or None."""
    try:
        st = os.stat(path)
        dev = os.path.realpath(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    except OSError:
        return None
    if os.path.exists(os.path.join(dev, "partition")):
        dev = os.path.dirname(dev)
    return os.path.basename(dev)


def diskstats(name):
    """Completed reads and writes, sectors written and discards of one disk, from /proc/diskstats."""
    if not name:
        return None
    with open("/proc/diskstats") as f:
        for line in f:
            v = line.split()
            if v[2] == name:
                return {"reads": int(v[3]), "writes": int(v[7]), "sectors": int(v[9]), "write_ms": int(v[10]),
                        "discards": int(v[14]) if len(v) > 14 else 0}
    return None


def cpu_ticks():
    """Per CPU, (steal ticks, all ticks) from /proc/stat: the time the hypervisor ran something
    else while this VM's CPU had work, against all time."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            v = line.split()
            if v[0].startswith("cpu") and v[0] != "cpu":
                t = [int(x) for x in v[1:9]]
                out[v[0][3:]] = (t[7], sum(t))
    return out


def steal_shares(a, b):
    """Each CPU's share of time stolen by the hypervisor between two cpu_ticks() readings."""
    return {c: round((b[c][0] - a[c][0]) / max(1, b[c][1] - a[c][1]), 3) for c in a if c in b}


class IoWindow:
    """Every 100 ms, each CPU's stolen and total ticks (/proc/stat) and the disk's completed
    reads and writes (/proc/diskstats). `result()` gives each CPU's stolen share over the
    seconds in which the disk ran at least half its busiest rate of requests: the timed phase.
    A whole-process window would also hold phases that differ by tool (fio lays its file out
    itself, iopscheck removes its file before it exits) and so mix their steal into a
    comparison of the timed seconds."""

    def __init__(self, disk):
        self.disk, self.samples, self.stop = disk, [], threading.Event()
        self.t = threading.Thread(target=self.loop, daemon=True)
        if disk:
            self.t.start()

    def requests(self):
        d = diskstats(self.disk)
        return d["reads"] + d["writes"] if d else 0

    def loop(self):
        while True:
            self.samples.append((time.monotonic(), cpu_ticks(), self.requests()))
            if self.stop.wait(0.1):
                return

    def result(self):
        self.stop.set()
        if not self.disk:
            return None
        self.t.join()
        s = self.samples
        rates = [(b[2] - a[2]) / max(1e-3, b[0] - a[0]) for a, b in zip(s, s[1:])]
        if not rates or max(rates) <= 0:
            return None
        busy = [i for i, r in enumerate(rates) if r >= max(rates) / 2]
        first, last = s[busy[0]], s[busy[-1] + 1]
        return {"seconds": round(last[0] - first[0], 1), "steal": steal_shares(first[1], last[1])}


class Where:
    """Where on the disk the run's test file lies: a second into the run, the files in the
    directory that were not there before it, each file's first and last physical extents
    (filefrag), as GiB offsets into the filesystem. A fresh file per run in both tools
    lands wherever the allocator puts it, so a run-to-run spread could be the disk's regions."""

    def __init__(self, d, delay=1.0):
        self.d, self.before = d, set(os.listdir(d)) if d and os.path.isdir(d) else None
        self.found, self.stop = None, threading.Event()
        if self.before is not None:
            self.t = threading.Thread(target=self.look, args=(delay,), daemon=True)
            self.t.start()

    def look(self, delay):
        if self.stop.wait(delay):
            return
        for name in sorted(set(os.listdir(self.d)) - self.before):
            path = os.path.join(self.d, name)
            try:
                out = subprocess.run(["filefrag", "-e", path], capture_output=True, text=True, timeout=10).stdout
                bs = os.statvfs(self.d).f_bsize
            except (OSError, subprocess.SubprocessError):
                continue
            ext = []
            for line in out.splitlines():
                v = line.replace(":", " ").replace("..", " ").split()
                # "  0:        0..   32767:    1234567..   1267334:  32768:  ..."
                if len(v) >= 5 and v[0].isdigit() and v[3].isdigit():
                    ext.append(int(v[3]) * bs / (1 << 30))
            if ext:
                self.found = {"first_gib": round(min(ext), 2), "last_gib": round(max(ext), 2), "extents": len(ext)}
                return

    def result(self):
        self.stop.set()
        if self.before is not None:
            self.t.join()
        return self.found


def run(cmd, cwd=None, cgroup=None, where=None, tool=None):
    """Runs a command (in the cgroup v1 blkio group `cgroup`, if given), returns (stdout,
    rusage, wall seconds, the I/O thread's CPU shares)."""
    def enter():
        if cgroup:
            with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
    if PIN is not None:
        cmd = ["taskset", "-c", PIN, *cmd]
    elif tool in PIN_TOOL:
        cmd = ["taskset", "-c", PIN_TOOL[tool], *cmd]
    ticks = cpu_ticks()
    look = Where(where)
    window = IoWindow(disk_of(where) if where else None)
    t = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, preexec_fn=enter)
    placed = Placement(p.pid)
    out = p.stdout.read()
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    run.cpus = placed.shares()
    run.steal = steal_shares(ticks, cpu_ticks())
    run.io_window = window.result()
    run.file = look.result()
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t
    # iopscheck: 0 pass, 1 fail, 3 inconclusive (a scaled-down job is never the policy's
    # test) are all measurements; fio exits 0 or 1.
    if p.returncode not in (0, 1, 3):
        sys.exit(f"{cmd[0]} failed ({p.returncode}): {err.decode(errors='replace')[-500:]}")
    return out, ru, wall


def iopscheck(binary, engine, d, size, runtime, policy=None, cgroup=None):
    cmd = [
        binary, "run", "--no-history", "--quiet", "--format", "json", "--runs", "1",
        "--engine", engine, "--dir", d,
    ]
    if size:
        cmd += ["--size", size, "--runtime", str(runtime)]
    if policy:
        cmd += ["--policy", policy]
    disk = disk_of(d)
    before = diskstats(disk)
    out, ru, wall = run(cmd, cgroup=cgroup, where=d, tool="iopscheck")
    dev = device_delta(before, diskstats(disk))
    doc = json.loads(out)
    m = doc["runs"][0]["metrics"]
    return {
        "verdict": doc["verdict"],
        "read_iops": m.get("read_iops", 0.0),
        "read_clat_p50_us": m.get("read_clat_p50_us", 0.0),
        "read_clat_p99_us": m.get("read_clat_p99_us", 0.0),
        "end_fsync_ms": m.get("end_fsync_ms"),
        "runtime_ms": m.get("write_runtime_ms"),
        "iops": m["write_iops"],
        "ios": m["write_ios"],
        "clat_p50_us": m["write_clat_p50_us"],
        "clat_p99_us": m["write_clat_p99_us"],
        "cpu_s": ru.ru_utime + ru.ru_stime,
        "maxrss_kib": ru.ru_maxrss,
        "wall_s": wall,
        # the I/O thread's CPU time per CPU; the disk's writes and discards during the
        # process (for iopscheck that includes removing its file; for fio, not)
        "cpus": run.cpus,
        "steal": run.steal,
        # the stolen share in the timed seconds only (IoWindow)
        "io_window": run.io_window,
        "file": run.file,
        "device": dev,
    }


def device_delta(a, b):
    return {k: b[k] - a[k] for k in a} if a and b else None


def fio(binary, engine, d, size, runtime, extra=(), cgroup=None, end_fsync=True, rw="randwrite", iodepth=1):
    name = f"iopscheck-bench-{os.getpid()}"
    cmd = [
        binary, f"--name={name}", f"--directory={d}", f"--ioengine={engine}", f"--rw={rw}",
        "--bs=4k", "--numjobs=1", f"--size={size}", f"--iodepth={iodepth}", f"--runtime={runtime}",
        "--time_based", f"--end_fsync={int(end_fsync)}", "--output-format=json", *extra,
    ]
    disk = disk_of(d)
    before = diskstats(disk)
    try:
        out, ru, wall = run(cmd, cgroup=cgroup, where=d, tool="fio")
        dev = device_delta(before, diskstats(disk))
    finally:
        t = time.monotonic()
        for f in os.listdir(d):
            if f.startswith(name):
                os.unlink(os.path.join(d, f))
        removed_s = time.monotonic() - t
    text = out.decode(errors="replace")
    j = json.loads(text[text.index("{"):])["jobs"][0]
    job = j["write"]
    pct = job["clat_ns"]["percentile"]
    rpct = j["read"]["clat_ns"].get("percentile") or {}
    return {
        "read_iops": j["read"]["iops"],
        "read_clat_p50_us": rpct.get("50.000000", 0) / 1000,
        "read_clat_p99_us": rpct.get("99.000000", 0) / 1000,
        # fio's runtime includes the end fsync: what exceeds the timed seconds is the fsync
        "end_fsync_ms": max(0.0, job["runtime"] - runtime * 1000) if end_fsync else None,
        "runtime_ms": job["runtime"],
        "iops": job["iops"],
        "ios": job["total_ios"],
        "clat_p50_us": pct["50.000000"] / 1000,
        "clat_p99_us": pct["99.000000"] / 1000,
        "cpu_s": ru.ru_utime + ru.ru_stime,
        "maxrss_kib": ru.ru_maxrss,
        "wall_s": wall,
        "cpus": run.cpus,
        "steal": run.steal,
        # the stolen share in the timed seconds only (IoWindow)
        "io_window": run.io_window,
        "file": run.file,
        "device": dev,
        "removed_s": removed_s,
    }


def ratios(pairs):
    out = {}
    for key, f in [
        ("iops", lambda r: r["iops"]),
        ("cpu_per_io", lambda r: r["cpu_s"] / max(r["ios"], 1)),
        ("clat_p50", lambda r: r["clat_p50_us"]),
        ("clat_p99", lambda r: r["clat_p99_us"]),
    ]:
        rs = [f(a) / f(b) for a, b in pairs if f(b) > 0]
        out[key] = (statistics.median(rs), min(rs), max(rs)) if rs else (float("nan"),) * 3
    out["mem_iopscheck_mib"] = statistics.median(a["maxrss_kib"] for a, _ in pairs) / 1024
    out["mem_fio_mib"] = statistics.median(b["maxrss_kib"] for _, b in pairs) / 1024
    out["iops_iopscheck"] = statistics.median(a["iops"] for a, _ in pairs)
    out["iops_fio"] = statistics.median(b["iops"] for _, b in pairs)
    return out


def fmt(t):
    med, lo, hi = t
    return f"{med:.2f} ({lo:.2f}–{hi:.2f})"


def med_spread(xs, digits=3):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "n/a"
    return f"{statistics.median(xs):.{digits}f} ({min(xs):.{digits}f}–{max(xs):.{digits}f})"


def ratio(a, b):
    return a / b if b else None


def load_avg():
    return " ".join(open("/proc/loadavg").read().split()[:3])


def drop_caches(pause):
    """Neither tool inherits the other's dirty pages: write them back, drop the cache, wait."""
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")
    time.sleep(pause)


def policy_file(d, builtin, edits):
    """A copy of a built-in policy with its job edited, for a row the built-ins do not cover."""
    text = open(os.path.join(ROOT, "policies", builtin + ".yaml")).read()
    for old, new in edits:
        if old not in text:
            sys.exit(f"policies/{builtin}.yaml no longer holds {old!r}: update bench/vs_fio.py")
        text = text.replace(old, new)
    path = os.path.join(d, f"bench-{builtin}.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def psync_direct_policy(work):
    """The Swimlane job on psync with O_DIRECT and no end fsync: the device rows' QD 1 job."""
    return policy_file(work, "swimlane", [("ioengine: posixaio", "ioengine: psync\n  direct: true"),
                                          ("engines: [posixaio, io_uring]", "engines: [psync]"),
                                          ("end_fsync: true", "end_fsync: false")])


def gitaly_timed_policy(work):
    """The gitlab-gitaly job time-based, so that both tools run it for the same seconds."""
    return policy_file(work, "gitlab-gitaly", [("time_based: false", "time_based: true")])


def interleaved(pairs, one, two, before=None, label="", names=("iopscheck", "fio")):
    """Runs `pairs` pairs of (iopscheck, fio), alternating which goes first. Each pair's
    figures are printed (stderr) and appended to target/vs-fio-pairs.jsonl as soon as it
    ends, so that a run stopped half-way keeps what it measured. `names` are what the
    printed lines call the two slots (an A/A control runs one tool in both); the records
    keep the keys "iopscheck" and "fio" for the slots either way."""
    out = []
    for i in range(pairs):
        got = {"load_before": load_avg()}
        for name in (("iopscheck", "fio") if i % 2 == 0 else ("fio", "iopscheck")):
            if before:
                before()
            got[name] = (one if name == "iopscheck" else two)()
        got["load"] = load_avg()
        got["first"] = "iopscheck" if i % 2 == 0 else "fio"
        out.append(got)
        a, b = got["iopscheck"], got["fio"]
        x, y = names
        first = x if got["first"] == "iopscheck" else y
        print(f"{label} pair {i + 1}/{pairs} ({first} first): IOPS {x} {a['iops']:.0f} / {y} {b['iops']:.0f} = "
              f"{ratio(a['iops'], b['iops']):.3f}; clat p50 {a['clat_p50_us']:.0f} / {b['clat_p50_us']:.0f} µs; "
              f"I/O thread's CPU {x} {a.get('cpus')} / {y} {b.get('cpus')}; "
              f"stolen {x} {a.get('steal')} / {y} {b.get('steal')}; "
              f"stolen in the timed seconds {x} {(a.get('io_window') or {}).get('steal')} / {y} {(b.get('io_window') or {}).get('steal')}; "
              f"file at GiB {x} {(a.get('file') or {}).get('first_gib')} / {y} {(b.get('file') or {}).get('first_gib')}; "
              f"load {got['load_before']} -> {got['load']}", file=sys.stderr, flush=True)
        with open(os.path.join(ROOT, "target", "vs-fio-pairs.jsonl"), "a") as f:
            f.write(json.dumps({"row": label, "pair": i + 1, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **got}) + "\n")
    return out


class ScratchFs:
    """A fresh ext4 for the --full runs, on a loop device over an image file on the disk
    directory's filesystem. The image is written through once before the runs, so every
    write the tools make reaches the disk as a plain overwrite of that file (the loop device
    uses direct I/O, so nothing is cached twice), and the ext4 inside is mounted without
    `discard`: removing a 4 GiB test file after a run then takes a second, where on an ext4
    mounted with `discard` each of the hundreds of thousands of extents a random-write run
    leaves gets its own synchronous discard (measured: more than 15 minutes for one file)."""

    def __init__(self, parent, work, gib):
        self.img = os.path.join(parent, "full.img")
        self.mnt = tempfile.mkdtemp(dir=work)
        self.gib = gib
        self.loop = None
        self.mounted = False

    def __enter__(self):
        t = time.monotonic()
        subprocess.run(["dd", "if=/dev/zero", f"of={self.img}", "bs=4M", f"count={self.gib * 256}",
                        "conv=fsync", "status=none"], check=True)
        self.loop = subprocess.run(["losetup", "-f", "--show", "--direct-io=on", self.img], check=True,
                                   capture_output=True, text=True).stdout.strip()
        subprocess.run(["mkfs.ext4", "-q", "-E", "lazy_itable_init=0,lazy_journal_init=0", self.loop], check=True)
        subprocess.run(["mount", self.loop, self.mnt], check=True)
        self.mounted = True
        print(f"full: ext4 on {self.loop} (direct I/O) over {self.img} ({self.gib} GiB), ready in "
              f"{time.monotonic() - t:.0f} s", file=sys.stderr, flush=True)
        return self.mnt

    def __exit__(self, *exc):
        if self.mounted:
            subprocess.run(["umount", self.mnt], capture_output=True)
        if self.loop:
            subprocess.run(["losetup", "-d", self.loop], capture_output=True)
        if os.path.exists(self.img):
            os.unlink(self.img)
        return False


def full(a, disk, work):
    """The Swimlane job as the policy prescribes it, with the page cache emptied before each run."""
    if os.geteuid() != 0:
        sys.exit("--full drops the page cache before each run: run it as root")
    fs = ScratchFs(disk, work, 10) if a.full_fs == "loop" else None
    with (fs if fs else contextlib.nullcontext(disk)) as d:
        runs = interleaved(
            a.pairs, lambda: iopscheck(a.binary, "posixaio", d, None, 60),
            lambda: fio(a.fio, "posixaio", d, "4g", 60), before=lambda: drop_caches(a.pause), label="full")
    share = lambda r: r["end_fsync_ms"] / r["runtime_ms"] if r["end_fsync_ms"] is not None and r["runtime_ms"] else None
    print(f"\nSwimlane job as prescribed (4 GiB, 60 s, posixaio, end fsync), {a.pairs} interleaved pairs, "
          f"caches dropped and {a.pause} s pause before each run; median (min–max).\n")
    print("| figure | iopscheck | fio | ratio iopscheck / fio |")
    print("| --- | --- | --- | --- |")
    for label, f in [("write IOPS", lambda r: r["iops"]), ("clat p50 µs", lambda r: r["clat_p50_us"]),
                     ("clat p99 µs", lambda r: r["clat_p99_us"]), ("end fsync share of runtime", share),
                     ("end fsync ms", lambda r: r["end_fsync_ms"]), ("CPU s", lambda r: r["cpu_s"])]:
        i_ = [f(p["iopscheck"]) for p in runs]
        f_ = [f(p["fio"]) for p in runs]
        r_ = [ratio(x, y) if x is not None and y is not None else None for x, y in zip(i_, f_)]
        print(f"| {label} | {med_spread(i_)} | {med_spread(f_)} | {med_spread(r_)} |")
    print(f"\nload average (1/5/15 min) after each pair: {'; '.join(p['load'] for p in runs)}")
    return runs


def pearson(xs, ys):
    pts = [(x, y) for x, y in zip(xs, ys) if x is not None and y is not None]
    if len(pts) < 3:
        return None
    mx = statistics.fmean(x for x, _ in pts)
    my = statistics.fmean(y for _, y in pts)
    sxy = sum((x - mx) * (y - my) for x, y in pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    syy = sum((y - my) ** 2 for _, y in pts)
    return sxy / (sxx * syy) ** 0.5 if sxx and syy else None


def stolen(r, timed=False):
    """The share of time the hypervisor stole from the CPU the run's I/O thread was on
    (weighted by the thread's time on each CPU), over the whole process or, with `timed`,
    over the timed seconds only (IoWindow)."""
    st, cpus = ((r.get("io_window") or {}).get("steal") if timed else r.get("steal")) or {}, r.get("cpus") or {}
    if not st:
        return None
    if not cpus:
        return statistics.fmean(st.values())
    return sum(st.get(c, 0) * w for c, w in cpus.items())


def median_interval(xs, rounds=20000):
    """The median and a 95% bootstrap interval for it (resampled with a fixed seed, so the
    same pairs print the same interval)."""
    rng = random.Random(1)
    meds = sorted(statistics.median(rng.choices(xs, k=len(xs))) for _ in range(rounds))
    return statistics.median(xs), meds[int(0.025 * rounds)], meds[int(0.975 * rounds) - 1]


def spread_table(label, ps, names=("iopscheck", "fio")):
    """What moves with a run's IOPS, over every run of both tools: time stolen by the
    hypervisor from the I/O thread's CPU, where the fresh test file lies on the disk, the
    I/O thread's CPU, and whether the run went first in its pair."""
    runs = [(tool, p[tool], p["first"] == tool) for p in ps for tool in ("iopscheck", "fio")]
    iops = [r["iops"] + r.get("read_iops", 0) for _, r, _ in runs]
    rows = [
        ("time stolen from the I/O thread's CPU, whole process", [stolen(r) for _, r, _ in runs], "{:.1%}"),
        ("time stolen from the I/O thread's CPU, timed seconds", [stolen(r, True) for _, r, _ in runs], "{:.1%}"),
        ("test file's first extent, GiB into the filesystem", [(r.get("file") or {}).get("first_gib") for _, r, _ in runs], "{:.0f}"),
        ("I/O thread on CPU 1 (share)", [(r.get("cpus") or {}).get("1", 0.0) for _, r, _ in runs], "{:.2f}"),
        ("went first in its pair (1) or second (0)", [1.0 if f else 0.0 for _, _, f in runs], "{:.0f}"),
        (f"slot: {names[0]} (1) or {names[1]} (0)", [1.0 if t == "iopscheck" else 0.0 for t, _, _ in runs], "{:.0f}"),
    ]
    print(f"\n{label}: what moves with a run's IOPS (read + write), over all {len(runs)} runs; Pearson r "
          "(|r| near 1: moves with it; near 0: does not), and the figure's median (min–max).\n")
    print("| figure | r with IOPS | median (min–max) |")
    print("| --- | --- | --- |")
    for name, xs, f in rows:
        r = pearson(xs, iops)
        have = [x for x in xs if x is not None]
        span = f"{f.format(statistics.median(have))} ({f.format(min(have))}–{f.format(max(have))})" if have else "–"
        print(f"| {name} | {'–' if r is None else f'{r:+.2f}'} | {span} |")


def equal_steal_table(label, ps, x, y):
    """Each figure's ratio as measured (median and its 95% bootstrap interval) and at equal
    stolen time: a least-squares line through the pairs' log ratios against the difference in
    time stolen from each run's I/O thread in its timed seconds, read where the difference is
    zero (with the 95% interval of that intercept). The hypervisor's stolen time moves a run's
    IOPS more than anything else on a shared VM, and a pair whose two runs lost different
    shares compares the host, not the tools."""
    figures = [("read + write IOPS", lambda r: r["iops"] + r.get("read_iops", 0)),
               ("write clat p50", lambda r: r["clat_p50_us"]), ("write clat p99", lambda r: r["clat_p99_us"])]
    if ps[0]["fio"].get("read_iops"):
        figures += [("read clat p50", lambda r: r["read_clat_p50_us"]), ("read clat p99", lambda r: r["read_clat_p99_us"])]
    steals = [(p, stolen(p["iopscheck"], True), stolen(p["fio"], True)) for p in ps]
    have = [p for p, u, v in steals if u is not None and v is not None]
    d = [u - v for _, u, v in steals if u is not None and v is not None]
    total = figures[0][1]
    below = sum(total(p["iopscheck"]) < total(p["fio"]) for p in ps)
    print(f"\n{label}: each figure's ratio {x} / {y} as measured over {len(ps)} pairs (in read + write IOPS "
          f"{x} below {y} in {below}), and at equal stolen time ({len(have)} pairs with the timed "
          f"seconds' stolen time; {y} lost more in {sum(v < 0 for v in d)}).\n")
    print("| figure | as measured: median (95% interval) | at equal stolen time (95% interval) |")
    print("| --- | --- | --- |")
    for name, f in figures:
        # a figure a run did not report (0) has no ratio: its pairs are left out of that row
        ok = lambda p: f(p["iopscheck"]) > 0 and f(p["fio"]) > 0
        rs = [ratio(f(p["iopscheck"]), f(p["fio"])) for p in ps if ok(p)]
        if not rs:
            print(f"| {name} | – | – |")
            continue
        m, lo, hi = median_interval(rs)
        fit = intercept([math.log(ratio(f(p["iopscheck"]), f(p["fio"]))) for p in have if ok(p)],
                        [v for p, v in zip(have, d) if ok(p)])
        at = "–" if fit is None else f"{math.exp(fit[0]):.3f} ({math.exp(fit[0] - 1.96 * fit[1]):.3f}–{math.exp(fit[0] + 1.96 * fit[1]):.3f})"
        print(f"| {name} | {m:.3f} ({lo:.3f}–{hi:.3f}) | {at} |")


def intercept(ys, xs):
    """Least squares y = a + b·x: (a, standard error of a), or None with too few points."""
    n = len(xs)
    if n < 3:
        return None
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((v - mx) ** 2 for v in xs)
    if not sxx:
        return None
    b = sum((u - mx) * (v - my) for u, v in zip(xs, ys)) / sxx
    a = my - b * mx
    s2 = sum((v - a - b * u) ** 2 for u, v in zip(xs, ys)) / (n - 2)
    return a, math.sqrt(s2 * (1 / n + mx * mx / sxx))


def direct(a, disk, work, quick):
    """On the device: O_DIRECT, no page cache. The gitlab-gitaly job time-based, and psync QD 1."""
    size, rt, pairs = ("64m", 2, 1) if quick else ("1g", a.direct_runtime, a.pairs)
    gitaly = gitaly_timed_policy(work)
    psync = psync_direct_policy(work)
    rows = []
    jobs = [
        ("gitaly", "gitlab-gitaly 4k randrw 75/25 libaio QD64 direct", gitaly,
         dict(engine="libaio", rw="randrw", iodepth=64, extra=["--direct=1", "--rwmixread=75"])),
        ("psync", "psync QD1 direct randwrite", psync, dict(engine="psync", extra=["--direct=1"])),
    ]
    x, y = names = (f"A ({a.control})", f"B ({a.control})") if a.control else ("iopscheck", "fio")
    for key, label, pol, fio_job in jobs:
        if key not in a.direct_jobs.split(","):
            continue
        ours = lambda: iopscheck(a.binary, "auto", disk, size, rt, policy=pol)
        theirs = lambda: fio(a.fio, fio_job["engine"], disk, size, rt, extra=fio_job["extra"],
                             end_fsync=False, rw=fio_job.get("rw", "randwrite"),
                             iodepth=fio_job.get("iodepth", 1))
        if a.control:
            # A/A: the same tool in both slots, so every figure's "ratio" is how far two runs
            # of one tool differ on this machine, and an analysis that finds a gap here finds
            # it in the method, not in the tools.
            same = ours if a.control == "iopscheck" else theirs
            ours, theirs, label = same, same, f"control {a.control} against {a.control}: {label}"
        ps = interleaved(pairs, ours, theirs, label=label, names=names)
        rows.append((label, ps))
    print(f"\nOn the device with O_DIRECT, {size} file, {rt} s time-based in both tools, {pairs} pairs; "
          f"ratio {x} / {y}, median (min–max). Target: IOPS 0.97–1.03, clat p50/p99 within 5%.\n")
    print(f"| job | write IOPS {x} / {y} | write IOPS ratio | read IOPS ratio | write clat p50 ratio | write clat p99 ratio | read clat p50 ratio | read clat p99 ratio | I/O thread's CPU per pair, {x} / {y} | load |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for label, ps in rows:
        r = lambda f: med_spread([ratio(f(p["iopscheck"]), f(p["fio"])) for p in ps])
        print(f"| {label} | {statistics.median(p['iopscheck']['iops'] for p in ps):.0f} / "
              f"{statistics.median(p['fio']['iops'] for p in ps):.0f} | {r(lambda x: x['iops'])} | "
              f"{r(lambda x: x['read_iops']) if ps[0]['fio']['read_iops'] else '–'} | {r(lambda x: x['clat_p50_us'])} | "
              f"{r(lambda x: x['clat_p99_us'])} | "
              f"{r(lambda x: x['read_clat_p50_us']) if ps[0]['fio']['read_iops'] else '–'} | "
              f"{r(lambda x: x['read_clat_p99_us']) if ps[0]['fio']['read_iops'] else '–'} | "
              f"{', '.join(main_cpu(p['iopscheck']) + ' / ' + main_cpu(p['fio']) for p in ps)} | "
              f"{', '.join(p['load'].split()[0] for p in ps)} |")
    for label, ps in rows:
        equal_steal_table(label, ps, x, y)
    if not quick:
        for label, ps in rows:
            spread_table(label, ps, names)
    return rows


def stages_table(a, disk, work, quick):
    """Where each tool's QD 1 direct write spends its time, from the kernel's tracepoints
    (bench/stages.py): the direct table's psync row, with each run traced."""
    import stages
    why = stages.available()
    if why:
        print(f"\nThe stages table is skipped: {why}.")
        return None
    dev = stages.dev_of(disk_of(disk) or "")
    if not dev:
        print(f"\nThe stages table is skipped: no block device found under {disk}.")
        return None
    size, rt, pairs = ("64m", 2, 1) if quick else ("1g", a.stages_runtime, a.pairs)
    psync = psync_direct_policy(work)

    def traced(measure):
        with stages.Tracer() as t:
            r = measure()
        r["stages"] = stages.stages(t.lines, dev)
        return r

    ps = interleaved(pairs, lambda: traced(lambda: iopscheck(a.binary, "auto", disk, size, rt, policy=psync)),
                     lambda: traced(lambda: fio(a.fio, "psync", disk, size, rt, extra=["--direct=1"], end_fsync=False)),
                     label="stages")
    if not all(p[t]["stages"] for p in ps for t in ("iopscheck", "fio")):
        print(f"\nThe stages table is skipped: the trace followed none of a run's writes to {dev} "
              "from the system call to the device (a stacked device such as device-mapper or md "
              "queues them on another disk).")
        return None
    print(f"\nA psync QD 1 direct 4 KiB randwrite's cycle, traced with the kernel's tracepoints "
          f"(bench/stages.py), {size} file, {rt} s, {pairs} pairs: each run's mean µs per write, "
          "median (min–max) over the runs; ratio iopscheck / fio per pair.\n")
    print("| stage | whose time | iopscheck µs | fio µs | ratio |")
    print("| --- | --- | --- | --- | --- |")
    whose = {"user": "the tool's, between writes", "submit": "kernel: filesystem to bio",
             "queue": "kernel: I/O scheduler", "device": "the disk", "complete": "kernel: interrupt to return",
             "cycle": "all: 1 / IOPS"}
    for s in stages.STAGES + ["cycle"]:
        key = f"{s}_mean_us"
        one = [p["iopscheck"]["stages"][key] for p in ps]
        two = [p["fio"]["stages"][key] for p in ps]
        print(f"| {s} | {whose[s]} | {med_spread(one, 1)} | {med_spread(two, 1)} | "
              f"{med_spread([ratio(x, y) for x, y in zip(one, two)])} |")
    print(f"| IOPS | | {med_spread([p['iopscheck']['iops'] for p in ps], 0)} | "
          f"{med_spread([p['fio']['iops'] for p in ps], 0)} | "
          f"{med_spread([ratio(p['iopscheck']['iops'], p['fio']['iops']) for p in ps])} |")
    dev_us = [r["stages"]["device_mean_us"] for p in ps for r in (p["iopscheck"], p["fio"])]
    print(f"\nThe device stage over all {len(dev_us)} runs, in the order they ran: "
          f"{', '.join(f'{d:.1f}' for d in dev_us)} µs; load {ps[0]['load_before']} -> {ps[-1]['load']}.")

    # The same at queue depth 64: the gitlab-gitaly job, each request followed from bio to
    # completion, and how many the device held at once.
    gitaly = gitaly_timed_policy(work)

    def traced_requests(measure):
        with stages.Tracer(stages.AIO) as t:
            r = measure()
        r["requests"] = stages.requests(t.lines, dev)
        r["levels"] = stages.levels(t.lines, dev)
        return r

    qs = interleaved(pairs, lambda: traced_requests(lambda: iopscheck(a.binary, "auto", disk, size, rt, policy=gitaly)),
                     lambda: traced_requests(lambda: fio(a.fio, "libaio", disk, size, rt, end_fsync=False, rw="randrw",
                                                         iodepth=64, extra=["--direct=1", "--rwmixread=75"])),
                     label="stages gitaly")
    if not all(p[t]["requests"] and p[t]["levels"] for p in qs for t in ("iopscheck", "fio")):
        print(f"\nThe queue-depth table is skipped: the trace followed none of a run's requests on {dev}.")
        return {"psync": ps, "gitaly": qs}
    print(f"\nThe gitlab-gitaly job (4k randrw 75/25, libaio, QD 64, direct) at the device, traced "
          f"the same way, {size} file, {rt} s, {pairs} pairs: each 4 KiB request from bio to issue "
          "to completion; \"at the device\" is how many requests the device held at once, on "
          "average (the sum of their device times over the traced window); median (min–max).\n")
    print("| figure | iopscheck | fio | ratio |")
    print("| --- | --- | --- | --- |")
    rows = [("read + write IOPS (the tools' own)", lambda r: r["iops"] + r["read_iops"], 0),
            ("requests per s at the device", lambda r: r["requests"]["requests_per_s"], 0),
            ("requests at the device at once", lambda r: r["requests"]["in_flight_mean"], 1),
            ("I/O scheduler µs (bio to issue)", lambda r: r["requests"]["queue_mean_us"], 1),
            ("device µs, mean", lambda r: r["requests"]["device_mean_us"], 1),
            ("device µs, p50", lambda r: r["requests"]["device_p50_us"], 1),
            ("device µs, p99", lambda r: r["requests"]["device_p99_us"], 1),
            ("I/Os in the I/O scheduler at once", lambda r: r["levels"]["scheduler"], 1),
            ("I/Os at the device at once (by system call window)", lambda r: r["levels"]["device"], 1),
            ("I/Os completed, not yet reaped, at once", lambda r: r["levels"]["unreaped"], 1),
            ("io_getevents calls that waited (> 15 µs)", lambda r: r["levels"]["getevents_waited"], 3),
            ("io_submit calls per I/O", lambda r: r["levels"]["submits_per_io"], 2),
            ("µs per io_submit call", lambda r: r["levels"]["submit_mean_us"], 2),
            ("io_getevents calls per I/O", lambda r: r["levels"]["getevents_per_io"], 2),
            ("µs per io_getevents call", lambda r: r["levels"]["getevents_mean_us"], 2),
            ("tool's own µs per I/O (between system calls)", lambda r: r["levels"]["own_us_per_io"], 2),
            ("µs per I/O in the I/O thread's loop (1 / its reap rate)", lambda r: r["levels"]["cycle_us"], 2)]
    for label, f, digits in rows:
        one = [f(p["iopscheck"]) for p in qs]
        two = [f(p["fio"]) for p in qs]
        print(f"| {label} | {med_spread(one, digits)} | {med_spread(two, digits)} | "
              f"{med_spread([ratio(x, y) for x, y in zip(one, two)])} |")
    return {"psync": ps, "gitaly": qs}


def main_cpu(r):
    """The CPU the run's I/O thread spent most of its time on ("1", or "0+1" when split)."""
    c = r.get("cpus") or {}
    top = [k for k, v in c.items() if v >= 0.8]
    return top[0] if top else "+".join(k for k, v in c.items() if v >= 0.1) or "?"


def throttle(a, disk, work, quick):
    """Near the threshold: a loop device throttled with cgroup v1 blkio to a few write IOPS
    levels; both tools' figures judged by the Swimlane rule (formula IOPS >= 3000)."""
    blkio = "/sys/fs/cgroup/blkio"
    if os.geteuid() != 0 or not os.path.exists(os.path.join(blkio, "blkio.throttle.write_iops_device")):
        print("\nthrottle: skipped (needs root and cgroup v1 blkio at /sys/fs/cgroup/blkio)")
        return []
    size, rt, pairs = ("32m", 2, 1) if quick else ("256m", a.throttle_runtime, max(3, a.pairs // 2))
    psync = psync_direct_policy(work)
    img = os.path.join(disk, "throttle.img")
    mnt = tempfile.mkdtemp(dir=work)
    cg = os.path.join(blkio, f"iopscheck-bench-{os.getpid()}")
    loop = None
    rows = []
    try:
        with open(img, "wb") as f:
            f.truncate(1 << 30)
        loop = subprocess.run(["losetup", "-f", "--show", img], check=True, capture_output=True, text=True).stdout.strip()
        subprocess.run(["mkfs.ext4", "-q", loop], check=True)
        subprocess.run(["mount", loop, mnt], check=True)
        st = os.stat(loop)
        dev = f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
        os.mkdir(cg)
        for limit in (2800, 2900, 10000):
            with open(os.path.join(cg, "blkio.throttle.write_iops_device"), "w") as f:
                f.write(f"{dev} {limit}\n")
            ps = interleaved(pairs, lambda: iopscheck(a.binary, "auto", mnt, size, rt, policy=psync, cgroup=cg),
                             lambda: fio(a.fio, "psync", mnt, size, rt, extra=["--direct=1"], end_fsync=False, cgroup=cg),
                             label=f"throttle {limit}")
            rows.append((limit, ps))
    finally:
        subprocess.run(["umount", mnt], capture_output=True)
        if loop:
            subprocess.run(["losetup", "-d", loop], capture_output=True)
        if os.path.isdir(cg):
            os.rmdir(cg)
        if os.path.exists(img):
            os.unlink(img)
    formula = lambda iops: iops * 4096 / 1e6 / 4 * 1024  # the Swimlane article's MB/s -> IOPS
    print(f"\nNear the threshold: ext4 on a loop device throttled with blkio.throttle.write_iops_device, "
          f"psync QD1 4k randwrite O_DIRECT, {size}, {rt} s, {pairs} pair(s). Verdict: the Swimlane rule, "
          "formula IOPS (MB/s / 4 × 1024) ≥ 3000, applied to each tool's figure.\n")
    print("| throttle (write IOPS) | iopscheck IOPS (formula) | fio IOPS (formula) | ratio | verdict iopscheck / fio | agree | load |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for limit, ps in rows:
        for p in ps:
            i, f = p["iopscheck"]["iops"], p["fio"]["iops"]
            vi, vf = ("PASS" if formula(i) >= 3000 else "FAIL"), ("PASS" if formula(f) >= 3000 else "FAIL")
            print(f"| {limit} | {i:.0f} ({formula(i):.0f}) | {f:.0f} ({formula(f):.0f}) | {i / f:.3f} | {vi} / {vf} | "
                  f"{'yes' if vi == vf else 'NO'} | {p['load']} |")
    return rows


def floor(a, tmpfs, work, quick):
    """The psync path's physical limit on tmpfs: a bare pwrite loop (bench/floor.c)."""
    exe = os.path.join(work, "floor")
    subprocess.run(["cc", "-O2", "-o", exe, os.path.join(ROOT, "bench", "floor.c")], check=True)
    size, rt, pairs = ("64m", 1, 1) if quick else ("256m", 5, a.pairs)
    nbytes = int(size[:-1]) << 20
    rows = []
    for i in range(pairs):
        out, _, _ = run([exe, os.path.join(tmpfs, "floor.bin"), str(nbytes), str(rt)])
        fl = float(out.split()[2])
        one = iopscheck(a.binary, "psync", tmpfs, size, rt)
        two = fio(a.fio, "psync", tmpfs, size, rt)
        base = iopscheck(a.baseline, "psync", tmpfs, size, rt) if a.baseline else None
        rows.append((fl, one, two, base, load_avg()))
    print(f"\nThe engine's floor: 4 KiB random pwrite() in a bare loop on tmpfs ({size}, {rt} s), "
          f"{pairs} round(s) of floor, iopscheck psync, fio psync.\n")
    cpu = lambda r: r["cpu_s"] / max(r["ios"], 1) * 1e6
    extra = " | baseline IOPS | baseline / floor | baseline CPU µs per I/O" if a.baseline else ""
    print(f"| floor IOPS | iopscheck IOPS | fio IOPS | iopscheck / floor | fio / floor | iopscheck CPU µs per I/O | fio CPU µs per I/O{extra} | load |")
    print("| --- " * (11 if a.baseline else 8) + "|")
    for fl, one, two, base, load in rows:
        b = f" | {base['iops']:.0f} | {base['iops'] / fl:.3f} | {cpu(base):.2f}" if base else ""
        print(f"| {fl:.0f} | {one['iops']:.0f} | {two['iops']:.0f} | {one['iops'] / fl:.3f} | {two['iops'] / fl:.3f} | "
              f"{cpu(one):.2f} | {cpu(two):.2f}{b} | {load} |")
    return rows


def header(a, fio_version, pairs):
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print(f"Measured {time.strftime('%Y-%m-%d %H:%M %Z')} on {platform.node()}: {os.cpu_count()} vCPU {cpu}, "
          f"Linux {platform.release()}, {fio_version}; load average at the start {load_avg()}; "
          "ratio = iopscheck / fio, median (min–max).")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=None, help="pairs per row (default 5; 6 with --full)")
    ap.add_argument("--disk-dir", default=None, help="directory on the disk (default: a temp dir under the repo)")
    ap.add_argument("--tmpfs-dir", default="/dev/shm", help="a directory on tmpfs")
    ap.add_argument("--engines", default="psync,posixaio,io_uring")
    ap.add_argument("--binary", default=os.path.join(ROOT, "target/release/iopscheck"))
    ap.add_argument("--fio", default=shutil.which("fio"))
    ap.add_argument("--quick", action="store_true", help="every table, 1 pair, tiny runs: a smoke test")
    ap.add_argument("--full", action="store_true", help="the Swimlane job as prescribed, caches dropped before each run")
    ap.add_argument("--rows", default="", help="also: direct,throttle,floor,stages")
    ap.add_argument("--full-fs", choices=["loop", "dir"], default="loop",
                    help="--full: on a fresh ext4 on a loop device over an image in the disk directory "
                         "(default), or in the disk directory itself")
    ap.add_argument("--pause", type=float, default=10, help="seconds to wait after dropping caches (--full)")
    ap.add_argument("--direct-runtime", type=int, default=20)
    ap.add_argument("--direct-jobs", default="gitaly,psync", help="--rows direct: which jobs (gitaly,psync)")
    ap.add_argument("--control", choices=["fio", "iopscheck"], default=None,
                    help="--rows direct: run this one tool in both slots of each pair (an A/A control)")
    ap.add_argument("--baseline", default=None, metavar="BINARY",
                    help="--rows floor: also run this iopscheck binary in each round (an A/B of a change)")
    ap.add_argument("--pin", default=None, metavar="CPUS",
                    help="run both tools under taskset -c CPUS (the same CPU for both)")
    ap.add_argument("--pin-tool", action="append", default=[], metavar="TOOL:CPUS",
                    help="run only TOOL (iopscheck or fio) under taskset -c CPUS; repeatable")
    ap.add_argument("--throttle-runtime", type=int, default=10)
    ap.add_argument("--stages-runtime", type=int, default=5)
    a = ap.parse_args()
    global PIN
    PIN = a.pin
    for spec in a.pin_tool:
        tool, _, cpus = spec.partition(":")
        if tool not in ("iopscheck", "fio") or not cpus:
            sys.exit(f"--pin-tool {spec}: expected iopscheck:CPUS or fio:CPUS")
        PIN_TOOL[tool] = cpus
    if not a.fio:
        sys.exit("fio is not installed (apt-get install fio)")
    if not os.path.exists(a.binary):
        sys.exit(f"{a.binary} not found: cargo build --release first")
    if a.quick and a.full:
        sys.exit("--quick and --full: choose one")
    if a.pairs is None:
        a.pairs = 6 if a.full else 5
    if a.full and a.pairs < 6:
        sys.exit("--full needs at least 6 pairs")
    fio_version = subprocess.run([a.fio, "--version"], capture_output=True, text=True).stdout.strip()
    disk = tempfile.mkdtemp(dir=a.disk_dir or os.path.join(ROOT, "target"), prefix="vs-fio-")
    work = tempfile.mkdtemp(prefix="vs-fio-work-")
    tmpfs = tempfile.mkdtemp(dir=a.tmpfs_dir)
    raw = {}
    try:
        if a.full:
            header(a, fio_version, a.pairs)
            raw["full"] = full(a, disk, work)
            return
        rows = set(filter(None, a.rows.split(",")))
        if a.quick:
            rows |= {"direct", "throttle", "floor", "stages"}
        header(a, fio_version, a.pairs)
        if a.engines:  # --engines "" leaves the first table out
            raw["engines"] = engines_table(a, tmpfs, disk)
        if "direct" in rows:
            raw["direct"] = direct(a, disk, work, a.quick)
        if "throttle" in rows:
            raw["throttle"] = throttle(a, disk, work, a.quick)
        if "floor" in rows:
            raw["floor"] = floor(a, tmpfs, work, a.quick)
        if "stages" in rows:
            raw["stages"] = stages_table(a, disk, work, a.quick)
    finally:
        for d in (disk, work, tmpfs):
            shutil.rmtree(d, ignore_errors=True)
        with open(os.path.join(ROOT, "target", "vs-fio-raw.json"), "w") as f:
            json.dump(raw, f, indent=1, default=str)


def engines_table(a, tmpfs, disk):
    """The first table: each back end against fio on tmpfs and on the disk (page cache)."""
    pairs = 1 if a.quick else a.pairs
    targets = [
        # (label, directory, size, runtime s)
        ("tmpfs", tmpfs, "64m" if a.quick else "256m", 1 if a.quick else 5),
        ("disk", disk, "64m" if a.quick else "512m", 1 if a.quick else 10),
    ]
    results = {}
    raw = []
    for label, d, size, runtime in targets:
        for engine in a.engines.split(","):
            ps = []
            for i in range(pairs):
                order = [iopscheck, fio] if i % 2 == 0 else [fio, iopscheck]
                got = {}
                for tool in order:
                    bin_ = a.binary if tool is iopscheck else a.fio
                    got[tool.__name__] = tool(bin_, engine, d, size, runtime)
                ps.append((got["iopscheck"], got["fio"]))
                raw.append({"target": label, "engine": engine, "pair": i, **got})
                print(f"{label} {engine} pair {i + 1}/{pairs}: iopscheck {got['iopscheck']['iops']:.0f} IOPS, fio {got['fio']['iops']:.0f} IOPS", file=sys.stderr)
            results[(label, engine)] = ratios(ps)
    print(f"\nBack ends on tmpfs and on the disk (buffered), {pairs} pair(s) per row; load average now {load_avg()}.\n")
    print("| target | engine | IOPS iopscheck / fio | IOPS ratio | CPU per I/O ratio | clat p50 ratio | clat p99 ratio | peak memory iopscheck / fio |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for (label, engine), r in results.items():
        print(f"| {label} | {engine} | {r['iops_iopscheck']:.0f} / {r['iops_fio']:.0f} | {fmt(r['iops'])} | {fmt(r['cpu_per_io'])} | "
              f"{fmt(r['clat_p50'])} | {fmt(r['clat_p99'])} | {r['mem_iopscheck_mib']:.1f} / {r['mem_fio_mib']:.1f} MiB |")
    return raw


if __name__ == "__main__":
    main()
