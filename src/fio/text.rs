//! fio's normal (human-readable) output: the old layout (fio ≤ 2.16, `write: io=…, bw=…,
//! iops=…, runt=…`) and the new one (fio ≥ 2.17, `write: IOPS=…, BW=… (…)(…/…msec)`), with the
//! noise customers paste around it, and text that lost its line breaks on the way.
//!
//! Text as customers paste it is read as fio wrote it: lines wrapped by mail clients, forums or
//! terminals (at spaces or at a fixed column) are joined again, quote marks dropped, and fio's
//! client/server text (`<host>` tags, `All clients:`, units without `B/s`) read per host. A
//! result line whose figures cannot be read is never dropped silently. What the text proves
//! about the job (size, numjobs, end fsync by fio version) is in docs/fio-text.md.
//!
//! Every figure here is one fio printed, rounded to 3–4 significant digits: bandwidth is
//! [`BwBasis::Printed`]. The I/O count comes from the `issued` line when there is one (exact),
//! otherwise it is estimated as IOPS × runtime.

use chrono::{DateTime, FixedOffset, Local, NaiveDate, NaiveDateTime, NaiveTime, TimeZone};

use super::num::{Base, Quantity, parse_bytes, parse_count, parse_rate, version_tuple};
use super::{FioJob, FioOutput, Format, ParseError, choose_bs};
use crate::job::{IoEngine, JobShape, Rw};
use crate::measure::{BwBasis, Direction, Latency, Measurement};

/// A line of the (re-split) text with the line number it came from.
struct Line<'a> {
    text: &'a str,
    no: usize,
}

/// Reads a normal-format output. `Ok(None)`: no fio job block in the text.
pub(super) fn parse(text: &str) -> Result<Option<FioOutput>, ParseError> {
    let (physical, _rejoined) = rejoin(text);
    let (lines, resplit) = split_lines(&physical);
    let mut st = State::default();
    for line in &lines {
        st.line(line);
    }
    st.close_block();
    if st.blocks.is_empty() {
        if let Some((no, text)) = st.orphan_unreadable.first() {
            return Err(ParseError::Unreadable(format!(
                "line {no}: a result line that could not be read, and no job block: '{}'",
                shorten(text)
            )));
        }
        return Ok(None);
    }
    if let Some(b) = st.blocks.last()
        && b.dirs.is_empty()
        && b.unreadable.is_empty()
        && b.err == 0
    {
        return Err(ParseError::Truncated(format!(
            "job '{}' has a header but no results: the output is cut after line {}",
            b.name, st.last_line
        )));
    }
    let mut notes = Vec::new();
    if st.noise_before > 0 {
        notes.push(format!(
            "skipped {} line{} of noise before the output",
            st.noise_before,
            if st.noise_before == 1 { "" } else { "s" }
        ));
    }
    if resplit {
        notes.push("the text had lost line breaks; it was re-split on fio's markers (a job name containing spaces may keep only its last word)".into());
    }
    st.finish(notes).map(Some)
}

// ---------------------------------------------------------------------------------------------
// Re-splitting

/// Splits into lines and re-splits lines that hold several of fio's lines (text copied from a
/// web page or a ticket). Returns whether anything was re-split.
fn split_lines(physical: &[(String, usize)]) -> (Vec<Line<'_>>, bool) {
    let mut out = Vec::new();
    let mut resplit = false;
    for (raw, no) in physical {
        let raw = raw.as_str();
        let no = *no;
        let points = split_points(raw);
        if points.is_empty() {
            out.push(Line { text: raw, no });
            continue;
        }
        // ETA lines glued together (no newline between `Jobs:` updates) are not worth a note.
        resplit |= points.iter().any(|&p| !raw[p..].starts_with("Jobs: "));
        let mut from = 0;
        for p in points {
            out.push(Line {
                text: &raw[from..p],
                no,
            });
            from = p;
        }
        out.push(Line {
            text: &raw[from..],
            no,
        });
    }
    (out, resplit)
}

// ---------------------------------------------------------------------------------------------
// Re-joining

/// The text's lines as fio wrote them: a line that a mail client, a forum or a terminal wrapped
/// at a fixed width (`write: IOPS=7667, BW=29.0MiB/s` / `(31.4MB/s)(1026MiB/34256msec)`, a
/// header's `iodepth=1` or a date's year on the next line) is joined to the line it continues.
/// Each line keeps the number of the line it started on. Returns whether anything was joined.
///
/// A continuation is a non-blank line that does not begin one of fio's lines, following a
/// line of fio's output at least [`MIN_WRAPPED`] characters long. Where most wrapped lines
/// have exactly the same length, the wrap cut at a fixed column (possibly inside a figure), and
/// those are joined as they were cut; otherwise the wrap was at a space, and one space joins
/// them.
fn rejoin(text: &str) -> (Vec<(String, usize)>, bool) {
    let mut physical: Vec<(&str, usize)> = Vec::new();
    for (i, l) in text.split('\n').enumerate() {
        let l = l.strip_suffix('\r').unwrap_or(l);
        // \r inside a line: ETA updates written to a terminal
        for part in l.split('\r') {
            physical.push((part, i + 1));
        }
    }
    // Which lines continue the one before.
    let mut cont = vec![false; physical.len()];
    let mut in_output = false;
    for i in 0..physical.len() {
        let t = physical[i].0.trim();
        if t.is_empty() {
            continue;
        }
        if begins_line(t) {
            in_output = true;
            continue;
        }
        if in_output && i > 0 {
            let prev = physical[i - 1].0;
            if !prev.trim().is_empty()
                && (prev.trim_end().chars().count() >= MIN_WRAPPED || incomplete(prev.trim()))
            {
                cont[i] = true;
            }
        }
    }
    if !cont.iter().any(|&c| c) {
        return (
            physical
                .into_iter()
                .map(|(l, n)| (l.to_string(), n))
                .collect(),
            false,
        );
    }
    // The wrap width: the most common length of a wrapped line, when most share it.
    let mut lengths: Vec<usize> = Vec::new();
    for i in 0..physical.len() {
        if cont[i] {
            lengths.push(physical[i - 1].0.chars().count());
        }
    }
    let mut counts: std::collections::BTreeMap<usize, usize> = Default::default();
    for &l in &lengths {
        *counts.entry(l).or_default() += 1;
    }
    let (width, n) = counts
        .iter()
        .max_by_key(|(l, n)| (**n, **l))
        .map(|(l, n)| (*l, *n))
        .unwrap_or((0, 0));
    let fixed = n >= 2 && n * 10 >= lengths.len() * 8;
    // One wrapped line only: it was cut at a column when it is the text's longest and the cut
    // falls inside a `key=value` (a space there would split a figure).
    let longest = physical
        .iter()
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(0);
    let inside_value = |prev: &str, next: &str| {
        let last = prev.rsplit(' ').next().unwrap_or("");
        let first = next.split([' ', ',']).next().unwrap_or("");
        let word = |c: char| c.is_ascii_alphanumeric() || c == '.';
        let open = !last.is_empty() && !last.ends_with([',', ':', ')', ']', ';']);
        // `iodepth` / `=1`, `iodepth=` / `1`
        next.starts_with('=') || last.ends_with('=')
            // `ioengine=posix` / `aio,`
            || (open && last.contains('=') && next.starts_with(word))
            // `…, iodep` / `th=1`
            || (open
                && last.chars().all(|c| c.is_ascii_alphabetic() || c == '_')
                && prev.trim_end_matches(last).ends_with(", ")
                && first.contains('=')
                && first.starts_with(|c: char| c.is_ascii_alphabetic()))
    };
    let mut out: Vec<(String, usize)> = Vec::new();
    for (i, (l, no)) in physical.iter().enumerate() {
        if cont[i]
            && let Some(last) = out.last_mut()
        {
            // the length of the physical line just before, not of what was joined so far
            let prev = physical[i - 1].0;
            let len = prev.chars().count();
            let cut_at_column = if fixed {
                len == width
            } else {
                len == longest && inside_value(prev, l)
            };
            if cut_at_column {
                last.0.push_str(l);
            } else {
                let kept = last.0.trim_end().len();
                last.0.truncate(kept);
                last.0.push(' ');
                last.0.push_str(l.trim_start());
            }
            continue;
        }
        out.push((l.to_string(), *no));
    }
    (out, true)
}

/// Lines shorter than this are never taken as wrapped: wraps happen at 60 columns or more.
const MIN_WRAPPED: usize = 40;

