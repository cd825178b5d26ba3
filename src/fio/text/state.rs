//! The state machine: reads fio's lines in order into job blocks (a block's header, its
//! direction, latency, percentile, CPU and `issued` lines), with what comes before the blocks
//! (version, headers printed before the run, `Starting N processes`) and after them (group
//! summaries, disk statistics), and what cannot be read. Which line is which is decided by
//! [`super::markers`]; the figures are read by [`super::fields`].

use super::TextLine;
use super::fields::{
    DdirLine, PreHeader, direction_line, is_version, issued_totals, laid_out_size, latency_line,
    leading_u64, parse_f64, percentile_header, percentile_pairs, pre_header, value_of,
};
use super::markers::{Ddir, LatKind, Marker, direction_marker, host_tag, marker, summary_kind};
use crate::measure::Latency;
use std::collections::{HashMap, HashSet};

use super::date::parse_ctime;

/// What the blocks of one job and group printed so far state of themselves.
#[derive(Debug, Default, Clone)]
pub(super) struct Printed {
    pids: HashSet<u32>,
    first: Option<chrono::NaiveDateTime>,
    last: Option<chrono::NaiveDateTime>,
}

#[derive(Debug)]
pub(super) struct Block {
    pub(super) name: String,
    pub(super) groupid: u32,
    pub(super) jobs: u32,
    pub(super) err: i32,
    /// fio's words for the error: `err= 5 (file:io_u.c:1787, func=io_u error,
    /// error=Input/output error)`.
    pub(super) err_text: Option<String>,
    pub(super) pid: Option<u32>,
    pub(super) date: Option<String>,
    /// The header's line.
    pub(super) line: usize,
    pub(super) dirs: Vec<DdirLine>,
    pub(super) usr: Option<f64>,
    pub(super) sys: Option<f64>,
    /// `issued` totals: read, write, trim, sync.
    pub(super) issued: Option<[u64; 4]>,
    /// Whether the `issued` line has the sync column (`issued rwts:`, fio ≥ 3.4).
    pub(super) issued_sync_column: bool,
    /// The `IO depths` shares ([`crate::fio::FioJob::depths`]).
    pub(super) depths: Option<[f64; 7]>,
    pub(super) sync: Option<Latency>,
    /// Direction lines of this block that could not be read: kind, line, text.
    pub(super) unreadable: Vec<(Ddir, usize, String)>,
}

#[derive(Default)]
pub(super) struct State {
    pub(super) pre: Vec<PreHeader>,
    pub(super) started: Option<u32>,
    pub(super) version: Option<String>,
    pub(super) blocks: Vec<Block>,
    pub(super) cur: Option<Block>,
    /// Where percentile rows (`| 1.00th=[…]`) go: (direction index or None for sync, kind,
    /// unit in ns).
    pub(super) pct: Option<(Option<usize>, LatKind, f64)>,
    pub(super) seen_fio: bool,
    pub(super) noise_before: usize,
    pub(super) last_line: usize,
    pub(super) errors: Vec<String>,
    pub(super) interrupted: bool,
    pub(super) group_lines: bool,
    /// The groups whose `Run status group N` line was read.
    pub(super) status_groups: Vec<u32>,
    /// The blocks read so far, by job and group: their processes and the span of their
    /// dates (to tell clones from another run in [`State::begins_another_run`]).
    pub(super) printed: HashMap<(String, u32), Printed>,
    pub(super) extra_terse: bool,
    /// Client/server output: the host whose blocks follow (`<host>` on a line of its own, or
    /// before a job header).
    pub(super) host: Option<String>,
    /// `name: Laying out IO file (1 file / 4096MiB)`: the size fio laid out, by job name.
    pub(super) laid_out: Vec<(String, u64)>,
    /// The group of the `Run status group N` summary being read.
    pub(super) summary_group: Option<u32>,
    /// Directions the group summaries show (`WRITE: bw=…`): group, kind, line.
    pub(super) summary_kinds: Vec<(u32, Ddir, usize)>,
    /// Direction lines that could not be read outside any job block: (line, text).
    pub(super) orphan_unreadable: Vec<(usize, String)>,
}

impl State {
    pub(super) fn line(&mut self, line: &TextLine<'_>) {
        let t = line.text.trim();
        if t.is_empty() {
            return;
        }
        let pct = self.pct.take();
        if let Some(rest) = t.strip_prefix('|') {
            if let Some(target) = pct {
                self.add_percentiles(target, rest);
                self.pct = Some(target);
            }
            self.last_line = line.no;
            return;
        }
        let recognised = self.dispatch(t, line.no);
        if recognised {
            self.seen_fio = true;
            self.last_line = line.no;
        } else if !self.seen_fio {
            self.noise_before += 1;
        }
    }

