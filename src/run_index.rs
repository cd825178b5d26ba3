//! The runs an evaluation holds. A report over a year of history judges a hundred thousand
//! runs, and a record is about 2 KB (an IOPS series, the disks' own account, 33 figures), so
//! an evaluation does not hold records: it holds a [`Run`] each — the timestamp, the figures,
//! the invocation, what the IOPS series told the warnings, and the record's place in the
//! history — with what runs share (host, engine, policy, job, target, …) held once in an
//! [`RunInfo`] that every run of the same context points to.
//!
//! The formats that print whole records (JSON's `runs[]`, the table's per-run details, the
//! HTML's per-run charts) read them again, one at a time, through [`Records`]: from the history
//! file by each run's byte offset, or from memory for a `run` or an `import`, whose records
//! are few and at hand.

use std::fs::File;
use std::ops::Deref;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, FixedOffset};
use serde::Serialize;

use crate::job::JobShape;
use crate::measure::Series;
use crate::metrics::Metrics;
use crate::record::RecordRef;
use crate::record::{Record, Source, Target};

pub use crate::record::RunInfo;

fn step_of(series: Option<&Series>) -> Option<Box<(f64, f64, f64)>> {
    let s = series?;
    crate::measure::series::step_down(s, s.main_dir()).map(Box::new)
}

/// Where a run's whole record is found again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    /// A history line: its number (from 1), the byte offset of its first byte and its length.
    Line { line: usize, offset: u64, len: u32 },
    /// The index of the record in the list the evaluation was given.
    Index(usize),
}

/// One judged run: what rules, statistics, warnings, tables and verdicts read, and where its
/// whole record is. Reads like a record for the shared fields (`run.host`, `run.target.dir`).
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub timestamp: DateTime<FixedOffset>,
    /// The figures judging and the tables read: every figure of the record, or, for a run of
    /// a long window read from a history, only those [`Run::holding`] kept (the others are
    /// read again from the record, [`RecordReader::metrics`]).
    pub metrics: Metrics,
    /// The names of every figure the record has (one stored list shared by the runs of one
    /// kind): [`metrics`](Self::metrics)'s own, unless it holds only some.
    pub names: &'static [&'static str],
    /// Shared with the runs of the same invocation read just before (they come together).
    pub invocation: Option<Arc<str>>,
    /// The record carries an IOPS series (the HTML draws it).
    pub has_series: bool,
    /// The series' step down, as `measure::series::step_down` finds it (at s, before, after):
    /// boxed, as few runs have one (8 bytes a run, not 32).
    pub series_step: Option<Box<(f64, f64, f64)>>,
    /// Where the disk's burst credits ran out inside the run, and what it kept up after:
    /// boxed, as few runs have one and a year of runs is held (8 bytes a run, not 64).
    pub burst: Option<Box<crate::measure::changepoint::Sustained>>,
    /// A `run --sustained`: whether the disk's rate held steady.
    pub sustained: Option<bool>,
    /// The line of an earlier record of the same run this one repeats (a history read twice
    /// over, one fio run recorded from two of its outputs): listed, never counted.
    pub repeat_of: Option<u32>,
    /// What names an imported run across histories (its `source_digest`, hashed, and its fio
    /// run, summarised): a fleet finds one fio run in two nodes' evidence by it, whatever
    /// formats it was imported from. Shared with the history reader's account of repeats
    /// (one summary a run), and 8 bytes where there is none. None for a native run, and
    /// outside a fleet.
    pub imported: Option<Arc<crate::record::ImportedRun>>,
    pub at: At,
    info: Arc<RunInfo>,
}

impl Deref for Run {
    type Target = RunInfo;
    fn deref(&self) -> &RunInfo {
        &self.info
    }
}

impl Run {
    /// The context this run shares with the runs read alongside it: two runs whose contexts
    /// are the same `Arc` have the same host, engine, policy, job, target and versions.
    pub fn context(&self) -> &Arc<RunInfo> {
        &self.info
    }

