//! fio's JSON and json+ outputs, fio 2.1 → 3.4x.
//!
//! Units by version (fio-semantics.md §6): `io_bytes` is KiB when there is no `io_kbytes` key
//! (≤ 2.20); `bw` is KiB/s and `bw_bytes` (≥ 3.2) B/s; `iops` is a float; `runtime` is ms;
//! latencies are `clat`/`lat`/`slat` in µs up to 2.x and `*_ns` in ns from 3.0.

use std::collections::HashMap;

use chrono::{DateTime, FixedOffset};
use serde_json::{Map, Value};

use super::num::fio_option_bool;
pub(super) use super::options::{
    RankedOption, fill_defaults, options_listed, ranked, shape_from_ranked,
};
use super::{FioFormat, FioJob, FioOutput, Note, ParseError, count_lines};
use crate::job::JobShape;
use crate::measure::{BwBasis, DirectionStats, Latency, Measurement};

/// Where the JSON starts: the first `{` followed by a key (`{ "fio version"…`), so that braces
/// in noise before it (`${HOME}` in a prompt) are passed over.
pub(super) fn find_start(text: &str, from: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = from;
    while let Some(off) = text.get(i..)?.find('{') {
        let at = i + off;
        let next = bytes[at + 1..]
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            .copied();
        if next == Some(b'"') {
            return Some(at);
        }
        i = at + 1;
    }
    None
}

/// Reads the JSON report(s) starting at `start`. `Ok(None)`: valid JSON, but not fio's.
pub(super) fn parse(text: &str, start: usize) -> Result<Option<FioOutput>, ParseError> {
    let scan = Scan::of(text, start);
    if scan.reports.is_empty() {
        return match scan.first_error {
            Some(e) => Err(e),
            None => Ok(None),
        };
    }
    let mut notes = scan.notes;
    notes.extend(surroundings(text, scan.report_at, scan.end));
    let runs = runs_of(scan.reports);
    let count = runs.len();
    let mut out = read_runs(runs);
    out.notes.splice(0..0, notes);
    if count > 1 {
        out.notes.push(Note::JsonRuns { count });
    }
    Ok(Some(out))
}

/// The JSON values found from a start on: fio's reports (also inside kubestr's), where the
/// first began and the last ended, and what the reading met on the way.
struct Scan {
    reports: Vec<Value>,
    /// The kubestr note, or a damaged report after a complete one.
    notes: Vec<Note>,
    /// Why nothing could be read, where no report was.
    first_error: Option<ParseError>,
    /// Where the first report starts and where the last JSON value read ends.
    report_at: usize,
    end: usize,
}

impl Scan {
    /// `--status-interval` writes one report after another; the last complete one is the
    /// result. A `{"` in the noise before the report fails to parse and the next one is tried.
    /// The attempts are bounded so that a hostile input cannot keep the parser busy.
    fn of(text: &str, start: usize) -> Scan {
        let mut scan = Scan {
            reports: Vec::new(),
            notes: Vec::new(),
            first_error: None,
            report_at: start,
            end: start,
        };
        let mut pos = start;
        let mut failures = 0;
        for _ in 0..1000 {
            let slice = &text[pos..];
            let mut stream = serde_json::Deserializer::from_str(slice).into_iter::<Value>();
            let next_from = match stream.next() {
                Some(Ok(v)) => {
                    scan.end = pos + stream.byte_offset();
                    scan.take(v, pos);
                    scan.end
                }
                Some(Err(e)) => {
                    let line = count_lines(&text[..pos]) + e.line();
                    if !scan.reports.is_empty() {
                        scan.notes.push(Note::DamagedReport { line });
                        break;
                    }
                    failures += 1;
                    scan.first_error.get_or_insert(if e.is_eof() {
                        ParseError::Truncated(format!(
                            "the JSON output ends before it is complete, at line {line}"
                        ))
                    } else {
                        ParseError::NotFio(format!(
                            "the JSON output is damaged at line {line}, column {}: {e}",
                            e.column()
                        ))
                    });
                    if e.is_eof() || failures >= 20 {
                        break;
                    }
                    pos + 1
                }
                None => break,
            };
            match find_start(text, next_from) {
                Some(next) => pos = next,
                None => break,
            }
        }
        scan
    }

