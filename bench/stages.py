"""Where a synchronous direct write's time goes, per tool, from the kernel's own tracepoints.

`Tracer` records, while one tool runs, the pwrite64 system calls and the block layer's events
(bio queued, request issued to the device, request completed) through tracefs. `stages()` then
follows each 4 KiB write of the run's I/O thread through them and splits its cycle into:

  user     from the previous pwrite64's return to this one's entry: the tool's own work
           between writes (clock reads, statistics, choosing the next offset)
  submit   from the system call's entry to the bio reaching the block layer (the filesystem)
  queue    from the bio to the request issued to the device (the I/O scheduler)
  device   from the request issued to the request completed: the disk alone, no tool in it
  complete from the request completed to the system call's return (interrupt, wake-up,
           the filesystem's completion)

Only `user` is the tool's code; `submit`, `queue` and `complete` are the kernel's, on the
tool's behalf (the same calls for both tools make them comparable); `device` is the disk.
Root only (tracefs); `available()` says why not otherwise.
"""

import os
import re
import statistics

TRACEFS = "/sys/kernel/tracing"
EVENTS = ["syscalls/sys_enter_pwrite64", "syscalls/sys_exit_pwrite64", "block/block_bio_queue",
          "block/block_rq_issue", "block/block_rq_complete"]
STAGES = ["user", "submit", "queue", "device", "complete"]


def available():
    """None when tracing can be used, else the reason it cannot."""
    if os.geteuid() != 0:
        return "not root (the kernel's tracepoints need root)"
    if not os.path.exists(os.path.join(TRACEFS, "trace")):
        r = os.system(f"mount -t tracefs nodev {TRACEFS} 2>/dev/null")
        if r != 0 or not os.path.exists(os.path.join(TRACEFS, "trace")):
            return f"tracefs is not mounted at {TRACEFS} and could not be"
    for e in EVENTS:
        if not os.path.exists(os.path.join(TRACEFS, "events", e, "enable")):
            return f"this kernel has no tracepoint {e}"
    return None


def _write(path, value):
    with open(os.path.join(TRACEFS, path), "w") as f:
        f.write(value)


class Tracer:
    """Traces `events` (default: the pwrite64 system calls and the block events above) for
    the duration of a `with` block; `lines` holds the trace."""

    def __init__(self, events=None):
        self.events = events or EVENTS

    def __enter__(self):
        with open(os.path.join(TRACEFS, "buffer_size_kb")) as f:
            self.size = f.read().split()[0]
        with open(os.path.join(TRACEFS, "trace_clock")) as f:
            self.clock = f.read().split("[")[1].split("]")[0]
        _write("tracing_on", "0")
        _write("trace", "")
        _write("buffer_size_kb", "262144")
        _write("trace_clock", "mono")
        for e in self.events:
            _write(f"events/{e}/enable", "1")
        _write("tracing_on", "1")
        return self

    def __exit__(self, *exc):
        _write("tracing_on", "0")
        for e in self.events:
            _write(f"events/{e}/enable", "0")
        with open(os.path.join(TRACEFS, "trace")) as f:
            self.lines = f.read().splitlines()
        _write("trace", "")
        _write("buffer_size_kb", self.size)
        _write("trace_clock", self.clock)
        return False


LINE = re.compile(r"^\s*.+?-(\d+)\s+\[\d+\]\s+\S+\s+([\d.]+): (\w+)(?:: |\(| )(.*)$")
SECTOR = re.compile(r"(\d+) \+ 8\b")


