//! `iopscheck import`: read fio outputs (any version and format), judge them against the
//! policy as `run` does, and with `--record` add them to the history with their own
//! timestamps. A job of another shape is never judged silently.

use anyhow::Context as _;
use std::io::Read;
use std::path::{Path, PathBuf};

use chrono::{DateTime, FixedOffset, Local, Utc};

use crate::app::{Ctx, Outputs, usage};
use crate::cli::ImportArgs;
use crate::engine::EngineUsed;
use crate::evaluate::{self, Options, Scope, Warning};
use crate::fio::{self, FioOutput};
use crate::history::{self, Record, SCHEMA_VERSION, Source, Target};
use crate::job::{IoEngine, ShapeDifference};
use crate::metrics;
use crate::policy;

/// One fio output (a file or stdin), read in bounded memory.
struct FioFile {
    name: String,
    bytes: Vec<u8>,
    modified: Option<DateTime<FixedOffset>>,
}

fn read_input(path: &Path) -> anyhow::Result<FioFile> {
    let limit = fio::MAX_INPUT as u64;
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .take(limit + 1)
            .read_to_end(&mut bytes)
            .context("stdin")?;
        if bytes.len() as u64 > limit {
            return Err(
                anyhow::Error::new(fio::ParseError::TooLarge(fio::MAX_INPUT)).context("stdin"),
            );
        }
        return Ok(FioFile {
            name: "-".into(),
            bytes,
            modified: None,
        });
    }
    let shown = path.display().to_string();
    let meta = std::fs::metadata(path).with_context(|| shown.clone())?;
    if !meta.is_file() {
        return Err(anyhow::anyhow!("{shown}: not a regular file"));
    }
    if meta.len() > limit {
        return Err(anyhow::Error::new(fio::ParseError::TooLarge(fio::MAX_INPUT)).context(shown));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(limit + 1).read_to_end(&mut bytes))
        .with_context(|| shown.clone())?;
    let modified = meta
        .modified()
        .ok()
        .map(|t| DateTime::<Local>::from(t).fixed_offset());
    Ok(FioFile {
        name: shown,
        bytes,
        modified,
    })
}

/// FNV-1a, 64 bits: enough to recognise the same output imported twice.
fn digest(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("fnv1a64:{h:016x}:{}", bytes.len())
}