    /// Keeps `v`, read at `pos`, when it is fio's report or kubestr's around fio's.
    fn take(&mut self, v: Value, pos: usize) {
        let found = if is_fio_report(&v) {
            vec![v]
        } else if let Some(inner) = kubestr_reports(&v) {
            if !self.notes.contains(&Note::Kubestr) {
                self.notes.push(Note::Kubestr);
            }
            inner
        } else {
            return;
        };
        if self.reports.is_empty() {
            self.report_at = pos;
        }
        self.reports.extend(found);
    }
}

/// What stands around the reports: lines of noise before them and after them, and fio's
/// word that the run was interrupted.
fn surroundings(text: &str, report_at: usize, end: usize) -> Vec<Note> {
    let mut notes = Vec::new();
    let before = &text[..report_at];
    let noise = before.lines().filter(|l| !l.trim().is_empty()).count();
    if noise > 0 {
        notes.push(Note::NoiseBefore {
            lines: noise,
            json: true,
        });
    }
    let after = text.get(end..).unwrap_or("");
    let trailing = after.lines().filter(|l| !l.trim().is_empty()).count();
    if trailing > 0 {
        notes.push(Note::AfterJson { lines: trailing });
    }
    if text.contains("terminating on signal") {
        notes.push(Note::Interrupted);
    }
    notes
}

/// The reports grouped by fio run (`--status-interval` writes one after another, each the
/// run so far), and the runs one after another (a command run twice, a report pasted
/// twice): a report starts a run of its own unless it is a later status of the one before.
fn runs_of(reports: Vec<Value>) -> Vec<Vec<Value>> {
    let mut runs: Vec<Vec<Value>> = Vec::new();
    for r in reports {
        match runs.last_mut() {
            Some(series)
                if series
                    .last()
                    .is_some_and(|last| *last != r && status_of_one_run(last, &r)) =>
            {
                series.push(r)
            }
            _ => runs.push(vec![r]),
        }
    }
    runs
}

/// Each run's last report read, its jobs placed ("JSON report 2, job 1" where there are
/// several runs), one after another in one output.
fn read_runs(runs: Vec<Vec<Value>>) -> FioOutput {
    let count = runs.len();
    let mut out: Option<FioOutput> = None;
    for (k, mut series) in runs.into_iter().enumerate() {
        let report = series.pop().expect("a run has a report");
        let mut run_notes = Vec::new();
        if !series.is_empty() {
            run_notes.push(Note::StatusReports {
                count: series.len() + 1,
            });
        }
        let mut run = read_report(&report, run_notes);
        for (i, j) in run.jobs.iter_mut().enumerate() {
            j.invocation = k;
            j.place = if count > 1 {
                format!("JSON report {}, job {}", k + 1, i + 1)
            } else {
                format!("JSON job {}", i + 1)
            };
        }
        out = Some(match out {
            None => run,
            Some(all) => all.followed_by(run),
        });
    }
    out.expect("at least one report")
}