/// A line of fio's that cannot be whole: a direction line whose figures do not read, a job's
/// header line without its `iodepth=`.
fn incomplete(t: &str) -> bool {
    let t = host_tag(t).map_or(t, |(_, r)| r);
    (direction_marker(t).is_some() && direction_line(t).is_none())
        || (t.contains(": (g=") && !t.contains("iodepth="))
}

/// Does a (trimmed) line begin one of fio's lines, so that it cannot continue the one before?
fn begins_line(t: &str) -> bool {
    if t.starts_with('|') || starts_marker(t) {
        return true;
    }
    if host_tag(t).is_some() {
        return true;
    }
    if t.starts_with("fio ") && t[4..].split_whitespace().next().is_some_and(is_version) {
        return true;
    }
    if t.starts_with("note:") || t.starts_with("hostname=") || t.starts_with("Jobs:") {
        return true;
    }
    [": (groupid=", ": (g=", ": Laying out IO file", ": ios="]
        .iter()
        .any(|p| t.contains(p))
}

/// A client/server output's host tag at a line's start: `<host> rest` or `<host>` alone.
/// Returns the host and the rest of the line.
fn host_tag(t: &str) -> Option<(&str, &str)> {
    let rest = t.strip_prefix('<')?;
    let close = rest.find('>')?;
    let host = &rest[..close];
    if host.is_empty()
        || host.len() > 255
        || !host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b':'))
    {
        return None;
    }
    let after = &rest[close + 1..];
    if !(after.is_empty() || after.starts_with(' ')) {
        return None;
    }
    Some((host, after.trim_start()))
}

/// Where a line holding several fio lines should be cut (byte offsets, ascending, none at the
/// line's start). A well-formed line holds one marker at most, at its start, so it is never
/// cut; a lone `name: (groupid=…` marker after other text is not cut either (the name may
/// contain spaces).
fn split_points(line: &str) -> Vec<usize> {
    let mut start = line.len() - line.trim_start().len();
    // a client/server host tag belongs to the line it starts
    if let Some((_, rest)) = host_tag(line.trim()) {
        start = line.len() - line.trim_start().len() + (line.trim().len() - rest.len());
    }
    if line.len() - start < 8 {
        return Vec::new();
    }
    let mut plain = Vec::new();
    let mut named = Vec::new();
    let bytes = line.as_bytes();
    for (i, _) in line.char_indices() {
        if i > 0 && !bytes[i - 1].is_ascii_whitespace() {
            continue;
        }
        if bytes[i].is_ascii_whitespace() {
            continue;
        }
        if starts_marker(&line[i..]) {
            plain.push(i);
        }
    }
    for pat in [": (groupid=", ": (g=", ": Laying out IO file", ": ios="] {
        let mut from = 0;
        while let Some(off) = line[from..].find(pat) {
            let at = from + off;
            // the name is the token before the marker (a bounded look back keeps a
            // pathological line linear)
            let mut s = at;
            while s > 0 && at - s < 512 && !bytes[s - 1].is_ascii_whitespace() {
                s -= 1;
            }
            // `All clients: (groupid=…`: the name has a space
            if pat == ": (groupid=" && line[..s].ends_with("All ") {
                s -= 4;
            }
            if s == 0 || bytes[s - 1].is_ascii_whitespace() {
                named.push(s);
            }
            from = at + pat.len();
        }
    }
    let mut all: Vec<usize> = plain.iter().chain(named.iter()).copied().collect();
    all.sort_unstable();
    all.dedup();
    let inner: Vec<usize> = all.iter().copied().filter(|&p| p > start).collect();
    let plain_inner = plain.iter().any(|&p| p > start);
    if all.len() >= 2 || plain_inner {
        inner
    } else {
        Vec::new()
    }
}

/// Does `s` (at a token start) begin one of fio's lines?
fn starts_marker(s: &str) -> bool {
    const PREFIXES: [&str; 19] = [
        "slat (",
        "clat (",
        "lat (",
        "sync (",
        "clat percentiles",
        "lat percentiles",
        "slat percentiles",
        "sync percentiles",
        "clat prio",
        "lat prio",
        "bw (",
        "IO depths",
        "Run status group",
        "Disk stats",
        "fio: ",
        "fsync/fdatasync",
        "issued rwt",
        "issued r/w",
        "All clients:",
    ];
    if PREFIXES.iter().any(|p| s.starts_with(p)) {
        return true;
    }
    for word in ["read", "write", "trim", "mixed"] {
        if let Some(rest) = s.strip_prefix(word)
            && let Some(rest) = rest.trim_start_matches(' ').strip_prefix(':')
        {
            let rest = rest.trim_start();
            if rest.starts_with("IOPS=") || rest.starts_with("io=") {
                return true;
            }
        }
    }
    for word in ["READ:", "WRITE:", "MIXED:", "TRIM:"] {
        if let Some(rest) = s.strip_prefix(word) {
            let rest = rest.trim_start();
            if rest.starts_with("bw=") || rest.starts_with("io=") {
                return true;
            }
        }
    }
    for word in ["iops", "cpu", "submit", "complete", "latency", "issued"] {
        if let Some(rest) = s.strip_prefix(word)
            && rest.trim_start_matches(' ').starts_with(':')
        {
            return true;
        }
    }
    let digit_after = |p: &str| {
        s.strip_prefix(p)
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
    };
    if digit_after("Jobs: ") || digit_after("Starting ") || digit_after("fio-") {
        return true;
    }
    s == "..." || s.starts_with("... ")
}

// ---------------------------------------------------------------------------------------------
// Line parsing

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Read,
    Write,
    Trim,
    Mixed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LatKind {
    Slat,
    Clat,
    Lat,
    Sync,
}

/// The line fio prints before the run: `name: (g=0): rw=randwrite, bs=(R) 4096B-4096B, …,
/// ioengine=posixaio, iodepth=1`, followed by `...` when the job has clones.
#[derive(Debug, Default)]
struct PreHeader {
    name: String,
    group: u32,
    rw: Option<Rw>,
    bs: Option<u64>,
    ioengine: Option<String>,
    iodepth: Option<u32>,
    cloned: bool,
}

#[derive(Debug, Clone)]
struct Dir {
    kind: Kind,
    iops: f64,
    bw_bytes: f64,
    /// The decimal figure, bytes per second.
    bw_decimal: Option<f64>,
    bytes: f64,
    runtime_ms: u64,
    old_layout: bool,
    /// IOPS printed as a plain integer: fio's integer division truncated it.
    iops_truncated: bool,
    fraction: bool,
    mismatch: Option<String>,
    slat: Option<Latency>,
    clat: Option<Latency>,
    lat: Option<Latency>,
    /// `iops : min=…, max=…, avg=…, stdev=…, samples=…`
    samples: Option<crate::measure::IopsSamples>,
}

#[derive(Debug)]
struct Block {
    name: String,
    groupid: u32,
    jobs: u32,
    err: i32,
    date: Option<String>,
    dirs: Vec<Dir>,
    usr: Option<f64>,
    sys: Option<f64>,
    /// `issued` totals: read, write, trim, sync.
    issued: Option<[u64; 4]>,
    /// Whether the `issued` line has the sync column (`issued rwts:`, fio ≥ 3.4).
    issued_sync_column: bool,
    sync: Option<Latency>,
    /// Direction lines of this block that could not be read: kind, line, text.
    unreadable: Vec<(Kind, usize, String)>,
}

#[derive(Default)]
struct State {
    pre: Vec<PreHeader>,
    started: Option<u32>,
    version: Option<String>,
    blocks: Vec<Block>,
    cur: Option<Block>,
    /// Where percentile rows (`| 1.00th=[…]`) go: (direction index or None for sync, kind,
    /// unit in ns).
    pct: Option<(Option<usize>, LatKind, f64)>,
    seen_fio: bool,
    noise_before: usize,
    last_line: usize,
    errors: Vec<String>,
    interrupted: bool,
    group_lines: bool,
    extra_terse: bool,
    /// Client/server output: the host whose blocks follow (`<host>` on a line of its own, or
    /// before a job header).
    host: Option<String>,
    /// `name: Laying out IO file (1 file / 4096MiB)`: the size fio laid out, by job name.
    laid_out: Vec<(String, u64)>,
    /// The group of the `Run status group N` summary being read.
    summary_group: Option<u32>,
    /// Directions the group summaries show (`WRITE: bw=…`): group, kind, line.
    summary_kinds: Vec<(u32, Kind, usize)>,
    /// Direction lines that could not be read outside any job block: (line, text).
    orphan_unreadable: Vec<(usize, String)>,
}