def stages(lines, dev):
    """Per-stage mean and median in µs over the run's 4 KiB writes, from one trace. The I/O
    thread is the one that made the most 4 KiB pwrite64 calls; `dev` is the disk as the
    block events print it ("254,0"). Writes whose events are incomplete (the trace's edges)
    are left out; "writes" says how many were followed."""
    events = []
    calls = {}
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        pid, ts, name, rest = int(m.group(1)), float(m.group(2)), m.group(3), m.group(4)
        if name == "sys_pwrite64":  # the syscall events print as sys_pwrite64(...) and "-> ret"
            name = "exit" if rest.startswith("->") else "enter"
            if name == "enter" and re.search(r"count: (0x)?1000\b", rest):
                calls[pid] = calls.get(pid, 0) + 1
        elif not rest.startswith(dev + " W"):
            continue
        events.append((ts, pid, name, rest))
    if not calls:
        return None
    io = max(calls, key=calls.get)
    got = {s: [] for s in STAGES}
    cur, last_exit, pending = None, None, {}
    for ts, pid, name, rest in events:
        if name == "enter" and pid == io:
            cur = {"enter": ts, "user": ts - last_exit if last_exit is not None else None}
        elif name == "block_bio_queue" and pid == io and cur is not None and "sector" not in cur:
            s = SECTOR.search(rest)
            if s:
                cur["sector"], cur["queued"] = s.group(1), ts
                pending[s.group(1)] = cur
        elif name in ("block_rq_issue", "block_rq_complete"):
            s = SECTOR.search(rest)
            w = pending.get(s.group(1)) if s else None
            if w is not None:
                w.setdefault("issued" if name == "block_rq_issue" else "completed", ts)
        elif name == "exit" and pid == io and cur is not None:
            pending.pop(cur.get("sector"), None)
            if all(k in cur for k in ("queued", "issued", "completed")):
                if cur["user"] is not None:
                    got["user"].append(cur["user"])
                got["submit"].append(cur["queued"] - cur["enter"])
                got["queue"].append(cur["issued"] - cur["queued"])
                got["device"].append(cur["completed"] - cur["issued"])
                got["complete"].append(ts - cur["completed"])
            last_exit, cur = ts, None
    if not got["device"]:
        return None
    out = {"writes": len(got["device"])}
    for s, v in got.items():
        if v:
            out[s + "_mean_us"] = statistics.fmean(v) * 1e6
            out[s + "_p50_us"] = statistics.median(v) * 1e6
    out["cycle_mean_us"] = sum(out.get(s + "_mean_us", 0.0) for s in STAGES)
    return out


def dev_of(disk):
    """The disk as block events print it ("254,0"), from its /sys/block name; None when it
    is not a block device this kernel lists."""
    try:
        with open(f"/sys/block/{disk}/dev") as f:
            return f.read().strip().replace(":", ",")
    except OSError:
        return None


BLOCK = EVENTS[2:]
# At queue depth > 1 (libaio): the submitting and reaping system calls beside the block events.
AIO = ["syscalls/sys_enter_io_submit", "syscalls/sys_exit_io_submit",
       "syscalls/sys_enter_io_getevents", "syscalls/sys_exit_io_getevents"] + BLOCK