    /// The run's time as its output or its measurement states it; None where it was assumed
    /// (an imported output that states no time: `time_assumed`). The one way to ask a run
    /// for a time that counts towards a day of evidence: an assumed time places the run (the
    /// window, the tables), and counts towards no day.
    pub fn stated_time(&self) -> Option<DateTime<FixedOffset>> {
        self.info.time_assumed.is_none().then_some(self.timestamp)
    }

    /// Whether [`metrics`](Self::metrics) holds every figure of the record.
    pub fn holds_all(&self) -> bool {
        std::ptr::eq(self.metrics.names(), self.names)
    }

    /// The run holding only the figures of `keep` (what a policy's rules and the warnings
    /// read), the rest read again from its record where a format shows them: a long window's
    /// runs then cost a few figures each, not every figure of every run.
    pub fn holding(mut self, keep: &'static [&'static str]) -> Run {
        self.metrics = self.metrics.only(keep);
        self
    }

    /// The run of a record held in memory, at `index` of the evaluation's records.
    pub fn of(r: &Record, index: usize) -> Run {
        Run {
            timestamp: r.timestamp,
            metrics: r.metrics.clone(),
            names: r.metrics.names(),
            invocation: r.invocation.as_deref().map(Arc::from),
            has_series: r.iops_series.is_some(),
            series_step: step_of(r.iops_series.as_ref()),
            burst: r.burst.map(Box::new),
            sustained: r.sustained.as_ref().map(|s| s.reached),
            repeat_of: None,
            imported: None,
            at: At::Index(index),
            info: Arc::new(RunInfo::of(r)),
        }
    }
}

/// The fields a run and a record both have, for what judges either (deviations, groups, days).
pub trait RunFields {
    fn timestamp(&self) -> DateTime<FixedOffset>;
    fn host(&self) -> &str;
    fn policy(&self) -> &str;
    fn engine(&self) -> &str;
    fn job(&self) -> &JobShape;
    fn target(&self) -> &Target;
    fn metrics(&self) -> &Metrics;
    fn source(&self) -> Source;
    /// Recorded by `run --sustained`: one run for as long as its budget, longer than the
    /// policy's runtime by design (docs/sustained.md).
    fn is_sustained(&self) -> bool;
}

macro_rules! run_fields {
    ($t:ty) => {
        impl RunFields for $t {
            fn timestamp(&self) -> DateTime<FixedOffset> {
                self.timestamp
            }
            fn host(&self) -> &str {
                &self.host
            }
            fn policy(&self) -> &str {
                &self.policy
            }
            fn engine(&self) -> &str {
                &self.engine
            }
            fn job(&self) -> &JobShape {
                &self.job
            }
            fn target(&self) -> &Target {
                &self.target
            }
            fn metrics(&self) -> &Metrics {
                &self.metrics
            }
            fn source(&self) -> Source {
                self.source
            }
            fn is_sustained(&self) -> bool {
                self.sustained.is_some()
            }
        }
    };
}
run_fields!(Run);
run_fields!(Record);

impl<T: RunFields> RunFields for &T {
    fn timestamp(&self) -> DateTime<FixedOffset> {
        (*self).timestamp()
    }
    fn host(&self) -> &str {
        (*self).host()
    }
    fn policy(&self) -> &str {
        (*self).policy()
    }
    fn engine(&self) -> &str {
        (*self).engine()
    }
    fn job(&self) -> &JobShape {
        (*self).job()
    }
    fn target(&self) -> &Target {
        (*self).target()
    }
    fn metrics(&self) -> &Metrics {
        (*self).metrics()
    }
    fn source(&self) -> Source {
        (*self).source()
    }
    fn is_sustained(&self) -> bool {
        (*self).is_sustained()
    }
}

/// A run with every figure of its record (read again where it holds only some), for a table
/// of every metric.
pub struct WithAll<'a> {
    pub run: &'a Run,
    pub metrics: Metrics,
}