impl State {
    fn line(&mut self, line: &Line<'_>) {
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
            return self.job_header(t, host);
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
        if t == "..." {
            if let Some(p) = self.pre.last_mut() {
                p.cloned = true;
            }
            return true;
        }
        if let Some(n) = t
            .strip_prefix("Starting ")
            .and_then(leading_u64)
            .and_then(|n| u32::try_from(n).ok())
        {
            self.started = Some(n);
            return true;
        }
        if let Some(v) = t
            .strip_prefix("fio-")
            .and_then(|v| v.split_whitespace().next())
            && is_version(v)
        {
            if self.version.is_none() {
                self.version = Some(v.to_string());
            }
            return true;
        }
        if let Some(rest) = t.strip_prefix("fio: ") {
            if rest.contains("terminating on signal") {
                self.interrupted = true;
            } else if rest.starts_with("pid=") || rest.contains("err=") {
                self.errors.push(t.to_string());
            }
            return false;
        }
        if let Some(rest) = t.strip_prefix("Run status group") {
            self.close_block();
            self.group_lines = true;
            self.summary_group = leading_u64(rest.trim_start()).and_then(|g| u32::try_from(g).ok());
            return true;
        }
        if t.starts_with("Disk stats") {
            self.close_block();
            self.summary_group = None;
            return true;
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
        if self.cur.is_none() {
            if direction_marker(t).is_some() {
                self.orphan_unreadable.push((no, t.to_string()));
            }
            return false;
        }
        if let Some((kind, dir)) = direction_line(t) {
            let b = self.cur.as_mut().expect("checked above");
            b.dirs.push(Dir { kind, ..dir });
            return true;
        }
        if let Some(kind) = direction_marker(t) {
            // fio's marker, figures that cannot be read: never dropped silently
            let b = self.cur.as_mut().expect("checked above");
            b.unreadable.push((kind, no, t.to_string()));
            return true;
        }
        if let Some((kind, unit, rest)) = percentile_header(t) {
            let target = match kind {
                LatKind::Sync => Some((None, kind, unit)),
                _ => self
                    .cur
                    .as_ref()
                    .and_then(|b| b.dirs.len().checked_sub(1))
                    .map(|i| (Some(i), kind, unit)),
            };
            if let Some(target) = target {
                self.add_percentiles(target, rest);
                self.pct = Some(target);
            }
            return true;
        }
        if let Some((kind, lat)) = latency_line(t) {
            let b = self.cur.as_mut().expect("checked above");
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
            return true;
        }
        if let Some(rest) = word_colon(t, "iops") {
            if let Some(d) = self.cur.as_mut().and_then(|b| b.dirs.last_mut()) {
                d.samples = super::disk::samples_line(rest);
            }
            return true;
        }
        if let Some(rest) = word_colon(t, "cpu") {
            let b = self.cur.as_mut().expect("checked above");
            b.usr = value_of(rest, "usr=").and_then(|v| parse_f64(v.trim_end_matches('%')));
            b.sys = value_of(rest, "sys=").and_then(|v| parse_f64(v.trim_end_matches('%')));
            return true;
        }
        if t.starts_with("issued") {
            if let Some(total) = value_of(t, "total=") {
                let b = self.cur.as_mut().expect("checked above");
                b.issued = issued_totals(total, t);
                b.issued_sync_column = t.starts_with("issued rwts");
            }
            return true;
        }
        // The rest of a job block (bw/iops sample lines, lat distribution, IO depths…) is
        // fio's but carries nothing the measurement needs.
        let known = [
            "bw (",
            "iops",
            "lat (",
            "IO depths",
            "submit",
            "complete",
            "latency",
            "fsync/fdatasync",
            "clat prio",
            "lat prio",
        ];
        known.iter().any(|k| t.starts_with(k))
    }

    fn job_header(&mut self, t: &str, host: Option<String>) -> bool {
        let Some(idx) = t.find(": (groupid=") else {
            return false;
        };
        let rest = &t[idx + ": (groupid=".len()..];
        let Some(groupid) = leading_u64(rest).and_then(|g| u32::try_from(g).ok()) else {
            return false;
        };
        self.close_block();
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
        let date = rest.find("pid=").and_then(|i| {
            let after = &rest[i + 4..];
            let after = after.trim_start_matches(|c: char| c.is_ascii_digit());
            let d = after.trim_start_matches(':').trim();
            (!d.is_empty()).then(|| d.to_string())
        });
        let name = t[..idx].trim();
        if name == "All clients" {
            self.host = None;
        }
        let name = match host {
            // per-host blocks of a client/server run are named as fio tags them
            Some(h) if name != "All clients" => format!("<{h}> {name}"),
            _ => name.to_string(),
        };
        self.cur = Some(Block {
            name,
            groupid,
            jobs,
            err,
            date,
            dirs: Vec::new(),
            usr: None,
            sys: None,
            issued: None,
            issued_sync_column: false,
            sync: None,
            unreadable: Vec::new(),
        });
        true
    }

    fn close_block(&mut self) {
        self.pct = None;
        if let Some(b) = self.cur.take() {
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

    fn finish(self, mut notes: Vec<String>) -> Result<FioOutput, ParseError> {
        // Direction markers whose figures could not be read: an error when nothing else could
        // be read, else a warning naming each.
        let readable = self.blocks.iter().any(|b| !b.dirs.is_empty());
        let mut unreadable: Vec<String> = Vec::new();
        for b in &self.blocks {
            for (kind, no, text) in &b.unreadable {
                let read = b.dirs.iter().any(|d| d.kind == *kind);
                let consequence = if read {
                    "another one was read".to_string()
                } else {
                    format!("its {} figures are missing", kind.word())
                };
                unreadable.push(format!(
                    "line {no}: job '{}' has a {} line whose figures could not be read ({consequence}): '{}'",
                    b.name,
                    kind.word(),
                    shorten(text)
                ));
            }
        }
        for (no, text) in &self.orphan_unreadable {
            unreadable.push(format!(
                "line {no}: a result line outside any job block could not be read: '{}'",
                shorten(text)
            ));
        }
        if !readable && let Some(first) = unreadable.first() {
            return Err(ParseError::Unreadable(first.clone()));
        }
        notes.extend(unreadable);
        for (g, kind, no) in &self.summary_kinds {
            let in_group = |b: &&Block| b.groupid == *g;
            let blocks: Vec<&Block> = self.blocks.iter().filter(in_group).collect();
            if !blocks.is_empty()
                && !blocks
                    .iter()
                    .any(|b| b.dirs.iter().any(|d| d.kind == *kind) || !b.unreadable.is_empty())
            {
                notes.push(format!(
                    "line {no}: group {g}'s summary shows {} figures, but no job block of the group has a {} line that was read: they are missing",
                    kind.word().to_uppercase(),
                    kind.word()
                ));
            }
        }
        let single_pre = self.pre.len() == 1;
        let mut timestamp = None;
        let mut zone_note = None;
        let mut estimated = false;
        let mut fraction = false;
        let mut old_layout = false;
        let mut jobs = Vec::new();
        let version = self.version.as_deref().and_then(version_tuple);
        let same_name = |name: &str| self.blocks.iter().filter(|b| b.name == name).count();
        for b in &self.blocks {
            let base = host_tag(&b.name).map_or(b.name.as_str(), |(_, r)| r);
            let pre = self
                .pre
                .iter()
                .find(|p| p.name == base && p.group == b.groupid)
                .or_else(|| self.pre.iter().find(|p| p.name == base));
            let numjobs = if b.jobs > 1 {
                Some(b.jobs)
            } else {
                match pre {
                    Some(p) if !p.cloned => Some(1),
                    Some(_) if single_pre => self.started,
                    Some(_) => None,
                    // no header line and no "Starting" line: the block's own `jobs=1`, when
                    // no other block has its name (numjobs clones without group_reporting
                    // print one block each) and the output is not cut
                    None if self.started.is_none()
                        && self.group_lines
                        && same_name(&b.name) == 1 =>
                    {
                        Some(1)
                    }
                    None => None,
                }
            };
            // group_reporting over several job definitions: no one shape
            let definitions = group_definitions(&self.pre, b.groupid);
            let mixed = (b.jobs > 1 && definitions.len() > 1).then(|| {
                format!(
                    "group_reporting over {} job definitions ({}): its figures mix them",
                    definitions.len(),
                    definitions.join("; ")
                )
            });
            let mut shape = JobShape {
                rw: pre.and_then(|p| p.rw),
                bs: pre.and_then(|p| p.bs),
                ioengine: pre.and_then(|p| p.ioengine.clone()),
                iodepth: pre.and_then(|p| p.iodepth),
                numjobs,
                size: self
                    .laid_out
                    .iter()
                    .find(|(n, _)| n == base)
                    .map(|(_, s)| *s),
                ..JobShape::default()
            };
            if mixed.is_some() {
                let group: Vec<&PreHeader> =
                    self.pre.iter().filter(|p| p.group == b.groupid).collect();
                let all_same =
                    |f: &dyn Fn(&PreHeader) -> String| group.windows(2).all(|w| f(w[0]) == f(w[1]));
                if !all_same(&|p| format!("{:?}", p.rw)) {
                    shape.rw = None;
                }
                if !all_same(&|p| format!("{:?}", p.bs)) {
                    shape.bs = None;
                }
                if !all_same(&|p| format!("{:?}", p.ioengine)) {
                    shape.ioengine = None;
                }
                if !all_same(&|p| format!("{:?}", p.iodepth)) {
                    shape.iodepth = None;
                }
                if !all_same(&|p| format!("{:?}", self.laid_out.iter().find(|(n, _)| *n == p.name)))
                {
                    shape.size = None;
                }
            }
            shape.end_fsync = end_fsync_from_issued(version, b, &shape);
            if timestamp.is_none()
                && let Some(d) = &b.date
                && let Some(naive) = parse_ctime(d)
            {
                let local = local_time(naive);
                zone_note = Some(format!(
                    "the text's date '{}' has no time zone; it was read as this machine's local time (UTC{})",
                    d.split_whitespace().take(5).collect::<Vec<_>>().join(" "),
                    local.format("%:z")
                ));
                timestamp = Some(local);
            }
            let mut m = Measurement {
                bs: shape.bs,
                cpu_usr_pct: b.usr,
                cpu_sys_pct: b.sys,
                sync: b.sync.clone().map(|mut s| {
                    s.n = b.issued.map_or(0, |i| i[3]);
                    s.percentiles.sort_by(|a, c| a.0.total_cmp(&c.0));
                    s
                }),
                ..Measurement::default()
            };
            for d in b.dirs.clone() {
                fraction |= d.fraction;
                old_layout |= d.old_layout;
                if let Some(msg) = &d.mismatch {
                    notes.push(format!("job '{}': {msg}", b.name));
                }
                let issued = b.issued.map(|i| match d.kind {
                    Kind::Read => i[0],
                    Kind::Write => i[1],
                    Kind::Trim => i[2],
                    Kind::Mixed => i[..3].iter().fold(0u64, |a, &x| a.saturating_add(x)),
                });
                estimated |= issued.is_none();
                let kind = d.kind;
                let dir = into_direction(d, issued);
                match kind {
                    Kind::Read => m.read = Some(dir),
                    Kind::Write => m.write = Some(dir),
                    Kind::Trim => {}
                    Kind::Mixed => match shape.rw {
                        Some(rw) if rw.writes() && !rw.reads() => m.write = Some(dir),
                        Some(rw) if rw.reads() && !rw.writes() => m.read = Some(dir),
                        _ => notes.push(format!(
                            "job '{}': unified_rw_reporting mixes reads and writes into one figure; it was not used",
                            b.name
                        )),
                    },
                }
            }
            jobs.push(FioJob {
                name: b.name.clone(),
                groupid: b.groupid,
                shape,
                measurement: m,
                error: b.err,
                mixed,
            });
        }

        notes.push(format!(
            "text output: bandwidth and IOPS are the figures fio printed (3–4 significant digits); I/O counts {}",
            if estimated {
                "are estimated as IOPS × runtime where fio printed no 'issued' line"
            } else {
                "come from fio's 'issued' lines"
            }
        ));
        let before_2_20 = match self.version.as_deref().and_then(version_tuple) {
            Some(v) => v < (2, 20),
            None => old_layout,
        };
        if fraction && before_2_20 {
            notes.push(
                "fio before 2.20 printed fractions with an unreliable last digit (e.g. 35.1GiB/s for 35.9); treat decimals in this output with care".into(),
            );
        }
        if let Some(z) = zone_note {
            notes.push(z);
        }
        if self.interrupted {
            notes.push("interrupted run (fio: terminating on signal): the figures cover the time until the interruption".into());
        }
        if let Some(first) = self.errors.first() {
            notes.push(format!(
                "fio reported {} error line{} before the results, e.g. '{first}'",
                self.errors.len(),
                if self.errors.len() == 1 { "" } else { "s" }
            ));
        }
        if !self.group_lines {
            notes.push(
                "no 'Run status group' summary: the output may be cut after the job results".into(),
            );
        }
        if self.extra_terse {
            notes.push("terse lines in the same output were ignored".into());
        }
        Ok(FioOutput {
            format: Format::Text,
            fio_version: self.version,
            timestamp,
            jobs,
            notes,
        })
    }
}

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::Read => "read",
            Kind::Write => "write",
            Kind::Trim => "trim",
            Kind::Mixed => "mixed",
        }
    }
}

