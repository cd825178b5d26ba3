//! The one table of how fio's lines begin. The re-joiner never takes a line that begins with
//! a marker for the continuation of a wrapped line, the re-splitter cuts text that lost its
//! line breaks before each marker, and the state machine ([`super::state`]) dispatches on the
//! same [`Marker`]s. A new kind of line fio prints starts here: its entry in [`FIXED`] (or
//! the direction and summary words); then, if it carries figures, its field parser in
//! [`super::fields`] and where its figures go in [`super::state`].

use super::fields::{is_version, word_colon};

/// fio's data direction as a result line names it (`enum fio_ddir` in fio's source).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ddir {
    Read,
    Write,
    Trim,
    Mixed,
}

impl Ddir {
    pub(super) fn word(self) -> &'static str {
        match self {
            Ddir::Read => "read",
            Ddir::Write => "write",
            Ddir::Trim => "trim",
            Ddir::Mixed => "mixed",
        }
    }
}

/// Which latency a latency line or a percentile header gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LatKind {
    Slat,
    Clat,
    Lat,
    Sync,
}

/// A job's direction lines: `write: IOPS=…` (fio ≥ 2.17), `read : io=…` (fio ≤ 2.16).
const DDIR_WORDS: [(&str, Ddir); 4] = [
    ("read", Ddir::Read),
    ("write", Ddir::Write),
    ("trim", Ddir::Trim),
    ("mixed", Ddir::Mixed),
];
/// What follows a direction line's colon in the new layout and in the old one.
const DDIR_LAYOUTS: [&str; 2] = ["IOPS=", "io="];
/// What may follow a direction line's colon at all, the figures readable or not.
const DDIR_KEYS: [&str; 5] = ["IOPS", "io=", "iops", "bw=", "BW"];

/// A group summary's lines (`WRITE: bw=…`, `WRITE: io=…` in the old layout).
const SUMMARY_WORDS: [(&str, Ddir); 4] = [
    ("READ:", Ddir::Read),
    ("WRITE:", Ddir::Write),
    ("TRIM:", Ddir::Trim),
    ("MIXED:", Ddir::Mixed),
];
const SUMMARY_KEYS: [&str; 2] = ["bw=", "io="];

/// What a line that begins with a fixed marker is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Marker {
    /// `clat (usec): min=…, max=…, avg=…, stdev=…`; for `lat (`, also the latency
    /// distribution `lat (usec)   : 2=0.01%, 4=0.01%`.
    Latency(LatKind),
    /// `clat percentiles (usec):`, the rows (`|  1.00th=[…]`) following.
    Percentiles(LatKind),
    /// `iops        : min= 6148, max= 8044, avg=7667.32, stdev=437.09, samples=68`
    IopsSamples,
    /// `cpu          : usr=9.14%, sys=22.01%, ctx=720818, majf=0, minf=24`
    Cpu,
    /// `issued rwts: total=…` (fio ≥ 3.4), `issued r/w/d: total=…`, `issued    : total=r=…`
    Issued,
    /// `IO depths    : 1=100.0%, 2=0.0%, 4=0.0%, 8=0.0%, 16=0.0%, 32=0.0%, >=64=0.0%`
    Depths,
    /// A line of a job block that carries nothing the measurement needs: bandwidth samples,
    /// depth distributions, the sync section's title, priority latencies.
    Skipped,
    /// `Run status group 0 (all jobs):`, the group summaries following.
    RunStatus,
    /// `Disk stats (read/write):`
    DiskStats,
    /// `fio: terminating on signal 2`, `fio: pid=…, err=…`
    FioMessage,
    /// `All clients: (groupid=…`, a client/server run's totals (read as a block header).
    AllClients,
    /// An ETA line, `Jobs: 1 (f=1): [w(1)][60.0%]…`.
    Eta,
    /// `Starting 4 processes`
    Starting,
    /// `fio-3.33`
    Version,
    /// `...` under a header printed before the run: the job has clones.
    Clones,
}