    /// Handles one line; false when it is not one of fio's.
    fn dispatch(&mut self, t: &str, no: usize) -> bool {
        let mut t = t;
        let mut line_host = None;
        if let Some((host, rest)) = host_tag(t) {
            if rest.is_empty() {
                self.close_block();
                self.host = Some(host.to_string());
                return true;
            }
            line_host = Some(host.to_string());
            t = rest;
        }
        if t.contains(": (groupid=") {
            let host = line_host.or_else(|| self.host.clone());
            return self.job_header(t, host, no);
        }
        if let Some(idx) = t.find(": Laying out IO file") {
            if let Some(size) = laid_out_size(&t[idx..]) {
                let name = t[..idx].trim().to_string();
                if !self.laid_out.iter().any(|(n, _)| *n == name) {
                    self.laid_out.push((name, size));
                }
            }
            return true;
        }
        if let Some(v) = t
            .strip_prefix("hostname=")
            .and_then(|r| value_of(r, "fio="))
            .map(|v| v.trim_start_matches("fio-"))
            && is_version(v)
        {
            if self.version.is_none() {
                self.version = Some(v.to_string());
            }
            return true;
        }
        if let Some(v) = t
            .strip_prefix("fio ")
            .and_then(|v| v.split_whitespace().next())
            && is_version(v)
            && t.split_whitespace().count() == 2
        {
            if self.version.is_none() {
                self.version = Some(v.to_string());
            }
            return true;
        }
        if t.contains(": (g=") && t.contains("rw=") {
            if let Some(p) = pre_header(t) {
                self.pre.push(p);
                return true;
            }
            return false;
        }
        let marker = marker(t);
        match marker {
            Some((Marker::Clones, _)) => {
                if t != "..." {
                    return false;
                }
                if let Some(p) = self.pre.last_mut() {
                    p.cloned = true;
                }
                return true;
            }
            Some((Marker::Starting, rest)) => {
                let Some(n) = leading_u64(rest).and_then(|n| u32::try_from(n).ok()) else {
                    return false;
                };
                self.started = Some(n);
                return true;
            }
            Some((Marker::Version, rest)) => {
                let Some(v) = rest.split_whitespace().next().filter(|v| is_version(v)) else {
                    return false;
                };
                if self.version.is_none() {
                    self.version = Some(v.to_string());
                }
                return true;
            }
            Some((Marker::FioMessage, rest)) => {
                if rest.contains("terminating on signal") {
                    self.interrupted = true;
                } else if rest.starts_with("pid=") || rest.contains("err=") {
                    self.errors.push(t.to_string());
                }
                return false;
            }
            Some((Marker::RunStatus, rest)) => {
                self.close_block();
                self.group_lines = true;
                self.summary_group =
                    leading_u64(rest.trim_start()).and_then(|g| u32::try_from(g).ok());
                if let Some(g) = self.summary_group
                    && !self.status_groups.contains(&g)
                {
                    self.status_groups.push(g);
                }
                return true;
            }
            Some((Marker::DiskStats, _)) => {
                self.close_block();
                self.summary_group = None;
                return true;
            }
            // an ETA line; `All clients:` without its `(groupid=`
            Some((Marker::Eta | Marker::AllClients, _)) => return false,
            _ => {}
        }
        if let Some(kind) = summary_kind(t) {
            if let Some(g) = self.summary_group {
                self.summary_kinds.push((g, kind, no));
            }
            return true;
        }
        if t.starts_with("3;fio-") || t.starts_with("2;") && t.matches(';').count() > 40 {
            self.extra_terse = true;
            return false;
        }
        let Some(b) = self.cur.as_mut() else {
            if direction_marker(t).is_some() {
                self.orphan_unreadable.push((no, t.to_string()));
            }
            return false;
        };
        if let Some((kind, dir)) = direction_line(t) {
            b.dirs.push(DdirLine { kind, ..dir });
            return true;
        }
        if let Some(kind) = direction_marker(t) {
            // fio's marker, figures that cannot be read: never dropped silently
            b.unreadable.push((kind, no, t.to_string()));
            return true;
        }
        let Some((marker, rest)) = marker else {
            return false;
        };
        match marker {
            Marker::Percentiles(_) => {
                let Some((kind, unit, rest)) = percentile_header(t) else {
                    return false;
                };
                let target = match kind {
                    LatKind::Sync => Some((None, kind, unit)),
                    _ => b.dirs.len().checked_sub(1).map(|i| (Some(i), kind, unit)),
                };
                if let Some(target) = target {
                    self.add_percentiles(target, rest);
                    self.pct = Some(target);
                }
            }
            Marker::Latency(kind) => {
                let Some((_, lat)) = latency_line(t) else {
                    // `lat (usec)   : 2=0.01%, …`: the distribution, nothing to take
                    return kind == LatKind::Lat;
                };
                match kind {
                    LatKind::Sync => b.sync = Some(lat),
                    _ => {
                        if let Some(d) = b.dirs.last_mut() {
                            let slot = match kind {
                                LatKind::Slat => &mut d.slat,
                                LatKind::Clat => &mut d.clat,
                                _ => &mut d.lat,
                            };
                            *slot = Some(lat);
                        }
                    }
                }
            }
            Marker::IopsSamples => {
                if let Some(d) = b.dirs.last_mut() {
                    d.samples = crate::fio::disk::samples_line(rest);
                }
            }
            Marker::Cpu => {
                b.usr = value_of(rest, "usr=").and_then(|v| parse_f64(v.trim_end_matches('%')));
                b.sys = value_of(rest, "sys=").and_then(|v| parse_f64(v.trim_end_matches('%')));
            }
            Marker::Issued => {
                if let Some(total) = value_of(t, "total=") {
                    b.issued = issued_totals(total, t);
                    b.issued_sync_column = t.starts_with("issued rwts");
                }
            }
            Marker::Depths => {
                b.depths = crate::fio::depth_shares(rest.split(','));
            }
            Marker::Skipped => {}
            // read before the block's lines
            _ => return false,
        }
        true
    }

