//! From the blocks read to the output: each job block's shape (from the header printed before
//! the run, `Starting N processes`, the laid-out size, the `issued` sync count) and
//! measurement, and the notes on what the text does not prove.

use chrono::{DateTime, FixedOffset};

use super::date::{local_time, parse_ctime};
use super::fields::DdirLine;
use super::fields::PreHeader;
use super::markers::{Ddir, host_tag};
use super::shorten;
use super::state::{Block, State};
use crate::fio::note::{Place, Unreadable};
use crate::fio::num::version_tuple;
use crate::fio::{FioFormat, FioJob, FioOutput, Note, ParseError};
use crate::job::JobShape;
use crate::measure::{BwBasis, DirectionStats, Latency, Measurement};

/// What the directions read say about the whole text, gathered over its blocks for the
/// closing notes.
#[derive(Default)]
struct Caveats {
    /// A direction without an `issued` line: its I/O count is IOPS × runtime.
    estimated: bool,
    /// A figure printed with a fraction.
    fraction: bool,
    /// A direction in the layout of fio before 2.20.
    old_layout: bool,
}

impl State {
    pub(super) fn finish(self, mut notes: Vec<Note>) -> Result<FioOutput, ParseError> {
        // Direction lines whose figures could not be read: an error when nothing else could
        // be read, else a warning naming each.
        let unreadable = self.unreadable_lines();
        let readable = self.blocks.iter().any(|b| !b.dirs.is_empty());
        if !readable && let Some(first) = unreadable.first() {
            return Err(ParseError::Unreadable(first.to_string()));
        }
        notes.extend(unreadable.into_iter().map(Note::Unreadable));
        notes.extend(self.summaries_without_blocks());
        let (timestamp, zone_note) = match self.date() {
            Some((t, note)) => (Some(t), Some(note)),
            None => (None, None),
        };
        let mut caveats = Caveats::default();
        let mut jobs = Vec::new();
        for b in &self.blocks {
            let mut job = self.job(b, &mut caveats, &mut notes);
            job.timestamp = timestamp;
            jobs.push(job);
        }
        notes.extend(self.closing_notes(&caveats, zone_note));
        Ok(FioOutput {
            format: FioFormat::Text,
            fio_version: self.version,
            timestamp,
            jobs,
            notes,
            command: None,
        })
    }

    /// A line each for the result lines whose figures could not be read, in a job block or
    /// outside any.
    fn unreadable_lines(&self) -> Vec<Unreadable> {
        let mut unreadable = Vec::new();
        for b in &self.blocks {
            for (kind, no, text) in &b.unreadable {
                unreadable.push(Unreadable {
                    line: *no,
                    text: shorten(text),
                    place: Place::Job {
                        job: b.name.clone(),
                        direction: kind.word(),
                        other_read: b.dirs.iter().any(|d| d.kind == *kind),
                    },
                });
            }
        }
        for (no, text) in &self.orphan_unreadable {
            unreadable.push(Unreadable {
                line: *no,
                text: shorten(text),
                place: Place::Outside,
            });
        }
        unreadable
    }

    /// A note for each direction a group's summary shows that none of the group's job blocks
    /// has a line for: its figures are missing.
    fn summaries_without_blocks(&self) -> Vec<Note> {
        let mut notes = Vec::new();
        for (g, kind, no) in &self.summary_kinds {
            let in_group = |b: &&Block| b.groupid == *g;
            let blocks: Vec<&Block> = self.blocks.iter().filter(in_group).collect();
            if !blocks.is_empty()
                && !blocks
                    .iter()
                    .any(|b| b.dirs.iter().any(|d| d.kind == *kind) || !b.unreadable.is_empty())
            {
                notes.push(Note::SummaryWithoutBlock {
                    line: *no,
                    group: *g,
                    direction: kind.word(),
                });
            }
        }
        notes
    }

    /// The first job block's date that reads, as this machine's local time, with the note
    /// that says so.
    fn date(&self) -> Option<(DateTime<FixedOffset>, Note)> {
        self.blocks.iter().find_map(|b| {
            let d = b.date.as_ref()?;
            let local = local_time(parse_ctime(d)?);
            let note = Note::NoTimeZone {
                date: d.split_whitespace().take(5).collect::<Vec<_>>().join(" "),
                offset: *local.offset(),
            };
            Some((local, note))
        })
    }