impl RunFields for WithAll<'_> {
    fn timestamp(&self) -> DateTime<FixedOffset> {
        self.run.timestamp
    }
    fn host(&self) -> &str {
        &self.run.host
    }
    fn policy(&self) -> &str {
        &self.run.policy
    }
    fn engine(&self) -> &str {
        &self.run.engine
    }
    fn job(&self) -> &JobShape {
        &self.run.job
    }
    fn target(&self) -> &Target {
        &self.run.target
    }
    fn metrics(&self) -> &Metrics {
        &self.metrics
    }
    fn source(&self) -> Source {
        self.run.source
    }
    fn is_sustained(&self) -> bool {
        self.run.sustained.is_some()
    }
}

/// The contexts met so far while reading, newest first, so that runs sharing one share its
/// memory. A history holds few: one per host, directory, engine and tool version.
#[derive(Default)]
pub struct Contexts {
    kept: Vec<Arc<RunInfo>>,
    /// The invocation of the last run read: the runs of one invocation are written together,
    /// so they share one copy of its id.
    invocation: Option<Arc<str>>,
}

/// How many distinct contexts are remembered; past that, the least recently met is dropped
/// (its runs keep it), so a history of ever-changing contexts costs time, not memory.
const CONTEXTS_KEPT: usize = 64;

impl Contexts {
    /// The run of a history line read by the line codec (`record::decode`), its context
    /// shared with the runs before it that have the same.
    pub(crate) fn run(&mut self, mut line: RecordRef<'_>, at: At) -> Run {
        let series_step = step_of(line.iops_series.as_ref());
        let has_series = line.iops_series.take().is_some();
        let metrics = std::mem::take(&mut line.metrics);
        let invocation = match (line.invocation.as_deref(), &self.invocation) {
            (Some(i), Some(last)) if **last == *i => Some(last.clone()),
            (Some(i), _) => {
                let i: Arc<str> = Arc::from(i);
                self.invocation = Some(i.clone());
                Some(i)
            }
            (None, _) => None,
        };
        let timestamp = line.timestamp;
        let burst = line.burst.take().map(Box::new);
        let sustained = line.sustained.take().map(|s| s.reached);
        let info = match self.kept.iter().position(|i| i.matches(&line)) {
            Some(0) => self.kept[0].clone(),
            Some(k) => {
                let i = self.kept.remove(k);
                self.kept.insert(0, i.clone());
                i
            }
            None => {
                let i = Arc::new(RunInfo::of_line(line));
                self.kept.insert(0, i.clone());
                self.kept.truncate(CONTEXTS_KEPT);
                i
            }
        };
        Run {
            timestamp,
            names: metrics.names(),
            metrics,
            invocation,
            has_series,
            series_step,
            burst,
            sustained,
            repeat_of: None,
            imported: None,
            at,
            info,
        }
    }
}

/// Where an evaluation's whole records are read again from.
#[derive(Clone, Default)]
pub enum Records {
    /// None: an evaluation of no runs, or one only judged (a fleet's node), never listed.
    #[default]
    None,
    /// The records themselves (run, import, tests), by [`At::Index`].
    Memory(Arc<Vec<Record>>),
    /// The history file the runs were read from, by [`At::Line`]; append-only, so the offsets
    /// read stay valid whatever is appended meanwhile.
    File { file: Arc<File>, path: Arc<PathBuf> },
}

impl std::fmt::Debug for Records {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Records::None => f.write_str("Records::None"),
            Records::Memory(r) => write!(f, "Records::Memory({} records)", r.len()),
            Records::File { path, .. } => write!(f, "Records::File({})", path.display()),
        }
    }
}