/// A line of the input shown in a message: at most 120 characters.
fn shorten(t: &str) -> String {
    if t.chars().count() <= 120 {
        t.to_string()
    } else {
        format!("{}…", t.chars().take(119).collect::<String>())
    }
}

/// The job definitions (`rw bs engine depth`) that the header lines give a group, distinct.
fn group_definitions(pre: &[PreHeader], group: u32) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in pre.iter().filter(|p| p.group == group) {
        let d = format!(
            "{} {} {} iodepth={}",
            p.rw.map_or("rw=?".to_string(), |r| r.to_string()),
            p.bs.map_or("bs=?".to_string(), crate::units::format_size_fio),
            p.ioengine.as_deref().unwrap_or("engine=?"),
            p.iodepth.map_or("?".to_string(), |d| d.to_string())
        );
        if !out.contains(&d) {
            out.push(d);
        }
    }
    out
}

/// What the `issued rwts:` sync count proves about `end_fsync` (docs/fio-end-fsync.md).
///
/// fio 3.4 (commit 7f3ecee2, "Track fsync/fdatasync/sync_file_range issue count") added the
/// sync column and counted every sync it queued, the end fsync included; fio 3.17 (commit
/// 00615bfb, "backend: fix final fsync behaviour") stopped counting the syncs issued while the
/// job is in its final `TD_FSYNCING` state. So in fio 3.4–3.16, for a job that writes and ended
/// without error, a count of 0 proves there was no end fsync, and a count of 1 to `jobs` (one
/// per job's file) proves one; a larger count also holds periodic fsyncs and proves nothing.
/// Before 3.4 (no sync column) and from 3.17 on, the count cannot tell: None.
fn end_fsync_from_issued(version: Option<(u32, u32)>, b: &Block, shape: &JobShape) -> Option<bool> {
    let v = version?;
    if !((3, 4)..(3, 17)).contains(&v) || !b.issued_sync_column || b.err != 0 {
        return None;
    }
    let writes = match shape.rw {
        Some(rw) => rw.writes(),
        None => b.dirs.iter().any(|d| d.kind == Kind::Write),
    };
    let issued = b.issued?;
    if !writes || issued[1] == 0 {
        return None;
    }
    match issued[3] {
        0 => Some(false),
        n if n <= u64::from(b.jobs.max(1)) => Some(true),
        _ => None,
    }
}

/// `: Laying out IO file (1 file / 4096MiB)` (fio ≥ 3.0, `… files / total 8192MiB` for several)
/// or `: Laying out IO file(s) (1 file(s) / 4096MB)` (fio ≤ 2.16, where MB meant MiB): the
/// bytes laid out, which fio computes as the files' size shifted right by 20 and prints in MiB.
fn laid_out_size(t: &str) -> Option<u64> {
    let after = &t[t.find('/')? + 1..];
    let after = after.trim_start();
    let after = after.strip_prefix("total ").unwrap_or(after).trim_start();
    let end = after.find(|c: char| !c.is_ascii_digit())?;
    let n: u64 = after[..end].parse().ok()?;
    let unit = after[end..].trim_start();
    if unit.starts_with("MiB") || unit.starts_with("MB") {
        n.checked_mul(1 << 20)
    } else {
        None
    }
}