/// The fixed markers. A marker of letters only is a word followed by optional spaces and a
/// colon (`cpu          :`); any other marker is a prefix. The first that matches counts.
const FIXED: [(&str, Marker); 25] = [
    ("slat (", Marker::Latency(LatKind::Slat)),
    ("clat (", Marker::Latency(LatKind::Clat)),
    ("lat (", Marker::Latency(LatKind::Lat)),
    ("sync (", Marker::Latency(LatKind::Sync)),
    ("clat percentiles", Marker::Percentiles(LatKind::Clat)),
    ("lat percentiles", Marker::Percentiles(LatKind::Lat)),
    ("slat percentiles", Marker::Percentiles(LatKind::Slat)),
    ("sync percentiles", Marker::Percentiles(LatKind::Sync)),
    ("iops", Marker::IopsSamples),
    ("cpu", Marker::Cpu),
    ("issued", Marker::Issued),
    ("issued rwt", Marker::Issued),
    ("issued r/w", Marker::Issued),
    ("bw (", Marker::Skipped),
    ("IO depths", Marker::Depths),
    ("submit", Marker::Skipped),
    ("complete", Marker::Skipped),
    ("latency", Marker::Skipped),
    ("fsync/fdatasync", Marker::Skipped),
    ("clat prio", Marker::Skipped),
    ("lat prio", Marker::Skipped),
    ("Run status group", Marker::RunStatus),
    ("Disk stats", Marker::DiskStats),
    ("fio: ", Marker::FioMessage),
    ("All clients:", Marker::AllClients),
];

/// Markers followed by a digit.
const NUMBERED: [(&str, Marker); 3] = [
    ("Jobs: ", Marker::Eta),
    ("Starting ", Marker::Starting),
    ("fio-", Marker::Version),
];

/// Markers that follow a job's (or a disk's) name, which may contain spaces: a result block's
/// header, the header printed before the run, the laying out of its file, a disk's statistics.
pub(super) const NAMED: [&str; 4] = [": (groupid=", ": (g=", ": Laying out IO file", ": ios="];

/// The fixed marker `s` begins with, and the rest of `s` after it (after the colon, for a
/// word).
pub(super) fn marker(s: &str) -> Option<(Marker, &str)> {
    for (m, kind) in FIXED {
        let rest = if m.bytes().all(|b| b.is_ascii_alphabetic()) {
            word_colon(s, m)
        } else {
            s.strip_prefix(m)
        };
        if let Some(rest) = rest {
            return Some((kind, rest));
        }
    }
    for (m, kind) in NUMBERED {
        if let Some(rest) = s.strip_prefix(m)
            && rest.starts_with(|c: char| c.is_ascii_digit())
        {
            return Some((kind, rest));
        }
    }
    (s == "..." || s.starts_with("... ")).then(|| (Marker::Clones, &s[3..]))
}

/// Does `s` (at a token start) begin one of fio's lines?
pub(super) fn starts_marker(s: &str) -> bool {
    marker(s).is_some() || ddir_line_start(s).is_some() || summary_kind(s).is_some()
}

/// Does a (trimmed) line begin one of fio's lines, so that it cannot continue the one before?
pub(super) fn begins_line(t: &str) -> bool {
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
    NAMED.iter().any(|p| t.contains(p))
}

/// `write: IOPS=…` / `read : io=…` at a line's start: the direction and what follows the colon,
/// when it begins as one of the two layouts does.
pub(super) fn ddir_line_start(t: &str) -> Option<(Ddir, &str)> {
    let (ddir, rest) = DDIR_WORDS
        .into_iter()
        .find_map(|(w, d)| word_colon(t, w).map(|r| (d, r.trim_start())))?;
    DDIR_LAYOUTS
        .iter()
        .any(|p| rest.starts_with(p))
        .then_some((ddir, rest))
}