impl PartialEq for Records {
    fn eq(&self, other: &Records) -> bool {
        match (self, other) {
            (Records::None, Records::None) => true,
            (Records::Memory(a), Records::Memory(b)) => a == b,
            (Records::File { file: a, .. }, Records::File { file: b, .. }) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Records {
    pub fn file(file: File, path: &Path) -> Records {
        Records::File {
            file: Arc::new(file),
            path: Arc::new(path.to_path_buf()),
        }
    }

    /// A reader of whole records, for runs asked for in (mostly) file order.
    pub fn reader(&self) -> RecordReader<'_> {
        RecordReader {
            records: self,
            buf: Vec::new(),
            start: 0,
        }
    }
}

/// Reads the whole records of runs again, one at a time: from a history file through a window
/// of [`READ_AHEAD`] bytes (runs in file order are read with one system call per window), or
/// from memory.
pub struct RecordReader<'a> {
    records: &'a Records,
    buf: Vec<u8>,
    /// The file offset of `buf[0]`.
    start: u64,
}

/// Bytes read from the history at a time when reading records again.
pub const READ_AHEAD: usize = 1 << 17;

impl RecordReader<'_> {
    /// The text of the history line at `offset`, `len` bytes, through the read-ahead window.
    fn text(&mut self, file: &File, offset: u64, len: u32) -> std::io::Result<&[u8]> {
        let len = len as usize;
        let end = offset + len as u64;
        if offset < self.start || end > self.start + self.buf.len() as u64 {
            self.buf.resize(READ_AHEAD.max(len), 0);
            let n = read_full_at(file, &mut self.buf, offset)?;
            self.buf.truncate(n);
            self.start = offset;
        }
        let from = (offset - self.start) as usize;
        Ok(self.buf.get(from..from + len).unwrap_or_default())
    }

    /// Calls `f` with the whole record of `run`. An error says the history changed since it
    /// was read, or could not be read.
    pub fn with<T>(&mut self, run: &Run, f: impl FnOnce(&Record) -> T) -> std::io::Result<T> {
        match (self.records, run.at) {
            (Records::Memory(r), At::Index(i)) => r
                .get(i)
                .map(f)
                .ok_or_else(|| std::io::Error::other("a run's record is missing")),
            (Records::File { file, path }, At::Line { line, offset, len }) => {
                let text = self.text(file, offset, len)?;
                let record: Record = serde_json::from_slice(text.trim_ascii()).map_err(|e| {
                    changed(path, line, format!("not the record read before ({e})"))
                })?;
                if record.timestamp != run.timestamp {
                    return Err(changed(path, line, "not the record read before".into()));
                }
                Ok(f(&record))
            }
            _ => Err(not_kept()),
        }
    }

    /// Every figure of `run`'s record: its own where it holds them all, else read again from
    /// the history line (the metrics alone are taken from it).
    pub fn metrics(&mut self, run: &Run) -> std::io::Result<Metrics> {
        if run.holds_all() {
            return Ok(run.metrics.clone());
        }
        match (self.records, run.at) {
            (Records::Memory(_), At::Index(_)) => self.with(run, |r| r.metrics.clone()),
            (Records::File { file, path }, At::Line { line, offset, len }) => {
                #[derive(serde::Deserialize)]
                struct Figures {
                    timestamp: DateTime<FixedOffset>,
                    #[serde(default)]
                    metrics: Metrics,
                }
                let text = self.text(file, offset, len)?;
                // The timestamp and the figures alone, where the line's keys say where they
                // are: a few hundred bytes parsed, not the line; anything unexpected is read
                // the long way.
                if let (Some(t), Some(m)) = (
                    value_at::<DateTime<FixedOffset>>(text, b"\"timestamp\":"),
                    value_at::<Metrics>(text, b"\"metrics\":"),
                ) && t == run.timestamp
                    && std::ptr::eq(m.names(), run.names)
                {
                    return Ok(m);
                }
                let f: Figures = serde_json::from_slice(text.trim_ascii()).map_err(|e| {
                    changed(path, line, format!("not the record read before ({e})"))
                })?;
                if f.timestamp != run.timestamp || f.metrics.names() != run.names {
                    return Err(changed(path, line, "not the record read before".into()));
                }
                Ok(f.metrics)
            }
            _ => Err(not_kept()),
        }
    }

    /// Every figure of `run`'s record into `out`, in the order of `run.names`: the same
    /// figures as [`metrics`](Self::metrics), without building them into a [`Metrics`], and
    /// from a line written as iopscheck writes it, without reading any key but the
    /// timestamp's and the figures'.
    pub fn figures(&mut self, run: &Run, out: &mut Vec<f64>) -> std::io::Result<()> {
        self.read_figures(run, None, out)
    }