/// `WRITE: bw=…` (a group summary) → its direction.
fn summary_kind(t: &str) -> Option<Kind> {
    [
        ("READ:", Kind::Read),
        ("WRITE:", Kind::Write),
        ("TRIM:", Kind::Trim),
        ("MIXED:", Kind::Mixed),
    ]
    .into_iter()
    .find_map(|(w, k)| {
        let rest = t.strip_prefix(w)?.trim_start();
        (rest.starts_with("bw=") || rest.starts_with("io=")).then_some(k)
    })
}

/// `write:` / `read :` at a line's start, followed by something fio would print (a figure's
/// key): a direction line, whether or not its figures can be read.
fn direction_marker(t: &str) -> Option<Kind> {
    [
        ("read", Kind::Read),
        ("write", Kind::Write),
        ("trim", Kind::Trim),
        ("mixed", Kind::Mixed),
    ]
    .into_iter()
    .find_map(|(w, k)| {
        let rest = word_colon(t, w)?.trim_start();
        let key = ["IOPS", "io=", "iops", "bw=", "BW"];
        key.iter().any(|p| rest.starts_with(p)).then_some(k)
    })
}

fn into_direction(d: Dir, issued: Option<u64>) -> Direction {
    // Without an `issued` line: a truncated IOPS of N means N to N + 1, so the middle.
    let half = if d.iops_truncated { 0.5 } else { 0.0 };
    let ios = issued
        .filter(|&n| n > 0)
        .unwrap_or_else(|| ((d.iops + half) * d.runtime_ms as f64 / 1000.0).round() as u64);
    let with_n = |l: Option<Latency>| {
        l.map(|mut l| {
            l.n = ios;
            l.percentiles.sort_by(|a, b| a.0.total_cmp(&b.0));
            l
        })
    };
    Direction {
        ios,
        bytes: d.bytes.round() as u64,
        runtime_ms: d.runtime_ms,
        iops: d.iops,
        bw_bytes: d.bw_bytes,
        bw_mb_s_printed: d.bw_decimal.map(|b| b / 1e6),
        bw_basis: BwBasis::Printed,
        clat: with_n(d.clat),
        lat: with_n(d.lat),
        slat: with_n(d.slat),
        samples: d.samples,
    }
}

/// `read: IOPS=…` / `write: io=…` (any indent, `read :` in the old layout).
fn direction_line(t: &str) -> Option<(Kind, Dir)> {
    let (kind, rest) = [
        ("read", Kind::Read),
        ("write", Kind::Write),
        ("trim", Kind::Trim),
        ("mixed", Kind::Mixed),
    ]
    .into_iter()
    .find_map(|(w, k)| word_colon(t, w).map(|r| (k, r.trim_start())))?;
    let dir = if let Some(r) = rest.strip_prefix("IOPS=") {
        new_direction(r)?
    } else if rest.starts_with("io=") {
        old_direction(rest)?
    } else {
        return None;
    };
    Some((kind, dir))
}

fn empty_dir() -> Dir {
    Dir {
        kind: Kind::Read,
        iops: 0.0,
        bw_bytes: 0.0,
        bw_decimal: None,
        bytes: 0.0,
        runtime_ms: 0,
        old_layout: false,
        iops_truncated: false,
        fraction: false,
        mismatch: None,
        slat: None,
        clat: None,
        lat: None,
        samples: None,
    }
}

/// `69.5k, BW=272MiB/s (285MB/s)(1408MiB/5185msec); 0 zone resets`
fn new_direction(r: &str) -> Option<Dir> {
    let iops_s = r.split(',').next()?.trim();
    let iops = parse_count(iops_s)?;
    let bw_at = r.find("BW=")? + 3;
    let after_bw = &r[bw_at..];
    let bw_end = after_bw.find(['(', ' ', ',']).unwrap_or(after_bw.len());
    let bw_s = after_bw[..bw_end].trim();
    let primary = rate(bw_s)?;
    let mut alt: Option<Quantity> = None;
    let mut io: Option<(Quantity, u64)> = None;
    let mut alt_s = "";
    // The parenthesised groups: the other unit system, then io/runtime.
    let mut rest = &after_bw[bw_end..];
    while let Some(open) = rest.find('(') {
        let Some(close) = rest[open..].find(')') else {
            break;
        };
        let inner = rest[open + 1..open + close].trim();
        if let Some(ms) = inner.strip_suffix("msec") {
            if let Some((amount, runt)) = ms.rsplit_once('/') {
                io = Some((parse_bytes(amount, false)?, leading_u64(runt.trim())?));
            }
        } else if alt.is_none()
            && let Some(q) = rate(inner)
        {
            alt = Some(q);
            alt_s = inner;
        }
        rest = &rest[open + close + 1..];
        if io.is_some() {
            break;
        }
    }
    let (io, runtime_ms) = io?;
    let (binary, decimal) = match (primary.base, alt.map(|a| a.base)) {
        (Base::Decimal, Some(Base::Binary)) => (alt?, Some(primary)),
        (Base::Decimal, _) => (primary, Some(primary)),
        (_, Some(Base::Decimal | Base::Plain)) => (primary, alt),
        _ => (primary, None),
    };
    let mismatch = decimal.and_then(|dec| {
        let (a, b) = (binary.bytes, dec.bytes);
        // each figure is within 0.5 % of the truth when printed with 3 or more digits
        ((a - b).abs() > 0.012 * a.max(b) && a.max(b) >= 1000.0).then(|| {
            format!(
                "BW={bw_s} and ({alt_s}) disagree; fio before 3.26 misprinted values just below a whole unit (11.99MiB/s as 11.0MiB/s), so the figure in parentheses is likely the right one"
            )
        })
    });
    Some(Dir {
        iops,
        bw_bytes: binary.bytes,
        bw_decimal: decimal.map(|d| d.bytes),
        bytes: io.bytes,
        runtime_ms,
        iops_truncated: iops_s.bytes().all(|b| b.is_ascii_digit()),
        fraction: iops_s.contains('.') || bw_s.contains('.'),
        mismatch,
        ..empty_dir()
    })
}

/// A rate of the new layout: `272MiB/s`, `285MB/s`, or as fio's client/server mode prints it,
/// without `B/s`: `29.4Gi`, `31.6G`.
fn rate(s: &str) -> Option<Quantity> {
    if s.ends_with("/s") {
        return parse_rate(s, false);
    }
    if s.ends_with('B') || s.is_empty() || s.contains('/') {
        return None;
    }
    parse_bytes(&format!("{s}B"), false)
}

/// `io=2449.0MB, bw=15980KB/s, iops=3994, runt=156935msec`
fn old_direction(r: &str) -> Option<Dir> {
    let field = |k: &str| {
        r.split(',')
            .map(str::trim)
            .find_map(|f| f.strip_prefix(k))
            .map(str::trim)
    };
    let io = parse_bytes(field("io=")?, true)?;
    let bw_s = field("bw=")?;
    let bw = parse_rate(bw_s, true)?;
    let iops_s = field("iops=")?;
    let iops = parse_count(iops_s)?;
    let runt = field("runt=")?;
    let runtime_ms = leading_u64(runt.trim_end_matches("msec").trim())?;
    Some(Dir {
        iops,
        bw_bytes: bw.bytes,
        bytes: io.bytes,
        runtime_ms,
        old_layout: true,
        iops_truncated: iops_s.bytes().all(|b| b.is_ascii_digit()),
        fraction: iops_s.contains('.') || bw_s.contains('.'),
        ..empty_dir()
    })
}

fn unit_ns(u: &str) -> Option<f64> {
    Some(match u.trim() {
        "nsec" => 1.0,
        "usec" => 1e3,
        "msec" => 1e6,
        "sec" => 1e9,
        _ => return None,
    })
}

/// `clat (nsec): min=101, max=2829.5k, avg=9063.87, stdev=35430.77`
fn latency_line(t: &str) -> Option<(LatKind, Latency)> {
    let (kind, rest) = [
        ("slat (", LatKind::Slat),
        ("clat (", LatKind::Clat),
        ("lat (", LatKind::Lat),
        ("sync (", LatKind::Sync),
    ]
    .into_iter()
    .find_map(|(p, k)| t.strip_prefix(p).map(|r| (k, r)))?;
    let close = rest.find(')')?;
    let unit = unit_ns(&rest[..close])?;
    let body = &rest[close + 1..];
    let min = parse_count(value_of(body, "min=")?)?;
    let max = parse_count(value_of(body, "max=")?)?;
    let avg = parse_count(value_of(body, "avg=")?)?;
    let stdev = value_of(body, "stdev=")
        .and_then(parse_count)
        .unwrap_or(0.0);
    Some((
        kind,
        Latency {
            n: 0,
            min_ns: min * unit,
            max_ns: max * unit,
            mean_ns: avg * unit,
            stddev_ns: stdev * unit,
            percentiles: Vec::new(),
        },
    ))
}