pub fn run(args: ImportArgs, ctx: &Ctx) -> anyhow::Result<u8> {
    let loaded = policy::resolve(&args.policy)?;
    let policy = loaded.policy;
    let outputs = Outputs::from_args(&args.out)?;
    // A customer's output is not this machine's: without --host the node is unknown.
    let host = match &args.host {
        Some(h) if h.trim().is_empty() => return Err(usage("--host: must not be empty")),
        Some(h) => h.clone(),
        None if args.record => {
            return Err(usage(
                "--record: name the node the output came from with --host (a fio output does not say); nothing was recorded",
            ));
        }
        None => HOST_NOT_STATED.to_string(),
    };
    let now = Utc::now();
    let expected = policy.job.shape();
    let assumed = match &args.assume_job {
        Some(spec) => {
            let a = policy::resolve(spec).context("--assume-job")?;
            Some((spec.clone(), a.policy.job.shape()))
        }
        None => None,
    };

    let mut candidates: Vec<Candidate> = Vec::new();
    let mut notes: Vec<Warning> = Vec::new();
    // Notes that may repeat across files: said once, with the files they came from.
    let mut file_notes: Vec<(String, String)> = Vec::new();
    for path in &args.files {
        let input = read_input(path)?;
        let mut parsed: FioOutput = fio::parse(&input.bytes).with_context(|| input.name.clone())?;
        fio::combine_clones(&mut parsed);
        let base = Path::new(&input.name)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| input.name.clone());
        for n in &parsed.notes {
            file_notes.push((base.clone(), n.clone()));
        }
        let (timestamp, ts_note) = match (parsed.timestamp, input.modified) {
            (Some(t), _) => (t, None),
            (None, Some(m)) => (
                m,
                Some(format!(
                    "{base}: the output has no timestamp; the file's modification time was used"
                )),
            ),
            (None, None) => (
                Local::now().fixed_offset(),
                Some(format!(
                    "{base}: the output has no timestamp; the import time was used"
                )),
            ),
        };
        if let Some(n) = ts_note {
            let n = n
                .strip_prefix(&format!("{base}: "))
                .unwrap_or(&n)
                .to_string();
            file_notes.push((base.clone(), n));
        }
        if let Some((spec, _)) = &assumed {
            file_notes.push((base.clone(), format!("{} (--assume-job {spec})", ASSUMED)));
        }
        let file_digest = digest(&input.bytes);
        for (i, job) in parsed.jobs.iter().enumerate() {
            let label = if parsed.jobs.len() > 1 {
                format!("{base} job {} ({})", i + 1, display_name(&job.name))
            } else {
                base.clone()
            };
            let mut excluded = None;
            if let Some(why) = &job.mixed {
                excluded = Some(why.clone());
            } else if job.name == "All clients" {
                excluded = Some(
                    "its 'All clients' block is the sum of every client of a client/server run, not one node's figures"
                        .to_string(),
                );
            }
            let shape = match &assumed {
                Some((_, a)) => {
                    let (shape, contradictions) = assume(&job.shape, a);
                    for c in contradictions {
                        notes.push(Warning::Note(format!("{label}: {c}")));
                    }
                    shape
                }
                None => job.shape.clone(),
            };
            // Which blocks are the policy's job, to choose among them; the deviations that
            // decide the verdict are judged from each record (crate::deviation).
            let stated: Vec<ShapeDifference> = shape
                .shape_differences(&expected)
                .into_iter()
                .filter(|d| !(d.field == "ioengine" && policy.accepts_engine(&d.found)))
                .collect();
            let contradicts = stated.iter().any(|d| d.found != NOT_STATED);
            let mut differences = Vec::new();
            for mut d in stated {
                d.found = format!("{} in {label}", d.found);
                differences.push(d);
            }
            if job.error != 0 {
                notes.push(Warning::Note(format!(
                    "{label}: fio reported err={} for this job; its figures may be incomplete",
                    job.error
                )));
            }
            let mut m = job.measurement.clone();
            if m.bs.is_none() {
                m.bs = shape.bs;
            }
            let printed = [&m.read, &m.write]
                .into_iter()
                .flatten()
                .any(|d| d.bw_basis == crate::measure::BwBasis::Printed);
            let record = Record {
                schema_version: SCHEMA_VERSION,
                timestamp,
                host: host.clone(),
                source: Source::Imported,
                source_file: Some(base.clone()),
                source_digest: Some(format!("{file_digest}#{i}")),
                engine: EngineUsed::Fio(shape.ioengine.as_deref().map(IoEngine::from)).to_string(),
                engine_note: None,
                job_assumed: assumed
                    .as_ref()
                    .map(|(spec, _)| format!("{ASSUMED} (--assume-job {spec})")),
                job: shape,
                metrics: metrics::from_measurement(&m),
                target: Target {
                    dir: args
                        .dir
                        .clone()
                        .or_else(|| stated_dir(&job.shape))
                        .unwrap_or_else(|| "not stated".into()),
                    ..Target::default()
                },
                tool_version: crate::app::VERSION.to_string(),
                policy: policy.name.clone(),
                overrides: Default::default(),
                bw_basis: Some(if printed {
                    crate::measure::BwBasis::Printed
                } else {
                    crate::measure::BwBasis::Exact
                }),
                fio_version: parsed.fio_version.clone(),
                invocation: None,
                iops_series: m.series.clone(),
                disk_stats: m.disk.clone(),
            };
            // A figure no disk can give (an overflow, a negative latency in an edited file)
            // is refused before anything is judged or recorded.
            history::check_metrics(&record.metrics).map_err(|e| {
                anyhow::anyhow!(
                    "{}: {label}: {e}; nothing was imported or recorded",
                    input.name
                )
            })?;
            candidates.push(Candidate {
                record,
                label,
                differences,
                contradicts,
                excluded,
            });
        }
    }
    notes.extend(said_once(file_notes));
    // what the user assumed comes first: it is the main caveat of such an import
    notes.sort_by_key(|n| !n.to_string().contains(ASSUMED));
    // The shape differences of the judged blocks are found again, with the deviations of
    // scale, by evaluate (crate::deviation): one rule for run, import, report and fleet.
    let (records, _) = select(candidates, &mut notes);

    if args.record {
        record(&args.history.history, &records, ctx)?;
    }

    let mut opts = Options::new(Scope::Import, now);
    opts.strict = args.out.strict;
    opts.notes = notes;
    let ev = evaluate::evaluate(records, &policy, &opts);
    outputs.emit(&ev, ctx)?;
    Ok(ev.verdict.exit_code())
}

/// What the output and the record say of a shape given with `--assume-job`.
pub const ASSUMED: &str = "job shape assumed by the user, not stated in the output";

/// How [`crate::job::JobShape::shape_differences`] names a field the output does not state.
const NOT_STATED: &str = "not stated in the output";

/// One job block of an imported output, before it is known whether it counts.
struct Candidate {
    record: Record,
    label: String,
    differences: Vec<ShapeDifference>,
    /// A field the output states differs from the policy's job.
    contradicts: bool,
    /// Why the block is no one node's test at all (mixed definitions, a client/server sum).
    excluded: Option<String>,
}