/// `write:` / `read :` at a line's start, followed by something fio would print (a figure's
/// key): a direction line, whether or not its figures can be read.
pub(super) fn direction_marker(t: &str) -> Option<Ddir> {
    DDIR_WORDS.into_iter().find_map(|(w, d)| {
        let rest = word_colon(t, w)?.trim_start();
        DDIR_KEYS.iter().any(|p| rest.starts_with(p)).then_some(d)
    })
}

/// `WRITE: bw=…` (a group summary) → its direction.
pub(super) fn summary_kind(t: &str) -> Option<Ddir> {
    SUMMARY_WORDS.into_iter().find_map(|(w, d)| {
        let rest = t.strip_prefix(w)?.trim_start();
        SUMMARY_KEYS
            .iter()
            .any(|k| rest.starts_with(k))
            .then_some(d)
    })
}

/// A client/server output's host tag at a line's start: `<host> rest` or `<host>` alone.
/// Returns the host and the rest of the line.
pub(super) fn host_tag(t: &str) -> Option<(&str, &str)> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line the reader recognises by a marker begins a line for the re-joiner and the
    /// re-splitter too: the table is one.
    #[test]
    fn every_known_line_begins_a_line() {
        for l in [
            "slat (nsec): min=288, max=2832.6k, avg=993.27, stdev=9954.46",
            "clat percentiles (usec):",
            "lat (usec)   : 2=0.01%, 4=0.01%",
            "bw (  KiB/s): min=2048, max=4096, per=100.00%, avg=3000.00, stdev=1.00, samples=119",
            "iops        : min= 6148, max= 8044, avg=7667.32, stdev=437.09, samples=68",
            "IO depths    : 1=100.0%, 2=0.0%, 4=0.0%, 8=0.0%, 16=0.0%, 32=0.0%, >=64=0.0%",
            "submit    : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%",
            "complete  : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%",
            "latency   : target=0, window=0, percentile=100.00%, depth=1",
            "fsync/fdatasync/sync_file_range:",
            "clat prio 0/0 (usec): min=1, max=2, avg=1.5, stdev=0.5",
            "cpu          : usr=9.14%, sys=22.01%, ctx=720818, majf=0, minf=24",
            "issued rwts: total=0,360410,0,0 short=0,0,0,0 dropped=0,0,0,0",
            "issued r/w/d: total=0/12345/0, short=0/0/0",
            "issued    : total=r=421146001/w=0/d=0, short=r=0/w=0/d=0",
            "Run status group 0 (all jobs):",
            "WRITE: bw=272MiB/s (285MB/s), 272MiB/s-272MiB/s (285MB/s-285MB/s), io=1408MiB (1476MB), run=5185-5185msec",
            "Disk stats (read/write):",
            "write: IOPS=69.5k, BW=272MiB/s (285MB/s)(1408MiB/5185msec); 0 zone resets",
            "read : io=29854MB, bw=254727KB/s, iops=63647, runt=120014msec",
            "Starting 1 process",
            "fio-3.33",
            "...",
        ] {
            assert!(starts_marker(l), "{l}");
            assert!(begins_line(l), "{l}");
        }
        for l in [
            "w: (groupid=0, jobs=1): err= 0: pid=11: Thu Jun 12 12:38:19 2025",
            "w: (g=0): rw=randwrite, bs=(R) 4096B-4096B, ioengine=psync, iodepth=1",
            "vda: ios=2/101699, merge=0/204, ticks=0/107533, in_queue=108729, util=68.51%",
        ] {
            assert!(!starts_marker(l) && begins_line(l), "{l}");
        }
    }

    #[test]
    fn a_figure_inside_a_line_is_not_a_marker() {
        for s in [
            "iops=223, runt= 60011msec",
            "io=53580KB,",
            "cpu=1",
            "read-write: x",
            "..",
            "é",
            "",
        ] {
            assert!(!starts_marker(s), "{s}");
        }
    }
}