/// Whether `later` is a later status report of the run `earlier` reports (fio
/// `--status-interval`): the same jobs started at the same moment. fio ≥ 3.36 states each
/// job's start (`job_start`); before, the report's time less the seconds since fio started
/// (`timestamp` − `elapsed`) is the run's start. Without either, a later status has the same
/// jobs, each further on (no direction with less I/O or runtime, one with more).
fn status_of_one_run(earlier: &Value, later: &Value) -> bool {
    let jobs = |r: &Value| -> Vec<Value> {
        r.get("jobs")
            .or_else(|| r.get("client_stats"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let (a, b) = (jobs(earlier), jobs(later));
    let key = |j: &Value| (j.get("jobname").cloned(), j.get("groupid").cloned());
    if a.len() != b.len() || a.iter().zip(&b).any(|(x, y)| key(x) != key(y)) {
        return false;
    }
    let starts = |js: &[Value]| -> Option<Vec<u64>> {
        js.iter()
            .map(|j| j.get("job_start").and_then(as_u64).filter(|&s| s > 0))
            .collect()
    };
    if let (Some(x), Some(y)) = (starts(&a), starts(&b)) {
        return x == y;
    }
    let began = |r: &Value, js: &[Value]| -> Option<i64> {
        let t = r.get("timestamp").and_then(as_u64)?;
        let e = js
            .iter()
            .filter_map(|j| j.get("elapsed").and_then(as_u64))
            .max()?;
        i64::try_from(t).ok()?.checked_sub(i64::try_from(e).ok()?)
    };
    if let (Some(x), Some(y)) = (began(earlier, &a), began(later, &b)) {
        // `elapsed` is rounded up to the second, and the report's time is taken after it
        return (x - y).abs() <= 2;
    }
    let mut further = false;
    for (x, y) in a.iter().zip(&b) {
        for dir in ["read", "write", "trim"] {
            for k in ["io_bytes", "runtime"] {
                let v = |j: &Value| {
                    j.get(dir)
                        .and_then(|d| d.get(k))
                        .and_then(as_u64)
                        .unwrap_or(0)
                };
                match v(y).cmp(&v(x)) {
                    std::cmp::Ordering::Less => return false,
                    std::cmp::Ordering::Greater => further = true,
                    std::cmp::Ordering::Equal => {}
                }
            }
        }
    }
    further
}

/// Marks a report whose options are kubestr's short list, not every option of the job.
const PARTIAL_OPTIONS: &str = "iopscheck: options partly listed";

/// fio's JSON reports inside kubestr's (`kubestr fio -o json`: `{ size, storageClass,
/// fioConfig, result }`, `result` one report or one per pod), each with its options from the
/// job file kubestr ran (`fioConfig`) where that is given: kubestr keeps only some of fio's
/// options in the report itself. None when `v` is not kubestr's.
fn kubestr_reports(v: &Value) -> Option<Vec<Value>> {
    let result = v.get("result")?;
    if !(v.get("fioConfig").is_some() || v.get("storageClass").is_some() || v.get("size").is_some())
    {
        return None;
    }
    let mut reports: Vec<Value> = if is_fio_report(result) {
        vec![result.clone()]
    } else {
        result
            .as_object()?
            .values()
            .filter(|r| is_fio_report(r))
            .cloned()
            .collect()
    };
    if reports.is_empty() {
        return None;
    }
    let config = v.get("fioConfig").and_then(Value::as_str).map(job_file);
    for r in &mut reports {
        let Some(obj) = r.as_object_mut() else {
            continue;
        };
        match &config {
            Some((global, sections)) => {
                obj.insert("global options".into(), Value::Object(global.clone()));
                if let Some(jobs) = obj.get_mut("jobs").and_then(Value::as_array_mut) {
                    for j in jobs {
                        let name = j
                            .get("jobname")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string();
                        let own = sections
                            .iter()
                            .find(|(n, _)| *n == name)
                            .map(|(_, o)| o.clone())
                            .unwrap_or_default();
                        if let Some(j) = j.as_object_mut() {
                            j.insert("job options".into(), Value::Object(own));
                        }
                    }
                }
            }
            None => {
                obj.insert(PARTIAL_OPTIONS.into(), Value::Bool(true));
            }
        }
    }
    Some(reports)
}

/// One `[name]` section of a job file: the job's name and its options.
type JobSection = (String, Map<String, Value>);

/// A fio job file: the `[global]` options and each job's own, as fio's JSON lists them
/// (`key=value`; a bare flag such as `time_based` as "1").
fn job_file(text: &str) -> (Map<String, Value>, Vec<JobSection>) {
    let mut global = Map::new();
    let mut sections: Vec<JobSection> = Vec::new();
    let mut cur: Option<usize> = None;
    let mut in_global = false;
    for l in text.lines() {
        let t = l.trim();
        if t.is_empty() || t.starts_with('#') || t.starts_with(';') {
            continue;
        }
        if let Some(name) = t.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            in_global = name == "global";
            if !in_global {
                sections.push((name.to_string(), Map::new()));
                cur = Some(sections.len() - 1);
            } else {
                cur = None;
            }
            continue;
        }
        let (k, v) = match t.split_once('=') {
            Some((k, v)) => (k.trim(), v.trim()),
            None => (t, "1"),
        };
        let target = if in_global {
            &mut global
        } else if let Some(c) = cur {
            &mut sections[c].1
        } else {
            continue;
        };
        target.insert(k.to_string(), Value::String(v.to_string()));
    }
    (global, sections)
}

fn is_fio_report(v: &Value) -> bool {
    v.get("jobs").is_some_and(Value::is_array) || v.get("client_stats").is_some_and(Value::is_array)
}

/// What the directions' keys tell of the report's version and units, gathered over its jobs.
#[derive(Default)]
struct Keys {
    /// Latency bins: json+.
    plus: bool,
    /// `io_bytes` without `io_kbytes`: KiB (fio ≤ 2.20).
    kib_io: bool,
    /// A direction without `bw_bytes` (before fio 3.2).
    no_bw_bytes: bool,
}

fn read_report(report: &Value, mut notes: Vec<Note>) -> FioOutput {
    let fio_version = report
        .get("fio version")
        .and_then(Value::as_str)
        .map(|v| v.trim().trim_start_matches("fio-").to_string());
    let timestamp = report
        .get("timestamp")
        .and_then(as_u64)
        .and_then(|s| i64::try_from(s).ok())
        .and_then(|s| DateTime::from_timestamp(s, 0))
        .map(|t| t.with_timezone(&FixedOffset::east_opt(0).expect("UTC is a valid offset")));

    let global = options(report.get("global options"));
    let entries = report
        .get("jobs")
        .or_else(|| report.get("client_stats"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let disk = super::disk::from_json(report.get("disk_util"));

    let mut keys = Keys::default();
    let mut jobs = Vec::new();
    for j in entries {
        let Some(obj) = j.as_object() else { continue };
        let name = obj
            .get("jobname")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if report.get("jobs").is_none() && name == "All clients" {
            continue;
        }
        // a client/server run's job is named with its host, as the text tags it: the
        // clients' jobs ran on their own machines
        let name = match obj.get("hostname").and_then(Value::as_str) {
            Some(h) if report.get("jobs").is_none() && !h.is_empty() => format!("<{h}> {name}"),
            _ => name,
        };
        let shape = job_shape(report, obj, &global, &mut notes);
        let mut m = measurement(obj, &name, &shape, &mut keys, &mut notes);
        m.disk = disk.clone();
        let mut job = FioJob::new(
            name,
            obj.get("groupid")
                .and_then(as_u64)
                .and_then(|g| u32::try_from(g).ok())
                .unwrap_or(0),
            shape,
            m,
            obj.get("error")
                .and_then(Value::as_i64)
                .and_then(|e| i32::try_from(e).ok())
                .unwrap_or(0),
        );
        job.timestamp = timestamp;
        job.ios_counted = ["read", "write"]
            .iter()
            .filter_map(|d| obj.get(*d))
            .all(|d| d.get("total_ios").is_some());
        job.syncs = sync_count(obj).map(|n| {
            let jobs = job.shape.numjobs.unwrap_or(1);
            super::syncs_in_run(n, fio_version.as_deref(), jobs)
        });
        job.process = obj
            .get("job_start")
            .and_then(as_u64)
            .filter(|&s| s > 0)
            .map(|s| format!("job_start={s}"));
        job.stonewall = stonewall(obj, &global);
        job.window_ms = obj
            .get("job_start")
            .and_then(as_u64)
            .filter(|&s| s > 0)
            .zip(obj.get("job_runtime").and_then(as_u64))
            .map(|(start, ran)| (start, start.saturating_add(ran)));
        // One report is one run, with fio's accounting of every group in it.
        job.grouped = true;
        jobs.push(job);
    }

    if keys.kib_io {
        notes.push(Note::KibIo);
    } else if keys.no_bw_bytes {
        notes.push(Note::NoBwBytes);
    }
    FioOutput {
        format: if keys.plus {
            FioFormat::JsonPlus
        } else {
            FioFormat::Json
        },
        fio_version,
        timestamp,
        jobs,
        notes,
        command: None,
    }
}

/// The shape of job `obj` from the report's global options and its own, with the limits it
/// states and what an unlisted `end_fsync` proves.
fn job_shape(
    report: &Value,
    obj: &Map<String, Value>,
    global: &HashMap<String, String>,
    notes: &mut Vec<Note>,
) -> JobShape {
    let mut opts = global.clone();
    opts.extend(options(obj.get("job options")));
    // fio applies the global options before the job's; within one list the JSON (read into a
    // sorted map) does not keep their order
    let ranked = ranked(&[
        options_listed(report.get("global options")),
        options_listed(obj.get("job options")),
    ]);
    let (mut shape, mut unknown) = shape_from_ranked(&ranked, None);
    if unknown.contains(&"bs") {
        // the bytes per I/O the job moved tell which base its block size was read with
        let per_io = ["write", "read"].iter().find_map(|d| {
            let d = obj.get(*d)?;
            let (bytes, ios) = (
                d.get("io_bytes").and_then(as_u64)?,
                d.get("total_ios").and_then(as_u64)?,
            );
            (ios > 0 && d.get("io_kbytes").is_some() && bytes % ios == 0).then_some(bytes / ios)
        });
        if let Some(bs) = [1000, 1024]
            .iter()
            .filter_map(|&b| shape_from_ranked(&ranked, Some(b)).0.bs)
            .find(|&bs| Some(bs) == per_io)
        {
            shape.bs = Some(bs);
            unknown.retain(|f| *f != "bs");
        }
    }
    if !unknown.is_empty() {
        notes.push(Note::KbBaseOrder {
            job: obj
                .get("jobname")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            options: unknown.iter().map(|s| s.to_string()).collect(),
        });
    }
    // kubestr's JSON without its job file lists only some options: what it does not list
    // is unknown.
    let partial = report.get(PARTIAL_OPTIONS).is_some();
    shape.limits = stated_limits(report.get("global options"), obj.get("job options"), &opts)
        .filter(|_| !partial);
    // A JSON output lists every option the job was given: an end_fsync it does not list
    // is fio's default, 0, so the output proves there was none.
    if !partial {
        fill_defaults(&mut shape);
    }
    shape
}

/// Whether the job waited for the jobs before it (`stonewall`, `wait_for_previous`), where
/// the output lists it. fio 3.33 leaves both out of a job's JSON options even when given (a
/// job given `stonewall` shows `"job options" : {}`), so an option not listed is unknown.
fn stonewall(obj: &Map<String, Value>, global: &HashMap<String, String>) -> Option<bool> {
    let mut opts = global.clone();
    opts.extend(options(obj.get("job options")));
    ["stonewall", "wait_for_previous"]
        .iter()
        .find_map(|k| opts.get(*k))
        .and_then(|v| fio_option_bool(v))
}

/// Job `obj`'s measurement: CPU, each direction (a mixed one only where the job does one kind
/// of I/O) and its syncs.
fn measurement(
    obj: &Map<String, Value>,
    name: &str,
    shape: &JobShape,
    keys: &mut Keys,
    notes: &mut Vec<Note>,
) -> Measurement {
    let mut m = Measurement {
        bs: shape.bs,
        cpu_usr_pct: obj.get("usr_cpu").and_then(Value::as_f64),
        cpu_sys_pct: obj.get("sys_cpu").and_then(Value::as_f64),
        ..Measurement::default()
    };
    for (key, slot) in [("read", &mut m.read), ("write", &mut m.write)] {
        if let Some(d) = obj.get(key).and_then(Value::as_object) {
            keys.plus |= has_bins(d);
            keys.kib_io |= d.contains_key("io_bytes") && !d.contains_key("io_kbytes");
            if let Some(dir) = direction(d, shape.bs) {
                keys.no_bw_bytes |= !d.contains_key("bw_bytes");
                *slot = Some(dir);
            }
        }
    }
    // unified_rw_reporting: one "mixed" direction. It is a write or read figure only when
    // the job does one direction.
    if let Some(d) = obj.get("mixed").and_then(Value::as_object)
        && let Some(dir) = direction(d, shape.bs)
    {
        match shape.rw {
            Some(rw) if rw.writes() && !rw.reads() && m.write.is_none() => m.write = Some(dir),
            Some(rw) if rw.reads() && !rw.writes() && m.read.is_none() => m.read = Some(dir),
            _ => notes.push(Note::UnifiedRw { job: name.into() }),
        }
    }
    m.sync = obj.get("sync").and_then(Value::as_object).and_then(syncs);
    m
}

/// How many syncs the job's `sync` object counts (its `total_ios`, or its latency's N, which fio
/// 3.x fills where it leaves `total_ios` at 0); None without the object.
fn sync_count(job: &Map<String, Value>) -> Option<u64> {
    let sync = job.get("sync")?.as_object()?;
    let n = sync
        .get("lat_ns")
        .and_then(Value::as_object)
        .and_then(|l| l.get("N"))
        .and_then(as_u64);
    let total = sync.get("total_ios").and_then(as_u64);
    n.into_iter().chain(total).max()
}

/// The syncs' latency, where the job issued any. fio 3.x leaves `sync.total_ios` at 0 although
/// it counted the syncs: the latency object's N says how many there were.
fn syncs(sync: &Map<String, Value>) -> Option<Latency> {
    let n = sync
        .get("lat_ns")
        .and_then(Value::as_object)
        .and_then(|l| l.get("N"))
        .and_then(as_u64)
        .unwrap_or(0);
    let total = sync.get("total_ios").and_then(as_u64).unwrap_or(0).max(n);
    if total > 0 {
        latency(sync, "lat_ns", "lat", total)
    } else {
        None
    }
}

fn has_bins(d: &Map<String, Value>) -> bool {
    ["clat_ns", "lat_ns", "slat_ns"]
        .iter()
        .any(|k| d.get(*k).and_then(|l| l.get("bins")).is_some())
}

/// Options as strings (fio writes them as strings; numbers are tolerated).
pub(super) fn options(v: Option<&Value>) -> HashMap<String, String> {
    let mut out = HashMap::new();
    if let Some(map) = v.and_then(Value::as_object) {
        for (k, v) in map {
            let s = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => u8::from(*b).to_string(),
                _ => continue,
            };
            out.insert(k.to_ascii_lowercase(), s);
        }
    }
    out
}

/// The job's limits (`rate_iops`, `thinktime`…: [`crate::job::LIMITS`]) from its options, the
/// global ones with its own: a JSON output lists every option a job was given, so one it does
/// not list is fio's default, no limit. None where the output has neither list.
fn stated_limits(
    global: Option<&Value>,
    job: Option<&Value>,
    opts: &HashMap<String, String>,
) -> Option<std::collections::BTreeMap<String, String>> {
    if !global.is_some_and(Value::is_object) && !job.is_some_and(Value::is_object) {
        return None;
    }
    Some(crate::job::limits_of(
        opts.iter().map(|(k, v)| (k.as_str(), v.as_str())),
    ))
}

fn as_u64(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| f.is_finite() && *f >= 0.0)
            .map(|f| f as u64)
    })
}