/// The runs to judge and their shape differences. A block that is no one test is never
/// judged; where some blocks have the policy's shape and others state another one (a
/// read-only job beside the write job), only the former are judged. Every block left out is
/// named in a note with the reason.
fn select(
    candidates: Vec<Candidate>,
    notes: &mut Vec<Warning>,
) -> (Vec<Record>, Vec<ShapeDifference>) {
    let any_policy_shaped = candidates
        .iter()
        .any(|c| c.excluded.is_none() && !c.contradicts);
    let mut records = Vec::new();
    let mut differences = Vec::new();
    for c in candidates {
        let reason = c.excluded.clone().or_else(|| {
            (any_policy_shaped && c.contradicts).then(|| {
                let what: Vec<String> = c
                    .differences
                    .iter()
                    .filter(|d| !d.found.starts_with(NOT_STATED))
                    .map(|d| {
                        format!(
                            "{} {} instead of {}",
                            d.field,
                            d.found.split(" in ").next().unwrap_or(&d.found),
                            d.expected
                        )
                    })
                    .collect();
                format!("not the policy's job ({})", what.join(", "))
            })
        });
        match reason {
            Some(r) => notes.push(Warning::Note(format!("not counted: {}: {r}", c.label))),
            None => {
                differences.extend(c.differences);
                records.push(c.record);
            }
        }
    }
    (records, differences)
}

/// The shape a job had, as far as the output states it, completed by the assumed one; and
/// each stated field that contradicts the assumption (the stated one is kept).
fn assume(
    stated: &crate::job::JobShape,
    assumed: &crate::job::JobShape,
) -> (crate::job::JobShape, Vec<String>) {
    let as_map = |s: &crate::job::JobShape| match serde_json::to_value(s) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    let stated_map = as_map(stated);
    let mut merged = as_map(assumed);
    let mut contradictions = Vec::new();
    for (k, v) in stated_map {
        if let Some(a) = merged.get(&k)
            && *a != v
        {
            contradictions.push(format!(
                "the output states {k}={} where the assumed job has {k}={}; the output's is used",
                plain(&v),
                plain(a)
            ));
        }
        merged.insert(k, v);
    }
    let shape = serde_json::from_value(serde_json::Value::Object(merged))
        .unwrap_or_else(|_| stated.clone());
    (shape, contradictions)
}

fn plain(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Notes from several files: one that several files share is said once, with the count and
/// names of the files.
fn said_once(file_notes: Vec<(String, String)>) -> Vec<Warning> {
    let mut order: Vec<String> = Vec::new();
    let mut files: std::collections::HashMap<String, Vec<String>> = Default::default();
    for (file, note) in file_notes {
        let entry = files.entry(note.clone()).or_default();
        if entry.is_empty() {
            order.push(note);
        }
        if !entry.contains(&file) {
            entry.push(file);
        }
    }
    order
        .into_iter()
        .map(|note| {
            let f = &files[&note];
            Warning::Note(if f.len() == 1 {
                format!("{}: {note}", f[0])
            } else {
                let shown: Vec<&str> = f.iter().take(3).map(String::as_str).collect();
                format!(
                    "{} files ({}{}): {note}",
                    f.len(),
                    shown.join(", "),
                    if f.len() > 3 { ", …" } else { "" }
                )
            })
        })
        .collect()
}

/// The host of an import without `--host`.
pub const HOST_NOT_STATED: &str = "host not stated (use --host)";

/// The directory an output states: fio's `directory` option, else the directory of an
/// absolute `filename` (a device such as /dev/sdb is its own target).
fn stated_dir(shape: &crate::job::JobShape) -> Option<String> {
    if let Some(d) = &shape.directory {
        return Some(d.clone());
    }
    let f = shape.filename.as_deref()?;
    if f.starts_with("/dev/") {
        return Some(f.to_string());
    }
    let p = Path::new(f);
    if !p.is_absolute() {
        return None;
    }
    p.parent().map(|d| d.display().to_string())
}

fn display_name(n: &str) -> &str {
    if n.is_empty() { "\"\"" } else { n }
}

/// Appends the imported runs, refusing all of them if any is already in the history for the
/// same host: nothing half-recorded.
fn record(history: &Option<PathBuf>, records: &[Record], ctx: &Ctx) -> anyhow::Result<()> {
    let path = crate::app::history_path(history);
    let (existing, skipped) = history::read(&path)?;
    for w in history::skipped_warnings(&skipped) {
        ctx.warn(w);
    }
    let dups: Vec<String> = records
        .iter()
        .filter(|r| {
            existing.iter().any(|e| {
                e.host == r.host && e.source_digest.is_some() && e.source_digest == r.source_digest
            })
        })
        .map(|r| r.source_file.clone().unwrap_or_default())
        .collect();
    if !dups.is_empty() {
        let mut names = dups;
        names.dedup();
        return Err(usage(format!(
            "--record: {} already recorded for host {} in {}; nothing was recorded (remove the duplicate from the command, or use --host for another node)",
            names.join(", "),
            records[0].host,
            path.display()
        )));
    }
    history::append(&path, records)?;
    ctx.note(format!(
        "recorded {} run{} in {}",
        records.len(),
        if records.len() == 1 { "" } else { "s" },
        path.display()
    ));
    Ok(())
}