/// `clat percentiles (usec):` and, when the lines were joined, the rows that follow on the
/// same line.
fn percentile_header(t: &str) -> Option<(LatKind, f64, &str)> {
    let (kind, rest) = [
        ("clat percentiles (", LatKind::Clat),
        ("lat percentiles (", LatKind::Lat),
        ("slat percentiles (", LatKind::Slat),
        ("sync percentiles (", LatKind::Sync),
    ]
    .into_iter()
    .find_map(|(p, k)| t.strip_prefix(p).map(|r| (k, r)))?;
    let close = rest.find(')')?;
    let unit = unit_ns(&rest[..close])?;
    Some((kind, unit, &rest[close + 1..]))
}

/// `|  1.00th=[  109],  5.00th=[  209], …` → [(1.0, 109 × unit), …]
fn percentile_pairs(text: &str, unit: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(off) = text[from..].find("th=[") {
        let at = from + off;
        let mut s = at;
        while s > 0 && (bytes[s - 1].is_ascii_digit() || bytes[s - 1] == b'.') {
            s -= 1;
        }
        let value_start = at + 4;
        let Some(close) = text[value_start..].find(']') else {
            break;
        };
        if let (Ok(p), Ok(v)) = (
            text[s..at].parse::<f64>(),
            text[value_start..value_start + close].trim().parse::<f64>(),
        ) && p > 0.0
            && p <= 100.0
            && v.is_finite()
        {
            out.push((p, v * unit));
        }
        from = value_start + close;
    }
    out
}

/// `total=0,360410,0,0 short=…` (≥ 2.17) or `total=r=421146001/w=0/d=0, short=…` (2.x).
fn issued_totals(total: &str, line: &str) -> Option<[u64; 4]> {
    if total.starts_with("r=") {
        let after = &line[line.find("total=")? + 6..];
        let seg = after.split([',', ' ']).next()?;
        let mut out = [0u64; 4];
        for part in seg.split('/') {
            let (k, v) = part.split_once('=')?;
            let v = leading_u64(v)?;
            match k {
                "r" => out[0] = v,
                "w" => out[1] = v,
                "d" | "t" => out[2] = v,
                _ => {}
            }
        }
        return Some(out);
    }
    let after = &line[line.find("total=")? + 6..];
    let seg = after.split(' ').next()?;
    let nums: Vec<u64> = seg
        // fio 2.0: `total=0/12345/0`
        .split([',', '/'])
        .filter(|s| !s.is_empty())
        .map(leading_u64)
        .collect::<Option<_>>()?;
    let at = |i: usize| nums.get(i).copied().unwrap_or(0);
    Some([*nums.first()?, at(1), at(2), at(3)])
}

/// `name: (g=0): rw=randwrite, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B,
/// ioengine=posixaio, iodepth=1` (also `bs=4K-4K/4K-4K/4K-4K` and
/// `bs=4096B-4096B,4096B-4096B,4096B-4096B` in 2.x).
fn pre_header(t: &str) -> Option<PreHeader> {
    let idx = t.find(": (g=")?;
    let rest = &t[idx + 5..];
    let group = leading_u64(rest).and_then(|g| u32::try_from(g).ok())?;
    let rw = value_of(rest, "rw=")
        .and_then(|v| v.split(':').next())
        .and_then(|v| v.parse::<Rw>().ok());
    let bs_field = rest.find("bs=").map(|i| {
        let s = &rest[i + 3..];
        let end = s.find(", ioengine=").unwrap_or(s.len());
        &s[..end]
    });
    let bs = bs_field.and_then(|f| {
        let (read, write) = bs_ranges(f);
        choose_bs(rw, read, write)
    });
    Some(PreHeader {
        name: t[..idx].trim().to_string(),
        group,
        rw,
        bs,
        ioengine: value_of(rest, "ioengine=")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| IoEngine::from(s).as_str().to_string()),
        iodepth: value_of(rest, "iodepth=")
            .and_then(leading_u64)
            .and_then(|d| u32::try_from(d).ok())
            .filter(|&d| d > 0),
        cloned: false,
    })
}

/// The read and write block sizes of a `bs=` field, each when its range is a single size.
fn bs_ranges(f: &str) -> (Option<u64>, Option<u64>) {
    let single = |range: &str| {
        let range = range.trim().trim_end_matches(',').trim();
        let (lo, hi) = range.split_once('-').unwrap_or((range, range));
        let lo = crate::units::parse_size(lo).ok()?;
        let hi = crate::units::parse_size(hi).ok()?;
        (lo == hi).then_some(lo)
    };
    if f.contains("(R)") {
        let part = |tag: &str, next: &str| {
            let s = &f[f.find(tag)? + tag.len()..];
            let end = s.find(next).unwrap_or(s.len());
            single(&s[..end])
        };
        (part("(R)", "(W)"), part("(W)", "(T)"))
    } else {
        let mut parts = f.split(['/', ',']);
        let read = parts.next().and_then(single);
        let write = parts.next().and_then(single);
        (read, write)
    }
}

// ---------------------------------------------------------------------------------------------
// Small scanners

/// `word` then optional spaces and a colon: the rest after the colon.
fn word_colon<'a>(t: &'a str, word: &str) -> Option<&'a str> {
    t.strip_prefix(word)?
        .trim_start_matches(' ')
        .strip_prefix(':')
}

/// The value after `key` (at a word start) up to the next comma or whitespace.
fn value_of<'a>(s: &'a str, key: &str) -> Option<&'a str> {
    let bytes = s.as_bytes();
    let mut from = 0;
    while let Some(off) = s[from..].find(key) {
        let at = from + off;
        let boundary = at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
        if boundary {
            let v = s[at + key.len()..].trim_start();
            let end = v
                .find(|c: char| c == ',' || c.is_whitespace())
                .unwrap_or(v.len());
            return Some(&v[..end]);
        }
        from = at + key.len();
    }
    None
}

/// `3.33`, `2.1.11`, `2.17-17-g9cf1` (not a job name such as `fio-4k-test:`).
fn is_version(v: &str) -> bool {
    let number = v.split('-').next().unwrap_or_default();
    number.contains('.')
        && number.starts_with(|c: char| c.is_ascii_digit())
        && number.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && !v.contains(':')
}

fn leading_u64(s: &str) -> Option<u64> {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    s[..end].parse().ok()
}