    /// The figures of `run`'s record at `places` (rising indices into `run.names`) into
    /// `out`, in that order: as [`figures`](Self::figures), the others passed over unparsed
    /// (the statistics' passes read every run's figures this way, only those they seek).
    pub fn figures_at(
        &mut self,
        run: &Run,
        places: &[usize],
        out: &mut Vec<f64>,
    ) -> std::io::Result<()> {
        self.read_figures(run, Some(places), out)
    }

    fn read_figures(
        &mut self,
        run: &Run,
        places: Option<&[usize]>,
        out: &mut Vec<f64>,
    ) -> std::io::Result<()> {
        let pick = |all: &[f64], out: &mut Vec<f64>| match places {
            Some(p) => out.extend(p.iter().map(|&i| all[i])),
            None => out.extend_from_slice(all),
        };
        out.clear();
        if run.holds_all() {
            pick(run.metrics.figures(), out);
            return Ok(());
        }
        if let (Records::File { file, .. }, At::Line { offset, len, .. }) = (self.records, run.at) {
            let text = self.text(file, offset, len)?;
            if value_at::<DateTime<FixedOffset>>(text, b"\"timestamp\":") == Some(run.timestamp)
                && figures_in(text, run.names, places, out)
            {
                return Ok(());
            }
            out.clear();
        }
        let m = self.metrics(run)?;
        pick(m.figures(), out);
        Ok(())
    }

    /// Calls `f` with the whole record of `run` as it is written out (JSON's `runs[]`): the
    /// same bytes as the [`Record`] [`with`](Self::with) gives, from a history line without
    /// building the record's strings.
    pub fn with_whole<T>(&mut self, run: &Run, f: impl FnOnce(&Whole) -> T) -> std::io::Result<T> {
        match (self.records, run.at) {
            (Records::Memory(_), At::Index(_)) => self.with(run, |r| f(&Whole(WholeOf::Held(r)))),
            (Records::File { file, path }, At::Line { line, offset, len }) => {
                let text = self.text(file, offset, len)?;
                // As the line codec reads it: as text once checked as UTF-8.
                let text = text.trim_ascii();
                let parsed: Result<RecordRef, _> = match std::str::from_utf8(text) {
                    Ok(t) => serde_json::from_str(t),
                    Err(_) => serde_json::from_slice(text),
                };
                let record = parsed.map_err(|e| {
                    changed(path, line, format!("not the record read before ({e})"))
                })?;
                if record.timestamp != run.timestamp {
                    return Err(changed(path, line, "not the record read before".into()));
                }
                Ok(f(&Whole(WholeOf::Line(Box::new(record)))))
            }
            _ => Err(not_kept()),
        }
    }
}

/// The value after the first `key` (a quoted name and its colon) in a history line: the
/// top-level one where no value before it holds the same key (a string cannot: its quotes
/// are escaped). The caller checks what it gets against what the run holds.
fn value_at<T: serde::de::DeserializeOwned>(text: &[u8], key: &[u8]) -> Option<T> {
    let at = memchr::memmem::find(text, key)? + key.len();
    let mut de = serde_json::Deserializer::from_slice(&text[at..]);
    T::deserialize(&mut de).ok()
}

/// The figures of the first metrics object in a history line into `out` (those at `places`,
/// rising indices into `names`, or all), when its keys are `names` in that order, written as
/// iopscheck writes them (no space, no escape): each figure parsed by serde_json from the same
/// bytes as a [`Metrics`] read from the line would be, so the same to the bit; the others
/// passed over. False for anything else (the caller reads the line the long way).
fn figures_in(text: &[u8], names: &[&str], places: Option<&[usize]>, out: &mut Vec<f64>) -> bool {
    const KEY: &[u8] = b"\"metrics\":";
    let Some(at) = memchr::memmem::find(text, KEY) else {
        return false;
    };
    let Some(mut rest) = text[at + KEY.len()..].strip_prefix(b"{") else {
        return false;
    };
    let mut wanted = places.map(|p| p.iter().peekable());
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            let Some(r) = rest.strip_prefix(b",") else {
                return false;
            };
            rest = r;
        }
        let Some(r) = rest
            .strip_prefix(b"\"")
            .and_then(|r| r.strip_prefix(name.as_bytes()))
            .and_then(|r| r.strip_prefix(b"\":"))
        else {
            return false;
        };
        let end = r
            .iter()
            .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
            .unwrap_or(r.len());
        let want = match &mut wanted {
            None => true,
            Some(w) => w.next_if_eq(&&i).is_some(),
        };
        if want {
            let Ok(x) = serde_json::from_slice::<f64>(&r[..end]) else {
                return false;
            };
            out.push(x);
        } else if end == 0 {
            return false;
        }
        rest = &r[end..];
    }
    wanted.is_none_or(|mut w| w.next().is_none()) && rest.first() == Some(&b'}')
}