    fn job_header(&mut self, t: &str, host: Option<String>, no: usize) -> bool {
        let Some(h) = header(t) else {
            return false;
        };
        self.close_block();
        let name = h.name;
        if name == "All clients" {
            self.host = None;
        }
        let name = match host {
            // per-host blocks of a client/server run are named as fio tags them
            Some(host) if name != "All clients" => format!("<{host}> {name}"),
            _ => name.to_string(),
        };
        self.cur = Some(Block {
            name,
            groupid: h.groupid,
            jobs: h.jobs,
            err: h.err,
            err_text: h.err_text,
            pid: h.pid,
            date: h.date,
            line: no,
            dirs: Vec::new(),
            usr: None,
            sys: None,
            issued: None,
            issued_sync_column: false,
            depths: None,
            sync: None,
            unreadable: Vec::new(),
        });
        true
    }

    /// Whether line `t` begins another fio run than the one read so far: once this run has
    /// job results, a run's own opening lines (the header printed before the run, the
    /// version, `Starting N processes`, the laying out of a file), a job block after the
    /// group summaries (fio prints every block before them), or a block of a job this run
    /// already has that is no clone of it (the same process again, or printed at another
    /// time: clones are printed together). Client/server output, whose hosts' lines
    /// interleave, is cut only where a block repeats.
    pub(super) fn begins_another_run(&self, t: &str) -> bool {
        if self.blocks.is_empty() && self.cur.is_none() {
            return false;
        }
        let mut t = t.trim();
        let mut host = self.host.clone();
        if let Some((tag, rest)) = host_tag(t) {
            host = Some(tag.to_string());
            t = rest;
        }
        if t.contains(": (groupid=") {
            let Some(h) = header(t) else {
                return false;
            };
            if self.group_lines && host.is_none() {
                return true;
            }
            let name = match &host {
                Some(host) if h.name != "All clients" => format!("<{host}> {}", h.name),
                _ => h.name.to_string(),
            };
            let at = h.date.as_deref().and_then(parse_ctime);
            let mut seen = self.printed.get(&(name.clone(), h.groupid)).cloned();
            if let Some(b) = self
                .cur
                .as_ref()
                .filter(|b| b.name == name && b.groupid == h.groupid)
            {
                let p = seen.get_or_insert_with(Printed::default);
                p.pids.extend(b.pid);
                if let Some(d) = b.date.as_deref().and_then(parse_ctime) {
                    p.first = Some(p.first.map_or(d, |f| f.min(d)));
                    p.last = Some(p.last.map_or(d, |l| l.max(d)));
                }
            }
            let Some(seen) = seen else {
                return false;
            };
            let same_process = h.pid.is_some_and(|p| seen.pids.contains(&p));
            let apart = match (at, seen.first, seen.last) {
                (Some(now), Some(first), Some(last)) => {
                    (now - first).num_seconds().abs() > CLONES_APART_S
                        || (now - last).num_seconds().abs() > CLONES_APART_S
                }
                _ => false,
            };
            return same_process || apart;
        }
        if host.is_some() {
            return false;
        }
        if t.contains(": (g=") && t.contains("rw=") {
            return pre_header(t).is_some();
        }
        if t.contains(": Laying out IO file") {
            return true;
        }
        if t.strip_prefix("fio ")
            .and_then(|v| v.split_whitespace().next())
            .is_some_and(is_version)
            && t.split_whitespace().count() == 2
        {
            return true;
        }
        match marker(t) {
            Some((Marker::Starting, rest)) => leading_u64(rest).is_some(),
            Some((Marker::Version, rest)) => rest.split_whitespace().next().is_some_and(is_version),
            _ => false,
        }
    }