/// One direction; None when it did no I/O (fio prints zeros for idle directions).
fn direction(d: &Map<String, Value>, bs: Option<u64>) -> Option<DirectionStats> {
    let num = |k: &str| d.get(k).and_then(as_u64);
    let io = num("io_bytes").unwrap_or(0);
    let runtime_ms = num("runtime").unwrap_or(0);
    let total_ios = num("total_ios");
    if io == 0 && runtime_ms == 0 && total_ios.unwrap_or(0) == 0 {
        return None;
    }
    let kib = !d.contains_key("io_kbytes");
    let bytes = if kib { io.saturating_mul(1024) } else { io };
    let iops = d.get("iops").and_then(Value::as_f64).unwrap_or(0.0);
    let bw_bytes = match d.get("bw_bytes").and_then(Value::as_f64) {
        Some(b) => b,
        None if runtime_ms > 0 => ((bytes as u128 * 1000) / runtime_ms as u128) as f64,
        None => num("bw").unwrap_or(0) as f64 * 1024.0,
    };
    // Without total_ios (fio 2.1) the count follows from the bytes when the block size is
    // fixed, else from IOPS × runtime.
    let ios = total_ios.unwrap_or_else(|| match bs {
        Some(bs) if bs > 0 => bytes / bs,
        _ => {
            // an integer IOPS (fio 2.1) was truncated: N means N to N + 1
            let half = if d.get("iops").is_some_and(Value::is_u64) {
                0.5
            } else {
                0.0
            };
            ((iops + half) * runtime_ms as f64 / 1000.0).round() as u64
        }
    });
    // KiB counts are exact bytes only when every I/O is a whole number of KiB.
    let exact = !kib || d.contains_key("bw_bytes") || bs.is_some_and(|b| b > 0 && b % 1024 == 0);
    Some(DirectionStats {
        ios,
        bytes,
        runtime_ms,
        iops,
        bw_bytes,
        bw_mb_s_printed: None,
        bw_basis: if exact {
            BwBasis::Exact
        } else {
            BwBasis::Printed
        },
        clat: latency(d, "clat_ns", "clat", ios),
        lat: latency(d, "lat_ns", "lat", ios),
        slat: latency(d, "slat_ns", "slat", ios),
        samples: super::disk::samples_json(d),
    })
}