/// A run's whole record as it is written out: see [`RecordReader::with_whole`].
pub struct Whole<'a>(WholeOf<'a>);

enum WholeOf<'a> {
    Held(&'a Record),
    Line(Box<RecordRef<'a>>),
}

impl Serialize for Whole<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            WholeOf::Held(r) => r.serialize(s),
            WholeOf::Line(l) => l.serialize(s),
        }
    }
}

fn changed(path: &Path, line: usize, why: String) -> std::io::Error {
    std::io::Error::other(format!(
        "history {}:{line}: {why}; it changed since it was read",
        path.display()
    ))
}

fn not_kept() -> std::io::Error {
    std::io::Error::other("this evaluation's runs were judged without keeping their records")
}

/// Reads from `offset` until `buf` is full or the file ends; the bytes read.
fn read_full_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read_at(&mut buf[n..], offset + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::tests::record;
    use crate::job::{Rw, SyncMode};
    use crate::measure::BwBasis;
    use crate::measure::DiskStat;
    use std::collections::BTreeMap;

    /// A record with every field a record can have, strings with escapes and other scripts.
    fn full() -> Record {
        let mut r = record("2026-11-30T10:00:00+01:00", 4123.25);
        r.host = "nœud \"1\"\\\t/é".into();
        r.source = Source::Imported;
        r.source_file = Some("/tmp/fio out.json".into());
        r.source_digest = Some("sha256:abc".into());
        r.engine = "fio/posixaio".into();
        r.engine_note = Some("io_uring unavailable \u{1}".into());
        r.job_assumed = Some("swimlane".into());
        r.job = JobShape {
            rw: Some(Rw::RandWrite),
            bs: Some(4096),
            size: Some(4 << 30),
            iodepth: Some(1),
            numjobs: Some(1),
            ioengine: Some("posixaio".into()),
            runtime_s: Some(60.0),
            direct: Some(false),
            time_based: Some(true),
            end_fsync: Some(true),
            fsync: Some(1),
            fdatasync: Some(2),
            sync: Some(SyncMode::Dsync),
            synced: Some(true),
            rwmixread: Some(75),
            ramp_time_s: Some(0.5),
            directory: Some("/data".into()),
            filename: Some("f".into()),
            limits: Some(BTreeMap::from([("rate_iops".into(), "2800".into())])),
        };
        r.metrics.insert("write_bw_mb_s".into(), 16.1);
        r.metrics.insert("end_fsync_ms".into(), 1e-7);
        r.metrics.insert("big".into(), 1.5e14);
        r.target = Target {
            dir: "/data".into(),
            filesystem: Some("ext4".into()),
            device: Some("/dev/sda1".into()),
            mount_point: Some("/".into()),
            mount_options: Some("rw,relatime".into()),
            model: Some("QEMU HARDDISK".into()),
            rotational: Some(true),
            scheduler: Some("mq-deadline".into()),
            in_ram: Some("loop0 backed by a file on tmpfs (in RAM)".into()),
            kernel: Some("6.18".into()),
            memory_bytes: Some(24 << 30),
            cpus: Some(8),
            os: Some("Debian GNU/Linux 13".into()),
            capacity_bytes: Some(1 << 40),
        };
        r.overrides = [("size".to_string(), "64m".to_string())].into();
        r.bw_basis = Some(BwBasis::Printed);
        r.fio_version = Some("fio-3.39".into());
        r.invocation = Some("inv-1".into());
        r.iops_series = Some(Series {
            interval_ms: 500,
            write: vec![10, 20, 4_000_000_000],
            read: vec![1],
            last_ms: 250,
            end_fsync_ms: Some(12.5),
        });
        r.disk_stats = vec![
            DiskStat {
                name: "sda".into(),
                read_ios: 1,
                write_ios: 2,
                read_merges: 3,
                write_merges: 4,
                read_ticks_ms: 5,
                write_ticks_ms: 6,
                in_queue_ms: 7,
                util_pct: 92.87,
            };
            2
        ];
        r
    }

    #[test]
    fn a_history_line_is_written_out_as_the_record_read_from_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("h.jsonl");
        let bare = record("2026-11-30T11:00:00Z", 1.0);
        let whole = full();
        let mut text = String::new();
        for r in [&whole, &bare] {
            text.push_str(&serde_json::to_string(r).unwrap());
            text.push('\n');
        }
        // The same record with its keys in another order, spaces, an escape where none is
        // needed, and a key iopscheck does not know.
        let mut v = serde_json::to_value(&whole).unwrap();
        v["unknown"] = "dropped".into();
        let reordered = serde_json::to_string_pretty(&v)
            .unwrap()
            .replace('\n', " ")
            .replace("\"/data\"", "\"\\/data\"");
        text.push_str(&reordered);
        text.push('\n');
        std::fs::write(&p, &text).unwrap();
        let mut runs = Vec::new();
        let skipped = crate::history::scan_runs(
            std::io::BufReader::new(File::open(&p).unwrap()),
            &p,
            crate::history::MAX_LINE,
            None,
            |_| true,
            |r| runs.push(r),
        )
        .unwrap();
        assert!(skipped.is_empty(), "{skipped:?}");
        assert_eq!(runs.len(), 3);
        let records = Records::file(File::open(&p).unwrap(), &p);
        let mut reader = records.reader();
        let held = Records::Memory(Arc::new(vec![whole.clone()]));
        for (run, want) in runs.iter().zip([&whole, &bare, &whole]) {
            let record = reader.with(run, |r| r.clone()).unwrap();
            assert_eq!(&record, want);
            for pretty in [false, true] {
                let out = |v: &dyn Fn(&mut Vec<u8>)| {
                    let mut b = Vec::new();
                    v(&mut b);
                    String::from_utf8(b).unwrap()
                };
                let of_record = out(&|b| {
                    if pretty {
                        serde_json::to_writer_pretty(b, &record).unwrap()
                    } else {
                        serde_json::to_writer(b, &record).unwrap()
                    }
                });
                let of_line = reader
                    .with_whole(run, |w| {
                        out(&|b| {
                            if pretty {
                                serde_json::to_writer_pretty(b, w).unwrap()
                            } else {
                                serde_json::to_writer(b, w).unwrap()
                            }
                        })
                    })
                    .unwrap();
                assert_eq!(of_line, of_record, "pretty: {pretty}");
            }
        }
        // A run holding only some figures reads them all again: the short way from a line as
        // iopscheck writes it, the long way from the reordered one, the same either way.
        let keep: &'static [&'static str] = &[];
        let mut figures = Vec::new();
        for run in &runs {
            let part = run.clone().holding(keep);
            assert!(!part.holds_all());
            reader.figures(&part, &mut figures).unwrap();
            assert_eq!(figures, run.metrics.figures());
            assert_eq!(figures, reader.metrics(&part).unwrap().figures());
            // Some of them, the others passed over: the same figures, in the same order.
            let all = run.metrics.figures();
            let places: Vec<usize> = (0..all.len()).filter(|i| i % 3 != 1).collect();
            reader.figures_at(&part, &places, &mut figures).unwrap();
            let want: Vec<f64> = places.iter().map(|&i| all[i]).collect();
            assert_eq!(figures, want);
            assert!(!want.is_empty());
        }
        // A record held in memory is written as itself.
        let run = Run::of(&whole, 0);
        let mut r = held.reader();
        let a = r
            .with_whole(&run, |w| serde_json::to_string(w).unwrap())
            .unwrap();
        assert_eq!(a, serde_json::to_string(&whole).unwrap());
    }
}
