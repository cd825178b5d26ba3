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

Usage: bench/vs-fio.sh [--pairs N] [--disk-dir DIR] [--tmpfs-dir DIR] [--quick]
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd, cwd=None):
    """Runs a command, returns (stdout, rusage, wall seconds)."""
    t = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd)
    out = p.stdout.read()
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t
    if p.returncode not in (0, 1):
        sys.exit(f"{cmd[0]} failed ({p.returncode}): {err.decode(errors='replace')[-500:]}")
    return out, ru, wall


def iopscheck(binary, engine, d, size, runtime):
    out, ru, wall = run([
        binary, "run", "--no-history", "--quiet", "--format", "json", "--runs", "1",
        "--engine", engine, "--size", size, "--runtime", str(runtime), "--dir", d,
    ])
    m = json.loads(out)["runs"][0]["metrics"]
    return {
        "iops": m["write_iops"],
        "ios": m["write_ios"],
        "clat_p50_us": m["write_clat_p50_us"],
        "clat_p99_us": m["write_clat_p99_us"],
        "cpu_s": ru.ru_utime + ru.ru_stime,
        "maxrss_kib": ru.ru_maxrss,
        "wall_s": wall,
    }


def fio(binary, engine, d, size, runtime):
    name = f"iopscheck-bench-{os.getpid()}"
    cmd = [
        binary, f"--name={name}", f"--directory={d}", f"--ioengine={engine}", "--rw=randwrite",
        "--bs=4k", "--numjobs=1", f"--size={size}", "--iodepth=1", f"--runtime={runtime}",
        "--time_based", "--end_fsync=1", "--output-format=json",
    ]
    try:
        out, ru, wall = run(cmd)
    finally:
        for f in os.listdir(d):
            if f.startswith(name):
                os.unlink(os.path.join(d, f))
    text = out.decode(errors="replace")
    job = json.loads(text[text.index("{"):])["jobs"][0]["write"]
    pct = job["clat_ns"]["percentile"]
    return {
        "iops": job["iops"],
        "ios": job["total_ios"],
        "clat_p50_us": pct["50.000000"] / 1000,
        "clat_p99_us": pct["99.000000"] / 1000,
        "cpu_s": ru.ru_utime + ru.ru_stime,
        "maxrss_kib": ru.ru_maxrss,
        "wall_s": wall,
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--disk-dir", default=None, help="directory on the disk (default: a temp dir under the repo)")
    ap.add_argument("--tmpfs-dir", default="/dev/shm", help="a directory on tmpfs")
    ap.add_argument("--engines", default="psync,posixaio,io_uring")
    ap.add_argument("--binary", default=os.path.join(ROOT, "target/release/iopscheck"))
    ap.add_argument("--fio", default=shutil.which("fio"))
    ap.add_argument("--quick", action="store_true", help="2 pairs, short runs: a smoke test")
    a = ap.parse_args()
    if not a.fio:
        sys.exit("fio is not installed (apt-get install fio)")
    if not os.path.exists(a.binary):
        sys.exit(f"{a.binary} not found: cargo build --release first")
    pairs = 2 if a.quick else a.pairs
    targets = [
        # (label, directory, size, runtime s)
        ("tmpfs", tempfile.mkdtemp(dir=a.tmpfs_dir), "256m", 2 if a.quick else 5),
        ("disk", tempfile.mkdtemp(dir=a.disk_dir or os.path.join(ROOT, "target")), "512m", 3 if a.quick else 10),
    ]
    fio_version = subprocess.run([a.fio, "--version"], capture_output=True, text=True).stdout.strip()
    results = {}
    raw = []
    try:
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
                    raw.append({"target": label, "engine": engine, "pair": i, **{k: v for k, v in got.items()}})
                    print(f"{label} {engine} pair {i + 1}/{pairs}: iopscheck {got['iopscheck']['iops']:.0f} IOPS, fio {got['fio']['iops']:.0f} IOPS", file=sys.stderr)
                results[(label, engine)] = ratios(ps)
    finally:
        for _, d, _, _ in targets:
            shutil.rmtree(d, ignore_errors=True)

    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print(f"Measured {time.strftime('%Y-%m-%d')} on {platform.node()}: {os.cpu_count()} vCPU {cpu}, "
          f"Linux {platform.release()}, {fio_version}; {pairs} pairs per row; "
          "ratio = iopscheck / fio, median (min–max).\n")
    print("| target | engine | IOPS iopscheck / fio | IOPS ratio | CPU per I/O ratio | clat p50 ratio | clat p99 ratio | peak memory iopscheck / fio |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for (label, engine), r in results.items():
        print(f"| {label} | {engine} | {r['iops_iopscheck']:.0f} / {r['iops_fio']:.0f} | {fmt(r['iops'])} | {fmt(r['cpu_per_io'])} | "
              f"{fmt(r['clat_p50'])} | {fmt(r['clat_p99'])} | {r['mem_iopscheck_mib']:.1f} / {r['mem_fio_mib']:.1f} MiB |")
    with open(os.path.join(ROOT, "target", "vs-fio-raw.json"), "w") as f:
        json.dump(raw, f, indent=1)


if __name__ == "__main__":
    main()