/// A latency object: `*_ns` in ns (≥ 3.0) or the older µs object. None when it holds no
/// samples (`N` = 0, or all zeros as with `gtod_reduce` or a sync engine's slat).
fn latency(d: &Map<String, Value>, ns_key: &str, us_key: &str, ios: u64) -> Option<Latency> {
    let (obj, mult) = match d.get(ns_key).and_then(Value::as_object) {
        Some(o) => (o, 1.0),
        None => (d.get(us_key).and_then(Value::as_object)?, 1000.0),
    };
    let f = |k: &str| obj.get(k).and_then(Value::as_f64).unwrap_or(0.0) * mult;
    let n = obj.get("N").and_then(as_u64);
    let (min, max, mean) = (f("min"), f("max"), f("mean"));
    if n == Some(0) || (min == 0.0 && max == 0.0 && mean == 0.0) {
        return None;
    }
    let mut percentiles: Vec<(f64, f64)> = obj
        .get("percentile")
        .and_then(Value::as_object)
        .map(|p| {
            p.iter()
                .filter_map(|(k, v)| {
                    let q: f64 = k.trim().parse().ok()?;
                    let v = v.as_f64()?;
                    // fio 2.x pads the object with "0.00": 0 entries
                    (q > 0.0 && q <= 100.0).then_some((q, v * mult))
                })
                .collect()
        })
        .unwrap_or_default();
    percentiles.sort_by(|a, b| a.0.total_cmp(&b.0));
    percentiles.dedup_by(|a, b| (a.0 - b.0).abs() < 1e-9);
    Some(Latency {
        n: n.unwrap_or(ios),
        min_ns: min,
        max_ns: max,
        mean_ns: mean,
        stddev_ns: f("stddev"),
        percentiles,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::{Rw, SyncMode};

    /// Options given one after another (a command line's order).
    fn opts(pairs: &[(&str, &str)]) -> Vec<RankedOption> {
        pairs
            .iter()
            .enumerate()
            .map(|(i, (k, v))| (k.to_string(), v.to_string(), i as u32))
            .collect()
    }

    fn shape_from_options(o: &[RankedOption]) -> JobShape {
        shape_from_ranked(o, None).0
    }

    #[test]
    fn kb_base_reads_only_the_sizes_after_it() {
        let after = opts(&[("bs", "4k"), ("size", "8m"), ("kb_base", "1000")]);
        let s = shape_from_options(&after);
        assert_eq!((s.bs, s.size), (Some(4096), Some(8 << 20)));
        let before = opts(&[("kb_base", "1000"), ("bs", "4k"), ("size", "8m")]);
        let s = shape_from_options(&before);
        assert_eq!((s.bs, s.size), (Some(4000), Some(8_000_000)));
        // one list whose order is unknown: sizes that read differently are not stated
        let one: Vec<RankedOption> = after.into_iter().map(|(k, v, _)| (k, v, 0)).collect();
        let (s, unknown) = shape_from_ranked(&one, None);
        assert_eq!((s.bs, s.size), (None, None));
        assert_eq!(unknown, vec!["bs", "size"]);
        // a size in bytes reads the same under either
        let bytes = ranked(&[vec![
            ("kb_base".into(), "1000".into()),
            ("size".into(), "8388608".into()),
        ]]);
        assert_eq!(
            shape_from_ranked(&bytes, None),
            (
                JobShape {
                    size: Some(8 << 20),
                    ..JobShape::default()
                },
                vec![]
            )
        );
    }

    #[test]
    fn shapes_from_options() {
        let s = shape_from_options(&opts(&[
            ("rw", "randwrite"),
            ("bs", "4k,8k"),
            ("size", "4KiB"),
            ("ioengine", "libaio"),
            ("iodepth", "32"),
            ("numjobs", "4"),
            ("runtime", "1m"),
            ("time_based", ""),
            ("end_fsync", "1"),
            ("fdatasync", "8"),
            ("sync", "dsync"),
        ]));
        assert_eq!(s.rw, Some(Rw::RandWrite));
        assert_eq!(
            s.bs,
            Some(8192),
            "bs=read,write: the write size for a write job"
        );
        assert_eq!(
            s.size,
            Some(4000),
            "fio reads KiB as 1000 with kb_base=1024"
        );
        assert_eq!((s.iodepth, s.numjobs), (Some(32), Some(4)));
        assert_eq!(s.runtime_s, Some(60.0));
        assert_eq!((s.time_based, s.end_fsync), (Some(true), Some(true)));
        assert_eq!((s.fsync, s.fdatasync), (None, Some(8)));
        assert_eq!(s.sync, Some(SyncMode::Dsync));

        let s = shape_from_options(&opts(&[
            ("readwrite", "randrw:8"),
            ("blocksize", "4k-64k"),
            ("kb_base", "1000"),
            ("rwmixwrite", "30"),
            ("size", "4KiB"),
            ("direct", "0"),
        ]));
        assert_eq!(s.rw, Some(Rw::RandRw));
        assert_eq!(s.bs, None, "a range is not a single size");
        assert_eq!(s.rwmixread, Some(70));
        assert_eq!(s.size, Some(4096));
        assert_eq!(s.direct, Some(false));
        assert_eq!(s.numjobs, None);
    }

    const CLIENT: &str = r#"{
      "fio version" : "fio-3.33",
      "client_stats" : [
        { "jobname" : "w", "groupid" : 0, "error" : 0, "hostname" : "a",
          "job options" : { "rw" : "randwrite", "bs" : "4k" },
          "write" : { "io_bytes" : 4096000, "io_kbytes" : 4000, "bw_bytes" : 409600,
                      "bw" : 400, "iops" : 100.0, "runtime" : 10000, "total_ios" : 1000 },
          "read" : { "io_bytes" : 0, "io_kbytes" : 0, "bw_bytes" : 0, "bw" : 0, "iops" : 0.0,
                     "runtime" : 0, "total_ios" : 0 },
          "sync" : { "total_ios" : 125, "lat_ns" : { "min" : 1000, "max" : 9000,
                     "mean" : 2000.0, "stddev" : 10.0, "N" : 125,
                     "percentile" : { "99.000000" : 8960 } } } },
        { "jobname" : "All clients", "groupid" : 0, "error" : 0,
          "write" : { "io_bytes" : 4096000, "io_kbytes" : 4000, "iops" : 100.0, "runtime" : 10000 } }
      ]
    }"#;

    #[test]
    fn client_server_reports_and_sync_latency() {
        let out = parse(CLIENT, 0).unwrap().unwrap();
        assert_eq!(out.jobs.len(), 1, "the 'All clients' sum is not a job");
        assert_eq!(
            out.jobs[0].name, "<a> w",
            "named with its host, as the text names it"
        );
        let m = &out.jobs[0].measurement;
        assert!(m.read.is_none());
        let w = m.write.as_ref().unwrap();
        assert_eq!((w.ios, w.bytes, w.bw_bytes), (1000, 4_096_000, 409_600.0));
        let sync = m.sync.as_ref().unwrap();
        assert_eq!(sync.n, 125);
        assert_eq!(sync.percentile(99.0), Some(8960.0));
    }

    #[test]
    fn unified_mixed_figures_go_to_the_only_direction() {
        let json = r#"{ "fio version" : "fio-3.33", "jobs" : [ { "jobname" : "m", "groupid" : 0,
            "job options" : { "rw" : "randwrite", "unified_rw_reporting" : "1" },
            "mixed" : { "io_bytes" : 8192, "io_kbytes" : 8, "bw_bytes" : 8192, "iops" : 2.0,
                        "runtime" : 1000, "total_ios" : 2 } } ] }"#;
        let out = parse(json, 0).unwrap().unwrap();
        assert_eq!(out.jobs[0].measurement.write.as_ref().unwrap().ios, 2);
        let json = json.replace("randwrite", "randrw");
        let out = parse(&json, 0).unwrap().unwrap();
        assert!(out.jobs[0].measurement.write.is_none());
        assert!(
            out.notes
                .iter()
                .any(|n| matches!(n, Note::UnifiedRw { .. }))
        );
    }

    #[test]
    fn json_without_jobs_is_not_fio() {
        assert_eq!(parse(r#"{"a": 1}"#, 0), Ok(None));
        assert!(matches!(
            parse(r#"{"jobs": [ {"jobname": "x""#, 0),
            Err(ParseError::Truncated(_))
        ));
    }
}