    /// The job of block `b`: its shape and its measurement.
    fn job(&self, b: &Block, caveats: &mut Caveats, notes: &mut Vec<Note>) -> FioJob {
        let base = host_tag(&b.name).map_or(b.name.as_str(), |(_, r)| r);
        let pre = self
            .pre
            .iter()
            .find(|p| p.name == base && p.group == b.groupid)
            .or_else(|| self.pre.iter().find(|p| p.name == base));
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
            numjobs: self.numjobs(b, pre),
            size: self.laid_out_size(base),
            ..JobShape::default()
        };
        if mixed.is_some() {
            self.keep_what_the_definitions_share(b.groupid, &mut shape);
        }
        let version = self.version.as_deref().and_then(version_tuple);
        shape.end_fsync = end_fsync_from_issued(version, b, &shape);
        // fio prints the `fsync/fdatasync/sync_file_range:` section only for a job that
        // synced as it wrote (an end fsync alone prints none): fsync or fdatasync was set,
        // the text does not say which.
        if b.sync.is_some() {
            shape.synced = Some(true);
        }
        let m = measurement(b, &shape, caveats, notes);
        let mut job = FioJob::new(b.name.clone(), b.groupid, shape, m, b.err);
        job.mixed = mixed;
        job.error_text = b.err_text.clone();
        job.place = format!("line {}", b.line);
        job.process = b.pid.map(|p| format!("pid={p}"));
        job.ios_counted = b.issued.is_some();
        job.depths = b.depths;
        // fio 3.33 counts no fdatasync in the `issued` sync column (it shows them among the
        // `short` reads): a count of 0 beside a sync section is not the job's.
        if b.issued_sync_column
            && let Some(i) = b.issued
            && !(i[3] == 0 && b.sync.is_some())
        {
            job.syncs = Some(crate::fio::syncs_in_run(
                i[3],
                self.version.as_deref(),
                b.jobs,
            ));
        }
        job.grouped = self.status_groups.contains(&b.groupid);
        job
    }

    /// The block's count of jobs: its own `jobs=N` past 1, else what the header line before
    /// the run (`pre`) and the `Starting N processes` line prove.
    fn numjobs(&self, b: &Block, pre: Option<&PreHeader>) -> Option<u32> {
        if b.jobs > 1 {
            return Some(b.jobs);
        }
        match pre {
            Some(p) if !p.cloned => Some(1),
            Some(_) if self.pre.len() == 1 => self.started,
            Some(_) => None,
            // no header line and no "Starting" line: the block's own `jobs=1`, when
            // no other block has its name (numjobs clones without group_reporting
            // print one block each) and the output is not cut
            None if self.started.is_none()
                && self.group_lines
                && self.blocks.iter().filter(|x| x.name == b.name).count() == 1 =>
            {
                Some(1)
            }
            None => None,
        }
    }

    /// The size fio laid out for the job named `name`.
    fn laid_out_size(&self, name: &str) -> Option<u64> {
        self.laid_out
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| *s)
    }

    /// A group reported over several job definitions: each field of the shape only where
    /// every definition of the group has the same.
    fn keep_what_the_definitions_share(&self, group: u32, shape: &mut JobShape) {
        let group: Vec<&PreHeader> = self.pre.iter().filter(|p| p.group == group).collect();
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
        if !all_same(&|p| format!("{:?}", self.laid_out.iter().find(|(n, _)| *n == p.name))) {
            shape.size = None;
        }
    }

    /// The notes that close a text's reading: the figures' precision and where the I/O counts
    /// come from, the date's zone, an interruption, fio's errors, a missing summary and terse
    /// lines passed over.
    fn closing_notes(&self, caveats: &Caveats, zone_note: Option<Note>) -> Vec<Note> {
        let mut notes = vec![Note::TextPrecision {
            estimated: caveats.estimated,
        }];
        let before_2_20 = match self.version.as_deref().and_then(version_tuple) {
            Some(v) => v < (2, 20),
            None => caveats.old_layout,
        };
        if caveats.fraction && before_2_20 {
            notes.push(Note::UnreliableLastDigit);
        }
        if let Some(z) = zone_note {
            notes.push(z);
        }
        if self.interrupted {
            notes.push(Note::Interrupted);
        }
        if let Some(first) = self.errors.first() {
            notes.push(Note::ErrorLines {
                count: self.errors.len(),
                first: first.clone(),
            });
        }
        if !self.group_lines {
            notes.push(Note::NoGroupSummary);
        }
        if self.extra_terse {
            notes.push(Note::TerseIgnored);
        }
        notes
    }
}

/// Block `b`'s measurement: CPU, syncs and each direction it printed (a mixed one,
/// `unified_rw_reporting`, only where the job does one kind of I/O).
fn measurement(
    b: &Block,
    shape: &JobShape,
    caveats: &mut Caveats,
    notes: &mut Vec<Note>,
) -> Measurement {
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
        caveats.fraction |= d.fraction;
        caveats.old_layout |= d.old_layout;
        if let Some((bw, decimal)) = &d.mismatch {
            notes.push(Note::MisprintedBandwidth {
                job: b.name.clone(),
                bw: bw.clone(),
                decimal: decimal.clone(),
            });
        }
        let issued = b.issued.map(|i| match d.kind {
            Ddir::Read => i[0],
            Ddir::Write => i[1],
            Ddir::Trim => i[2],
            Ddir::Mixed => i[..3].iter().fold(0u64, |a, &x| a.saturating_add(x)),
        });
        caveats.estimated |= issued.is_none();
        let kind = d.kind;
        let dir = into_direction(d, issued);
        match kind {
            Ddir::Read => m.read = Some(dir),
            Ddir::Write => m.write = Some(dir),
            Ddir::Trim => {}
            Ddir::Mixed => match shape.rw {
                Some(rw) if rw.writes() && !rw.reads() => m.write = Some(dir),
                Some(rw) if rw.reads() && !rw.writes() => m.read = Some(dir),
                _ => notes.push(Note::UnifiedRw {
                    job: b.name.clone(),
                }),
            },
        }
    }
    m
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
        None => b.dirs.iter().any(|d| d.kind == Ddir::Write),
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

fn into_direction(d: DdirLine, issued: Option<u64>) -> DirectionStats {
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
    DirectionStats {
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