def requests(lines, dev):
    """The device's side of a run at any queue depth: each 4 KiB request the busiest
    submitting thread queued on `dev`, followed by its sector from bio to issue to completion.
    Gives the mean queue (bio to issue) and device (issue to completion) times, the device
    time's p50 and p99, and how many of them the device held at once on average over the
    window from the first issue to the last completion (Little's law: the sum of the device
    times over the window)."""
    queued, by_pid = {}, {}
    rows = []
    for line in lines:
        m = LINE.match(line)
        if not m or not m.group(4).startswith(dev + " "):
            continue
        pid, ts, name, rest = int(m.group(1)), float(m.group(2)), m.group(3), m.group(4)
        s = SECTOR.search(rest)
        if not s:
            continue
        if name == "block_bio_queue":
            by_pid[pid] = by_pid.get(pid, 0) + 1
            queued[s.group(1)] = {"pid": pid, "q": ts}
        elif name == "block_rq_issue" and s.group(1) in queued:
            queued[s.group(1)].setdefault("i", ts)
        elif name == "block_rq_complete" and s.group(1) in queued:
            r = queued.pop(s.group(1))
            if "i" in r:
                r["c"] = ts
                rows.append(r)
    if not by_pid:
        return None
    io = max(by_pid, key=by_pid.get)
    rows = [r for r in rows if r["pid"] == io]
    if not rows:
        return None
    dev_t = sorted(r["c"] - r["i"] for r in rows)
    window = max(r["c"] for r in rows) - min(r["i"] for r in rows)
    return {
        "requests": len(rows),
        "queue_mean_us": statistics.fmean(r["i"] - r["q"] for r in rows) * 1e6,
        "device_mean_us": statistics.fmean(dev_t) * 1e6,
        "device_p50_us": dev_t[len(dev_t) // 2] * 1e6,
        "device_p99_us": dev_t[int(len(dev_t) * 0.99)] * 1e6,
        "in_flight_mean": sum(dev_t) / window if window > 0 else None,
        "requests_per_s": len(rows) / window if window > 0 else None,
    }


def levels(lines, dev):
    """Where a libaio run's I/Os are, on average over the run: the I/O thread (the one that
    called io_submit most) counts each I/O from its io_submit to the io_getevents that reaps
    it; in between, each request is followed by sector through the block layer. Gives, as
    time averages over the window from the thread's first io_submit to its last:

      scheduler  queued in the block layer, not yet issued to the device
      device     issued to the device, not yet completed
      unreaped   completed by the device, not yet reaped by the tool (the filesystem's
                 completion work and the AIO ring)

    and, of the thread's io_getevents calls, the share that waited (took over 15 µs: no
    completion was ready), the mean µs per call (and per io_submit call), the calls per I/O,
    and the tool's own µs per I/O (the time
    between one system call's return and the next call's entry, summed per I/O)."""
    ev, subs = [], {}
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        pid, ts, name, rest = int(m.group(1)), float(m.group(2)), m.group(3), m.group(4)
        if name in ("sys_io_submit", "sys_io_getevents"):
            kind = name[7:] + ("_exit" if rest.startswith("->") else "_enter")
            ret = int(rest.split()[-1], 16) if kind.endswith("_exit") else 0
            if kind == "submit_enter":
                subs[pid] = subs.get(pid, 0) + 1
            ev.append((ts, pid, kind, ret, None))
        elif rest.startswith(dev + " "):
            s = SECTOR.search(rest)
            if s:
                ev.append((ts, pid, name, 0, s.group(1)))
    if not subs:
        return None
    io = max(subs, key=subs.get)
    n = {"bio": 0, "issued": 0, "completed": 0, "reaped": 0}
    area = {"scheduler": 0.0, "device": 0.0, "unreaped": 0.0}
    state, waits, submits, last, t0, t1 = {}, [], [], None, None, None
    enter = last_exit = None
    own = 0.0
    for ts, pid, kind, ret, sector in ev:
        if t0 is not None:
            dt = ts - last
            area["scheduler"] += (n["bio"] - n["issued"]) * dt
            area["device"] += (n["issued"] - n["completed"]) * dt
            area["unreaped"] += (n["completed"] - n["reaped"]) * dt
        last = ts
        if pid == io and kind in ("submit_enter", "getevents_enter"):
            if last_exit is not None and t0 is not None:
                own += ts - last_exit
            enter = ts
        elif pid == io and kind == "submit_exit":
            if enter is not None and t0 is not None:
                submits.append(ts - enter)
            t0 = ts if t0 is None else t0
            t1 = ts
            last_exit = ts
        elif pid == io and kind == "getevents_exit":
            if enter is not None and t0 is not None:
                waits.append(ts - enter)
            n["reaped"] += ret
            last_exit = ts
        elif kind == "block_bio_queue" and pid == io:
            state[sector] = "queued"
            n["bio"] += 1
        elif kind == "block_rq_issue" and state.get(sector) == "queued":
            state[sector] = "issued"
            n["issued"] += 1
        elif kind == "block_rq_complete" and state.get(sector) == "issued":
            del state[sector]
            n["completed"] += 1
    if t0 is None or t1 <= t0 or not waits or not n["reaped"]:
        return None
    window = t1 - t0
    out = {k: v / window for k, v in area.items()}
    out["reaped_per_s"] = n["reaped"] / window
    out["getevents_waited"] = sum(1 for w in waits if w > 15e-6) / len(waits)
    out["getevents_mean_us"] = statistics.fmean(waits) * 1e6
    out["submit_mean_us"] = statistics.fmean(submits) * 1e6 if submits else None
    out["getevents_per_io"] = len(waits) / n["reaped"]
    out["submits_per_io"] = len(submits) / n["reaped"]
    out["own_us_per_io"] = own / n["reaped"] * 1e6
    out["cycle_us"] = window / n["reaped"] * 1e6
    return out