    pub(super) fn close_block(&mut self) {
        self.pct = None;
        if let Some(b) = self.cur.take() {
            let p = self.printed.entry((b.name.clone(), b.groupid)).or_default();
            p.pids.extend(b.pid);
            if let Some(d) = b.date.as_deref().and_then(parse_ctime) {
                p.first = Some(p.first.map_or(d, |f| f.min(d)));
                p.last = Some(p.last.map_or(d, |l| l.max(d)));
            }
            self.blocks.push(b);
        }
    }

    fn add_percentiles(&mut self, target: (Option<usize>, LatKind, f64), text: &str) {
        let (dir, kind, unit) = target;
        let Some(b) = self.cur.as_mut() else { return };
        let slot = match (dir, kind) {
            (None, _) => &mut b.sync,
            (Some(i), k) => {
                let Some(d) = b.dirs.get_mut(i) else { return };
                match k {
                    LatKind::Slat => &mut d.slat,
                    LatKind::Lat => &mut d.lat,
                    _ => &mut d.clat,
                }
            }
        };
        let lat = slot.get_or_insert_with(Latency::default);
        lat.percentiles.extend(percentile_pairs(text, unit));
    }
}

/// fio prints the blocks of one run within a moment, clones included: blocks of one job
/// printed further apart than this are two runs.
const CLONES_APART_S: i64 = 2;

/// A job block's header: `name: (groupid=0, jobs=1): err= 0: pid=19150: Mon Nov 30 08:12:48
/// 2026`, or with fio's error `err= 5 (file:io_u.c:1787, func=io_u error, error=Input/output
/// error): pid=…`.
pub(super) struct Header<'a> {
    pub(super) name: &'a str,
    pub(super) groupid: u32,
    pub(super) jobs: u32,
    pub(super) err: i32,
    pub(super) err_text: Option<String>,
    pub(super) pid: Option<u32>,
    pub(super) date: Option<String>,
}

pub(super) fn header(t: &str) -> Option<Header<'_>> {
    let idx = t.find(": (groupid=")?;
    let rest = &t[idx + ": (groupid=".len()..];
    let groupid = leading_u64(rest).and_then(|g| u32::try_from(g).ok())?;
    let jobs = value_of(rest, "jobs=")
        .and_then(leading_u64)
        .and_then(|j| u32::try_from(j).ok())
        .unwrap_or(1);
    let err = rest
        .find("err=")
        .map(|i| rest[i + 4..].trim_start())
        .and_then(|s| {
            let neg = s.starts_with('-');
            let n = leading_u64(s.trim_start_matches('-'))?;
            let n = i32::try_from(n).ok()?;
            Some(if neg { -n } else { n })
        })
        .unwrap_or(0);
    // fio's words, inside the parentheses after the number: `…, error=Input/output error)`
    let err_text = rest.find("err=").and_then(|i| {
        let after = &rest[i..];
        let end = after.find("): pid=").or_else(|| after.find(')'))?;
        let inside = &after[..end];
        let words = inside.rsplit_once("error=").map(|(_, w)| w.trim())?;
        (!words.is_empty()).then(|| words.to_string())
    });
    let pid_at = rest.find("pid=");
    let pid = pid_at
        .and_then(|i| leading_u64(&rest[i + 4..]))
        .and_then(|p| u32::try_from(p).ok());
    let date = pid_at.and_then(|i| {
        let after = &rest[i + 4..];
        let after = after.trim_start_matches(|c: char| c.is_ascii_digit());
        let d = after.trim_start_matches(':').trim();
        (!d.is_empty()).then(|| d.to_string())
    });
    Some(Header {
        name: t[..idx].trim(),
        groupid,
        jobs,
        err,
        err_text,
        pid,
        date,
    })
}