fn parse_f64(s: &str) -> Option<f64> {
    s.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

/// The date fio prints in a job header, ctime style: `Mon Nov 30 08:12:48 2026` (the weekday
/// is not checked; anything after the year is ignored).
pub(super) fn parse_ctime(s: &str) -> Option<NaiveDateTime> {
    let mut it = s.split_whitespace();
    let first = it.next()?;
    // the weekday may be missing
    let month_s = if month(first).is_some() {
        first
    } else {
        it.next()?
    };
    let m = month(month_s)?;
    let day: u32 = it.next()?.parse().ok()?;
    let time = it.next()?;
    let year: i32 = it.next()?.parse().ok()?;
    let mut hms = time.split(':').map(|p| p.parse::<u32>().ok());
    let (h, mi, sec) = (hms.next()??, hms.next()??, hms.next()??);
    Some(NaiveDateTime::new(
        NaiveDate::from_ymd_opt(year, m, day)?,
        NaiveTime::from_hms_opt(h, mi, sec)?,
    ))
}

fn month(s: &str) -> Option<u32> {
    const M: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    M.iter().position(|m| *m == s).map(|i| i as u32 + 1)
}

/// A naive local time with this machine's offset at that moment (the earlier one in a DST
/// overlap; for a time skipped by DST, the offset an hour later).
fn local_time(naive: NaiveDateTime) -> DateTime<FixedOffset> {
    Local
        .from_local_datetime(&naive)
        .earliest()
        .or_else(|| {
            Local
                .from_local_datetime(&(naive + chrono::Duration::hours(1)))
                .earliest()
        })
        .map(|t| t.fixed_offset())
        .unwrap_or_else(|| naive.and_utc().fixed_offset())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_layout_direction_line() {
        let (k, d) = direction_line(
            "write: IOPS=69.5k, BW=272MiB/s (285MB/s)(1408MiB/5185msec); 0 zone resets",
        )
        .unwrap();
        assert_eq!(k, Kind::Write);
        assert_eq!(d.iops, 69_500.0);
        assert_eq!(d.bw_bytes, 272.0 * 1_048_576.0);
        assert_eq!(d.bw_decimal, Some(285e6));
        assert_eq!(d.runtime_ms, 5185);
        assert_eq!(d.bytes, 1408.0 * 1_048_576.0);
        assert!(d.mismatch.is_none());
    }

    #[test]
    fn old_layout_direction_line() {
        let (k, d) =
            direction_line("read : io=3213.1GB, bw=27418MB/s, iops=3509.5K, runt=120003msec")
                .unwrap();
        assert_eq!(k, Kind::Read);
        assert_eq!(d.iops, 3_509_500.0);
        assert_eq!(d.bw_bytes, 27418.0 * 1_048_576.0);
        assert_eq!(d.bw_decimal, None);
        assert_eq!(d.runtime_ms, 120_003);
        let (_, d) =
            direction_line("write: io=53580KB, bw=914264B/s, iops=223, runt= 60011msec").unwrap();
        assert_eq!(d.bw_bytes, 914_264.0);
        assert_eq!(d.runtime_ms, 60_011);
    }

    #[test]
    fn a_misprinted_binary_figure_is_flagged() {
        let (_, d) =
            direction_line("write: IOPS=3068, BW=11.0MiB/s (12.6MB/s)(4096MiB/341704msec)")
                .unwrap();
        assert!(d.mismatch.is_some());
        let (_, d) =
            direction_line("read: IOPS=10.1k, BW=9.82KiB/s (10.1kB/s)(589KiB/60001msec)").unwrap();
        assert!(d.mismatch.is_none(), "{:?}", d.mismatch);
    }

    #[test]
    fn latency_lines_with_num2str_suffixes() {
        let (k, l) =
            latency_line("slat (nsec): min=288, max=2832.6k, avg=993.27, stdev=9954.46").unwrap();
        assert_eq!(k, LatKind::Slat);
        assert_eq!(l.max_ns, 2_832_600.0);
        let (k, l) = latency_line("lat (usec): min=4, max=2834, avg=10.06, stdev=36.74").unwrap();
        assert_eq!(k, LatKind::Lat);
        assert_eq!(l.min_ns, 4000.0);
        assert!((l.mean_ns - 10_060.0).abs() < 1e-6);
        let (_, l) = latency_line("clat (usec): min=2, max=1841, avg= 7.63, stdev= 5.14").unwrap();
        assert!((l.mean_ns - 7630.0).abs() < 1e-6);
        assert!(latency_line("lat (usec)   : 2=0.01%, 4=0.01%").is_none());
    }

    #[test]
    fn percentile_rows() {
        let p = percentile_pairs(
            " |  1.00th=[  109],  5.00th=[  209], 99.99th=[1531904]",
            1.0,
        );
        assert_eq!(p, vec![(1.0, 109.0), (5.0, 209.0), (99.99, 1_531_904.0)]);
        let p = percentile_pairs(" 99.00th=[13435], 99.50th=[", 1000.0);
        assert_eq!(p, vec![(99.0, 13_435_000.0)]);
    }

    #[test]
    fn issued_lines_of_every_version() {
        let t = "issued rwts: total=0,360410,0,0 short=0,0,0,0 dropped=0,0,0,0";
        assert_eq!(
            issued_totals(value_of(t, "total=").unwrap(), t),
            Some([0, 360_410, 0, 0])
        );
        let t = "issued rwt: total=282686912,0,0, short=0,0,0, dropped=0,0,0";
        assert_eq!(
            issued_totals(value_of(t, "total=").unwrap(), t),
            Some([282_686_912, 0, 0, 0])
        );
        let t = "issued r/w/d: total=0/12345/0, short=0/0/0";
        assert_eq!(
            issued_totals(value_of(t, "total=").unwrap(), t),
            Some([0, 12_345, 0, 0])
        );
        let t = "issued    : total=r=421146001/w=0/d=0, short=r=0/w=0/d=0";
        assert_eq!(
            issued_totals(value_of(t, "total=").unwrap(), t),
            Some([421_146_001, 0, 0, 0])
        );
    }

    #[test]
    fn pre_headers_of_every_version() {
        let p = pre_header("random-write: (g=0): rw=randwrite, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=posixaio, iodepth=1").unwrap();
        assert_eq!(
            (p.rw, p.bs, p.iodepth),
            (Some(Rw::RandWrite), Some(4096), Some(1))
        );
        assert_eq!(p.ioengine.as_deref(), Some("posixaio"));
        let p = pre_header("read64k-seq: (g=1): rw=read, bs=512K-512K/512K-512K/512K-512K, ioengine=libaio, iodepth=128").unwrap();
        assert_eq!((p.group, p.bs, p.iodepth), (1, Some(512 << 10), Some(128)));
        let p = pre_header("x: (g=0): rw=randread, bs=4096B-4096B,4096B-4096B,4096B-4096B, ioengine=psync, iodepth=1").unwrap();
        assert_eq!(p.bs, Some(4096));
        let p = pre_header("x: (g=0): rw=randwrite, bs=(R) 4096B-65536B, (W) 4096B-65536B, (T) 4096B-4096B, ioengine=psync, iodepth=1").unwrap();
        assert_eq!(p.bs, None);
    }

    const SYNC_JOB: &str = "\
fsync: (g=0): rw=randwrite, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=psync, iodepth=1
fio-3.33
Starting 1 process

fsync: (groupid=0, jobs=1): err= 0: pid=7: Mon Nov 30 08:12:48 2026
  write: IOPS=1024, BW=4096KiB/s (4194kB/s)(40.0MiB/10001msec); 0 zone resets
    clat (usec): min=3, max=120, avg= 5.10, stdev= 2.00
     lat (usec): min=3, max=121, avg= 5.20, stdev= 2.01
    clat percentiles (usec):
     |  1.00th=[    4],  5.00th=[    4], 50.00th=[    5], 99.00th=[   11]
  fsync/fdatasync/sync_file_range:
    sync (usec): min=455, max=42010, avg=1195.57, stdev=1331.19
    sync percentiles (usec):
     |  1.00th=[  611],  5.00th=[  693], 50.00th=[  799], 99.00th=[ 2835]
  cpu          : usr=1.00%, sys=2.00%, ctx=1, majf=0, minf=1
     issued rwts: total=0,10240,0,1280 short=0,0,0,0 dropped=0,0,0,0
broken: (groupid=1, jobs=1): err= 5 (file:io_u.c:1787, func=io_u error, error=Input/output error): pid=8: Mon Nov 30 08:12:49 2026
  cpu          : usr=0.00%, sys=0.00%, ctx=1, majf=0, minf=1

Run status group 0 (all jobs):
";

    #[test]
    fn sync_latency_and_failed_jobs() {
        let out = parse(SYNC_JOB).unwrap().unwrap();
        assert_eq!(out.jobs.len(), 2);
        let m = &out.jobs[0].measurement;
        let sync = m.sync.as_ref().unwrap();
        assert_eq!(sync.n, 1280);
        assert_eq!(sync.max_ns, 42_010_000.0);
        assert_eq!(sync.percentile(99.0), Some(2_835_000.0));
        let w = m.write.as_ref().unwrap();
        assert_eq!(w.ios, 10_240);
        assert_eq!(w.clat.as_ref().unwrap().percentile(50.0), Some(5000.0));
        assert_eq!(out.jobs[1].error, 5);
        assert!(out.jobs[1].measurement.write.is_none());
    }

    #[test]
    fn a_job_name_like_a_version_is_not_the_version() {
        let text = SYNC_JOB
            .replace("fio-3.33\n", "")
            .replace("fsync:", "fio-4k:");
        let out = parse(&text).unwrap().unwrap();
        assert_eq!(out.fio_version, None);
        assert_eq!(out.jobs[0].name, "fio-4k");
    }

    #[test]
    fn ctime_dates() {
        let d = parse_ctime("Mon Nov 30 08:12:48 2026").unwrap();
        assert_eq!(d.to_string(), "2026-11-30 08:12:48");
        let d = parse_ctime("Fri Feb  9 12:56:50 2018").unwrap();
        assert_eq!(d.to_string(), "2018-02-09 12:56:50");
        assert!(parse_ctime("Mon Foo 30 08:12:48 2026").is_none());
        assert!(parse_ctime("").is_none());
    }

    #[test]
    fn well_formed_lines_are_never_cut() {
        for l in [
            "random-write: (groupid=0, jobs=1): err= 0: pid=19150: Mon Nov 30 08:12:48 2026",
            "my job: (groupid=0, jobs=1): err= 0: pid=19150: Mon Nov 30 08:12:48 2026",
            "  write: IOPS=69.5k, BW=272MiB/s (285MB/s)(1408MiB/5185msec); 0 zone resets",
            "  read : io=29854MB, bw=254727KB/s, iops=63647, runt=120014msec",
            "  cpu          : usr=9.14%, sys=22.01%, ctx=720818, majf=0, minf=24",
            "  WRITE: bw=272MiB/s (285MB/s), 272MiB/s-272MiB/s (285MB/s-285MB/s), io=1408MiB (1476MB), run=5185-5185msec",
            "Jobs: 1 (f=1): [w(1)][60.0%][w=256MiB/s][w=65.5k IOPS][eta 00m:02s]",
            "     issued rwts: total=0,360410,0,0 short=0,0,0,0 dropped=0,0,0,0",
            "    clat percentiles (nsec):",
            "  vda: ios=2/101699, merge=0/204, ticks=0/107533, in_queue=108729, util=68.51%",
        ] {
            assert!(split_points(l).is_empty(), "{l}");
        }
    }

    #[test]
    fn joined_lines_are_cut_before_each_marker() {
        let l = "[eta 00m:00s] random-write: (groupid=0, jobs=1): err= 0: pid=1: Mon Nov 30 08:12:48 2026   write: IOPS=69.5k, BW=272MiB/s (285MB/s)(1408MiB/5185msec) clat (nsec): min=1, max=2, avg=1, stdev=0";
        let parts: Vec<&str> = {
            let p = split_points(l);
            let mut v = Vec::new();
            let mut from = 0;
            for x in p {
                v.push(l[from..x].trim());
                from = x;
            }
            v.push(l[from..].trim());
            v
        };
        assert_eq!(parts.len(), 4, "{parts:?}");
        assert!(parts[1].starts_with("random-write: (groupid="));
        assert!(parts[2].starts_with("write: IOPS="));
        assert!(parts[3].starts_with("clat (nsec)"));
    }

    const CLIENT: &str = "\
hostname=node-a, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.36, flags=1
<node-a> w: (g=0): rw=randwrite, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=posixaio, iodepth=1
<node-b> w: (g=0): rw=randwrite, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=posixaio, iodepth=1
<node-a> Starting 1 process
<node-a>
w: (groupid=0, jobs=1): err= 0: pid=11: Thu Jun 12 12:38:19 2025
  write: IOPS=6015, BW=23.5Mi (24.6M)(1410MiB/60001msec); 0 zone resets
<node-b> w: (groupid=0, jobs=1): err= 0: pid=12: Thu Jun 12 12:38:19 2025
  write: IOPS=5882, BW=29.4Gi (31.6G)(1379MiB/60001msec); 0 zone resets
All clients: (groupid=0, jobs=2): err= 0: pid=0: Thu Jun 12 12:38:19 2025
  write: IOPS=11.9k, BW=45.5Mi (47.7M)(2789MiB/60001msec); 0 zone resets
";

    #[test]
    fn client_server_blocks_are_named_per_host_and_read_without_b_per_s() {
        let out = parse(CLIENT).unwrap().unwrap();
        let names: Vec<&str> = out.jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["<node-a> w", "<node-b> w", "All clients"]);
        assert_eq!(out.fio_version.as_deref(), Some("3.36"));
        let w = out.jobs[1].measurement.write.as_ref().unwrap();
        assert_eq!(w.bw_bytes, 29.4 * 1024f64.powi(3));
        assert_eq!(w.bw_mb_s_printed, Some(31_600.0));
        assert_eq!(out.jobs[0].shape.rw, Some(Rw::RandWrite));
        assert!(
            !out.notes.iter().any(|n| n.contains("lost line breaks")),
            "{:?}",
            out.notes
        );
    }

    #[test]
    fn fio_2_0_version_line_and_numjobs_from_the_block_header() {
        let text = "fio 2.0.6\nx: (groupid=0, jobs=4): err= 0: pid=1\n  write: io=53580KB, bw=914264B/s, iops=223, runt= 60011msec\n\nRun status group 0 (all jobs):\n";
        let out = parse(text).unwrap().unwrap();
        assert_eq!(out.fio_version.as_deref(), Some("2.0.6"));
        assert_eq!(out.jobs[0].shape.numjobs, Some(4));
        // pasted from the first result block on: jobs=1 is the job's numjobs when no other
        // block has its name and the output is not cut
        let one = text.replace("jobs=4", "jobs=1");
        assert_eq!(parse(&one).unwrap().unwrap().jobs[0].shape.numjobs, Some(1));
        let two = format!(
            "{}{}",
            one.replace("\nRun status group 0 (all jobs):\n", ""),
            one
        );
        let out = parse(&two).unwrap().unwrap();
        assert_eq!(out.jobs[0].shape.numjobs, None);
        // fio 2.0.7's spacing, as real outputs print it: `iops=1087 ,`, `bw=663015 B/s`,
        // `min=50 ,`, and the `issued    : total=r=…/w=…/d=…` line
        let text = "fio 2.0.7\nx: (groupid=0, jobs=32): err= 0: pid=32245\n  write: io=2044.2MB, bw=17406KB/s, iops=1087 , runt=120256msec\n    clat (usec): min=50 , max=1439.2K, avg=29404.01, stdev=109807.76\n     issued    : total=r=0/w=130823/d=0, short=r=0/w=0/d=0\ny: (groupid=1, jobs=20): err= 0: pid=15273\n  read : io=38912KB, bw=663015 B/s, iops=161 , runt= 60098msec\n";
        let out = parse(text).unwrap().unwrap();
        assert_eq!(out.fio_version.as_deref(), Some("2.0.7"));
        let w = out.jobs[0].measurement.write.as_ref().unwrap();
        assert_eq!((w.iops, w.ios, w.runtime_ms), (1087.0, 130_823, 120_256));
        assert_eq!(w.clat.as_ref().unwrap().max_ns, 1_439_200_000.0);
        let r = out.jobs[1].measurement.read.as_ref().unwrap();
        assert_eq!((r.iops, r.bw_bytes), (161.0, 663_015.0));
    }

    #[test]
    fn laid_out_sizes_of_every_version() {
        assert_eq!(
            laid_out_size(": Laying out IO file (1 file / 4096MiB)"),
            Some(4 << 30)
        );
        assert_eq!(
            laid_out_size(": Laying out IO file(s) (1 file(s) / 400MB)"),
            Some(400 << 20)
        );
        assert_eq!(
            laid_out_size(": Laying out IO files (2 files / total 8192MiB)"),
            Some(8 << 30)
        );
        assert_eq!(laid_out_size(": Laying out IO file (1 file / lots)"), None);
    }

    #[test]
    fn end_fsync_is_read_from_the_sync_count_only_where_fio_counted_it() {
        let job = |version: &str, sync: u64| {
            let t = SYNC_JOB
                .replace("fio-3.33", version)
                .replace("total=0,10240,0,1280", &format!("total=0,10240,0,{sync}"));
            parse(&t).unwrap().unwrap().jobs[0].shape.end_fsync
        };
        assert_eq!(job("fio-3.7", 1), Some(true));
        assert_eq!(job("fio-3.16", 0), Some(false));
        assert_eq!(job("fio-3.4", 0), Some(false));
        // periodic fsyncs hide whether the end one was there
        assert_eq!(job("fio-3.7", 1280), None);
        // fio 3.17 on stopped counting it; before 3.4 there was no count
        assert_eq!(job("fio-3.17", 0), None);
        assert_eq!(job("fio-3.33", 1), None);
        assert_eq!(job("fio-3.3", 0), None);
        assert_eq!(job("fio-unknown", 0), None);
    }

    #[test]
    fn a_result_line_outside_any_block_that_cannot_be_read_is_an_error() {
        let e = parse("fio-3.33\n  write: IOPS=x, BW=?\n").unwrap_err();
        assert!(
            matches!(e, ParseError::Unreadable(ref m) if m.contains("line 2")),
            "{e:?}"
        );
    }
}
