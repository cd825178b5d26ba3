//! `iopscheck import`: read fio outputs (any version and format), judge them against the
//! policy as `run` does, and with `--record` add them to the history with their own
//! timestamps. A job of another shape is never judged silently.

use anyhow::Context as _;
use std::io::Read;
use std::path::{Path, PathBuf};

use chrono::{DateTime, FixedOffset, Local, Utc};

use crate::app::{Ctx, Input, Outputs, usage};
use crate::cli::ImportArgs;
use crate::engine::EngineUsed;
use crate::evaluate::{self, Options, Scope, Warning};
use crate::fio::{self, FioOutput};
use crate::history::{self, Record, Source, Target};
use crate::job::{IoEngine, ShapeDifference};
use crate::policy;
use crate::record::RunInfo;

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
    // A bundle holds its own history, policy and host: it is judged as its report was.
    if let Some(b) = args.files.iter().find(|f| super::bundle_input::is_gzip(f)) {
        if args.files.len() > 1 {
            return Err(usage(format!(
                "{}: a bundle is read alone (it holds its own history, policy and host); give it as the only file",
                b.display()
            )));
        }
        if args.record {
            return Err(usage(format!(
                "--record: {} is a bundle, whose records are a history already; nothing was recorded",
                b.display()
            )));
        }
        if args.assume_job.is_some() {
            return Err(usage(format!(
                "--assume-job: {} is a bundle, whose records state their own job",
                b.display()
            )));
        }
        let report = crate::cli::ReportArgs {
            policy: args.policy,
            since: None,
            host: args.host,
            dir: None,
            engine: None,
            list: false,
            decide: crate::cli::DecideArgs {
                until_decided: false,
                alpha: 0.05,
                beta: 0.05,
                delta: 0.1,
                max_runs: 30,
                max_days: 7,
            },
            history: crate::cli::HistoryArgs {
                history: Some(b.clone()),
            },
            out: args.out,
        };
        return super::report::run(report, ctx);
    }
    let loaded = policy::resolve(&args.policy)?;
    let outputs = Outputs::from_args(&args.out)?;
    let mut inputs: Vec<Input> = args
        .files
        .iter()
        .map(|f| Input::new("an input", f))
        .collect();
    inputs.push(Input::new(
        "the history",
        crate::app::history_path(&args.history.history),
    ));
    inputs.extend(crate::app::policy_input(&loaded, "-p/--policy"));
    let policy = loaded.policy;
    // A customer's output is not this machine's: without --host the node is unknown.
    let host = match &args.host {
        Some(h) => crate::machine::check_host(h)
            .map_err(|e| usage(format!("--host: {e}")))?
            .to_string(),
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
            inputs.extend(crate::app::policy_input(&a, "--assume-job"));
            Some((spec.clone(), a.policy.job.shape()))
        }
        None => None,
    };
    outputs.refuse_inputs(&inputs)?;

    let mut candidates: Vec<Candidate> = Vec::new();
    let mut notes: Vec<Warning> = Vec::new();
    // Notes that may repeat across files: said once, with the files they came from.
    let mut file_notes: Vec<(String, String)> = Vec::new();
    // The outputs read so far, by digest, and their job blocks: the same output or the same
    // run given again is one run.
    let mut digests: Vec<(String, String)> = Vec::new();
    let mut seen: Vec<(fio::FioJob, String)> = Vec::new();
    for path in &args.files {
        let input = read_input(path)?;
        let parse_opts = fio::ParseOptions {
            result_lines_alone: assumed.is_some(),
        };
        let mut parsed: FioOutput =
            fio::parse_with(&input.bytes, parse_opts).with_context(|| input.name.clone())?;
        fio::combine_clones(&mut parsed);
        let base = Path::new(&input.name)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| input.name.clone());
        let file_digest = digest(&input.bytes);
        let given_before = digests
            .iter()
            .find(|(d, _)| *d == file_digest)
            .map(|(_, name)| name.clone());
        if given_before.is_none() {
            digests.push((file_digest.clone(), base.clone()));
        }
        for n in &parsed.notes {
            file_notes.push((base.clone(), n.clone()));
        }
        let file_time = match input.modified {
            Some(m) => (
                m,
                "the output has no timestamp; the file's modification time was used",
            ),
            None => (
                Local::now().fixed_offset(),
                "the output has no timestamp; the import time was used",
            ),
        };
        if let Some((spec, _)) = &assumed {
            file_notes.push((base.clone(), format!("{} (--assume-job {spec})", ASSUMED)));
        }
        if let Some(cmd) = &parsed.command {
            file_notes.push((
                base.clone(),
                format!(
                    "the fio command line at line {} was read as the job's statement{}",
                    cmd.line,
                    if cmd.complete {
                        ""
                    } else {
                        " (it names a job file, whose options are not in the paste)"
                    }
                ),
            ));
        }
        for (i, job) in parsed.jobs.iter().enumerate() {
            let label = if parsed.jobs.len() > 1 {
                format!("{base} job {} ({})", i + 1, display_name(&job.name))
            } else {
                base.clone()
            };
            let timestamp = match job.timestamp.or(parsed.timestamp) {
                Some(t) => t,
                None => {
                    file_notes.push((base.clone(), file_time.1.to_string()));
                    file_time.0
                }
            };
            // Why the block is not counted, the first reason that holds: it is not a run of
            // its own (given again), not evidence (fio's error), or no one node's test.
            let mut excluded = None;
            if let Some(earlier) = &given_before {
                excluded = Some(if *earlier == base {
                    format!("{base} is given twice: the same output is one run, counted once")
                } else {
                    format!("the same output as {earlier} (the same bytes), counted once")
                });
            } else if let Some(first) = &job.repeat_of {
                excluded = Some(format!(
                    "the same fio run as {first}, repeated in the input; counted once"
                ));
            } else if let Some((_, first)) = seen.iter().find(|(j, _)| j.same_run(job)) {
                excluded = Some(format!(
                    "the same fio run as {first} (the same job block, figure for figure); counted once"
                ));
            } else if let Some(err) = job.error_words() {
                excluded = Some(format!(
                    "fio reported an error for this job ({err}): a job that failed is not evidence, however good its figures"
                ));
            } else if let Some(why) = &job.mixed {
                excluded = Some(why.clone());
            } else if job.name == "All clients" {
                excluded = Some(
                    "its 'All clients' block is the sum of every client of a client/server run, not one node's figures"
                        .to_string(),
                );
            }
            if given_before.is_none() && job.repeat_of.is_none() {
                seen.push((job.clone(), label.clone()));
            }
            let mut figures_contradict = Vec::new();
            // The command line pasted with the output states the job, under the same rule
            // as the output: what the output states wins, a difference is named.
            let stated_shape = match &parsed.command {
                Some(cmd) => {
                    let who = format!("the fio command line at line {}", cmd.line);
                    let c = assume(&job.shape, &cmd.shape, &job.measurement, &who, true);
                    for n in c.notes {
                        notes.push(Warning::Note(format!("{label}: {n}")));
                    }
                    figures_contradict.extend(c.contradicted);
                    c.shape
                }
                None => job.shape.clone(),
            };
            let shape = match &assumed {
                Some((spec, a)) => {
                    let who = format!("--assume-job {spec}");
                    let assumption = assume(&stated_shape, a, &job.measurement, &who, false);
                    for c in assumption.notes {
                        notes.push(Warning::Note(format!("{label}: {c}")));
                    }
                    figures_contradict.extend(assumption.contradicted);
                    assumption.shape
                }
                None => stated_shape,
            };
            // Which blocks are the policy's job, to choose among them; the deviations that
            // decide the verdict are judged from each record (crate::deviation).
            let stated: Vec<ShapeDifference> = shape
                .shape_differences(&expected)
                .into_iter()
                .filter(|d| !(d.field == "ioengine" && policy.accepts_engine(&d.found)))
                // what the figures contradict is named as they show it
                .filter(|d| !figures_contradict.iter().any(|c| c.field == d.field))
                .chain(figures_contradict.iter().cloned())
                .collect();
            let contradicts = stated.iter().any(|d| d.found != NOT_STATED);
            let mut differences = Vec::new();
            for mut d in stated {
                d.found = format!("{} in {label}", d.found);
                differences.push(d);
            }
            let mut m = job.measurement.clone();
            if m.bs.is_none() {
                m.bs = shape.bs;
            }
            let printed = [&m.read, &m.write]
                .into_iter()
                .flatten()
                .any(|d| d.bw_basis == crate::measure::BwBasis::Printed);
            let mut info = RunInfo::new(
                host.clone(),
                Source::Imported,
                EngineUsed::Fio(shape.ioengine.as_deref().map(IoEngine::from)).to_string(),
                shape,
                Target {
                    dir: args
                        .dir
                        .clone()
                        .or_else(|| stated_dir(&job.shape))
                        .unwrap_or_else(|| "not stated".into()),
                    ..Target::default()
                },
                policy.name.clone(),
            );
            info.source_file = Some(base.clone());
            info.job_assumed = assumed
                .as_ref()
                .map(|(spec, _)| format!("{ASSUMED} (--assume-job {spec})"));
            info.bw_basis = Some(if printed {
                crate::measure::BwBasis::Printed
            } else {
                crate::measure::BwBasis::Exact
            });
            info.fio_version = parsed.fio_version.clone();
            let mut record = Record::measured(info, timestamp, &m);
            record.source_digest = Some(format!("{file_digest}#{i}"));
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
                figures_contradict,
                excluded,
            });
        }
    }
    notes.extend(said_once(file_notes));
    // what the user assumed comes first: it is the main caveat of such an import
    notes.sort_by_key(|n| !n.to_string().contains(ASSUMED));
    // The shape differences of the judged blocks are found again, with the deviations of
    // scale, by evaluate (crate::deviation): one rule for run, import, report and fleet.
    // What the figures contradict of an assumed job is named as the figures show it.
    let chosen = select(candidates);
    notes.extend(no_series_note(&chosen.records, &policy));

    if args.record {
        record(&args.history.history, &chosen.records, ctx)?;
    }

    let mut opts = Options::new(Scope::Import, now);
    opts.strict = args.out.strict;
    opts.notes = notes;
    opts.shape_differences = chosen.contradicted;
    let (ev, records) =
        evaluate::evaluate_left_out(chosen.records, chosen.left_out, &policy, &opts);
    outputs.emit(&ev, &records, ctx)?;
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
    /// A field the output states (or its figures show) differs from the policy's job.
    contradicts: bool,
    /// What the output's figures contradict of the job assumed with `--assume-job`.
    figures_contradict: Vec<ShapeDifference>,
    /// Why the block does not count at all: the same run given again, fio's error, no one
    /// node's test (mixed definitions, a client/server sum).
    excluded: Option<String>,
}

/// What [`select`] keeps.
struct Chosen {
    /// The runs to judge.
    records: Vec<Record>,
    /// The blocks left out, each with its reason ("file: why"), listed as not counted.
    left_out: Vec<(Record, String)>,
    /// What the figures of the judged runs contradict of an assumed job.
    contradicted: Vec<ShapeDifference>,
}

/// The runs to judge. A block that is no run of its own or no evidence is never judged; where
/// some blocks have the policy's shape and others state another one (a read-only job beside
/// the write job), only the former are judged. Every block left out is listed as not counted,
/// with the reason.
fn select(candidates: Vec<Candidate>) -> Chosen {
    let any_policy_shaped = candidates
        .iter()
        .any(|c| c.excluded.is_none() && !c.contradicts);
    let mut chosen = Chosen {
        records: Vec::new(),
        left_out: Vec::new(),
        contradicted: Vec::new(),
    };
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
            Some(r) => chosen
                .left_out
                .push((c.record, format!("{}: {r}", c.label))),
            None => {
                for mut d in c.figures_contradict {
                    d.found = format!("{} in {}", d.found, c.label);
                    chosen.contradicted.push(d);
                }
                chosen.records.push(c.record);
            }
        }
    }
    chosen
}

/// A job shape given with `--assume-job`, completed from what the output states.
struct Assumption {
    /// What the output states, completed by the assumed job where the output is silent and
    /// its figures do not contradict it.
    shape: crate::job::JobShape,
    /// Each stated field that differs from the assumption, and each assumed field the
    /// output's figures contradict, in words.
    notes: Vec<String>,
    /// The assumed fields the figures contradict (left unknown in `shape`), named as the
    /// figures show them.
    contradicted: Vec<ShapeDifference>,
}

/// Fewer I/Os than this in a direction, and its bytes ÷ I/Os says too little of the block
/// size to contradict an assumed one (terse IOPS are truncated integers).
const MIN_IOS_FOR_BS: u64 = 100;

/// How far short of an assumed size-based job's size its bytes may fall (a job stopped by
/// its own runtime cap, truncated KiB in terse) before they state a smaller job.
const SIZE_TOLERANCE: f64 = 0.10;

/// How many standard deviations of the binomial share of reads a mixed job's I/O counts may
/// be from the assumed rwmixread before they state another mix.
const MIX_SIGMAS: f64 = 4.0;

/// The least distance (as a share of the I/Os) from an assumed rwmixread that is another mix:
/// terse I/O counts are estimated from truncated IOPS.
const MIX_TOLERANCE: f64 = 0.02;

/// How far the bytes ÷ I/Os of a direction may be from an assumed block size: printed figures
/// carry 3–4 significant digits, terse counts are estimated from a truncated IOPS.
const BS_TOLERANCE: f64 = 0.10;

/// The shape a job had, as far as the output states it, completed by the assumed one; an
/// assumption only fills what the output leaves unstated. What the output states wins, and
/// its figures are read against the assumed job: reads in a write-only job (or writes in a
/// read-only one), bytes per I/O that give another block size, a time-based job that ran
/// shorter than its runtime. Such an assumed field is not taken: it stays unknown, and the
/// figures' contradiction is named.
///
/// `who` names the statement ("--assume-job swimlane", "the fio command line at line 1").
/// `named`: the statement is the customer's own (a command line), so a field the output
/// states otherwise is a contradiction, named as a difference, not only a note.
fn assume(
    stated: &crate::job::JobShape,
    assumed: &crate::job::JobShape,
    m: &crate::measure::Measurement,
    who: &str,
    named: bool,
) -> Assumption {
    let as_map = |s: &crate::job::JobShape| match serde_json::to_value(s) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    let stated_map = as_map(stated);
    let mut merged = as_map(assumed);
    let mut notes = Vec::new();
    let mut contradicted = Vec::new();
    let holder = if named { who } else { "the assumed job" };
    let against = if named {
        "the command line"
    } else {
        "the assumed job"
    };
    for (k, v) in stated_map {
        if let Some(a) = merged.get(&k)
            && *a != v
        {
            notes.push(format!(
                "the output states {k}={} where {holder} has {k}={}; the output's is used",
                plain(&v),
                plain(a)
            ));
            if named && let Some(field) = SHAPE_FIELDS.iter().find(|f| **f == k) {
                contradicted.push(ShapeDifference {
                    field,
                    expected: format!("{} ({who})", shown(&k, a)),
                    found: format!("{} (the output)", shown(&k, &v)),
                });
            }
        }
        merged.insert(k, v);
    }
    let mut shape: crate::job::JobShape = serde_json::from_value(serde_json::Value::Object(merged))
        .unwrap_or_else(|_| stated.clone());
    let moved = |d: &Option<crate::measure::DirectionStats>| {
        d.as_ref().is_some_and(|d| d.ios > 0 || d.bytes > 0)
    };
    let (reads, writes) = (moved(&m.read), moved(&m.write));

    // The directions: what the output did against what the assumed job does.
    if stated.rw.is_none()
        && let Some(rw) = assumed.rw
        && (reads || writes)
        && (reads != rw.reads() || writes != rw.writes())
    {
        let did = match (reads, writes) {
            (true, true) => "reads and writes",
            (true, false) => "reads only",
            _ => "writes only",
        };
        notes.push(format!(
            "the output's figures contradict {against}: it {did} where {who} has rw={rw}; rw is not taken from it"
        ));
        contradicted.push(ShapeDifference {
            field: "rw",
            expected: rw.to_string(),
            found: format!("{did} (the output's figures)"),
        });
        shape.rw = None;
    }

    // The mix: fio picks each I/O's direction at random with rwmixread's odds, so the reads'
    // share of the I/Os is binomial around it; a share further off than chance allows is
    // another mix.
    if stated.rwmixread.is_none()
        && let Some(want) = assumed.rwmixread
        && let (Some(r), Some(w)) = (&m.read, &m.write)
        && r.ios + w.ios >= MIN_IOS_FOR_BS
        && shape.rw.is_some()
    {
        let n = (r.ios + w.ios) as f64;
        let share = r.ios as f64 / n;
        let p = f64::from(want) / 100.0;
        let allowed = (MIX_SIGMAS * (p * (1.0 - p) / n).sqrt()).max(MIX_TOLERANCE);
        if (share - p).abs() > allowed {
            let found = format!("about {:.0}% reads", share * 100.0);
            notes.push(format!(
                "the output's figures contradict {against}: {found} of its I/Os where {who} has rwmixread={want}; the figures' mix is used"
            ));
            contradicted.push(ShapeDifference {
                field: "rwmixread",
                expected: format!("{want}% reads"),
                found: format!("{found} (the output's I/O counts)"),
            });
            // the figures state the mix, to the percent: the record carries what they say
            shape.rwmixread = Some((share * 100.0).round() as u8);
        }
    }

    // The block size: every I/O of a fixed-size job moves bs bytes.
    if stated.bs.is_none()
        && let Some(bs) = assumed.bs.filter(|&b| b > 0)
    {
        let per_io = [&m.read, &m.write]
            .into_iter()
            .flatten()
            .filter(|d| d.ios >= MIN_IOS_FOR_BS && d.bytes > 0)
            .map(|d| d.bytes as f64 / d.ios as f64)
            .find(|&b| (b / bs as f64 - 1.0).abs() > BS_TOLERANCE);
        if let Some(per_io) = per_io {
            // whole KiB: the figures are no finer
            let size = if per_io >= 1024.0 {
                format!("{:.0} KiB", per_io / 1024.0)
            } else {
                format!("{per_io:.0} B")
            };
            notes.push(format!(
                "the output's figures contradict {against}: its bytes ÷ I/Os give about {size} per I/O where {who} has bs={}; bs is not taken from it",
                crate::units::format_size_fio(bs)
            ));
            contradicted.push(ShapeDifference {
                field: "bs",
                expected: crate::units::format_size_fio(bs),
                found: format!("about {size} per I/O (the output's bytes ÷ I/Os)"),
            });
            shape.bs = None;
        }
    }

    // The runtime: a time-based job runs its runtime, and fio's runtime includes the drain
    // and the end fsync, so it is never shorter. A shorter run is left to the deviation
    // rule, which reads the measured runtime where none is stated.
    if stated.runtime_s.is_none()
        && assumed.time_based == Some(true)
        && stated.time_based != Some(false)
        && let Some(want) = assumed.runtime_s
    {
        let ran_ms = [&m.read, &m.write]
            .into_iter()
            .flatten()
            .map(|d| d.runtime_ms)
            .max();
        if let Some(ms) = ran_ms
            && ms as f64 / 1000.0 + RUNTIME_SLACK_S < want
        {
            notes.push(format!(
                "the output's figures contradict {against}: it ran {:.1} s where {who} runs {} (time_based); runtime is not taken from it",
                ms as f64 / 1000.0,
                crate::units::format_duration(std::time::Duration::from_secs_f64(want))
            ));
            shape.runtime_s = None;
        }
    }
    // The size: a job that is not time-based ends when each of its jobs has moved `size`
    // bytes, so far fewer bytes moved is a smaller job (which flatters), whatever is assumed.
    if stated.size.is_none()
        && assumed.time_based != Some(true)
        && stated.time_based != Some(true)
        && let Some(want) = assumed.size.filter(|&s| s > 0)
    {
        let moved: u64 = [&m.read, &m.write]
            .into_iter()
            .flatten()
            .map(|d| d.bytes)
            .sum();
        let jobs = u64::from(stated.numjobs.or(assumed.numjobs).unwrap_or(1).max(1));
        if moved > 0 && (moved as f64) < want as f64 * (1.0 - SIZE_TOLERANCE) * jobs as f64 {
            let per_job = moved / jobs;
            notes.push(format!(
                "the output's figures contradict {against}: it moved {} per job where {who} moves its size, {} (not time-based); the size the figures show is used",
                crate::units::format_size(per_job),
                crate::units::format_size(want)
            ));
            shape.size = Some(per_job);
        }
    }
    Assumption {
        shape,
        notes,
        contradicted,
    }
}

/// A record's job fields, as named in its JSON.
const SHAPE_FIELDS: [&str; 18] = [
    "rw",
    "bs",
    "size",
    "iodepth",
    "numjobs",
    "ioengine",
    "runtime",
    "direct",
    "time_based",
    "end_fsync",
    "fsync",
    "fdatasync",
    "sync",
    "rwmixread",
    "ramp_time",
    "directory",
    "filename",
    "limits",
];

/// How much shorter than a time-based job's runtime a run may measure (fio's clock and its
/// millisecond rounding) before it is another runtime: the deviation rule's own slack.
const RUNTIME_SLACK_S: f64 = 0.5;

/// A job field's value in words: sizes as fio writes them.
fn shown(field: &str, v: &serde_json::Value) -> String {
    match (field, v.as_u64()) {
        ("bs" | "size", Some(n)) => crate::units::format_size_fio(n),
        _ => plain(v),
    }
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

/// What an import cannot tell of burst credits: fio's output summarises a run's per-interval
/// IOPS (min, mean, max over its samples) but gives no series, so the step a disk's credits
/// running out makes inside a run cannot be found as a native run finds it
/// (`measure::changepoint`). Said when a deciding rule judges a throughput figure, with the
/// runs whose lowest interval lies under the step's 0.8 × their mean, which a step would
/// make so (and which a noisy disk can make so too).
fn no_series_note(records: &[Record], policy: &crate::policy::Policy) -> Option<Warning> {
    let dir = policy
        .deciding_rules()
        .find_map(|r| evaluate::throughput(&r.metric))?;
    if records.is_empty() || records.iter().any(|r| r.iops_series.is_some()) {
        return None;
    }
    let d = dir.as_str();
    let low: Vec<String> = records
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let m = |k: &str| r.metrics.get(&format!("{d}_iops_{k}")).copied();
            let (min, mean) = (m("min")?, m("mean")?);
            (m("samples")? >= 8.0 && min < crate::measure::changepoint::FALL * mean).then(|| {
                format!(
                    "run {}: lowest {} IOPS, mean {}",
                    i + 1,
                    crate::report::fmt_value(min),
                    crate::report::fmt_value(mean)
                )
            })
        })
        .collect();
    let mut text = "fio's output gives each run's IOPS per interval only as a summary, not a series: whether a disk's burst credits ran out inside a run cannot be told from it (a native `iopscheck run` samples the disk every 500 ms and judges the level it sustained)".to_string();
    if !low.is_empty() {
        text.push_str(&format!(
            "; in {} of {} runs the lowest interval is under 0.8 × the mean, as a step down would make it ({})",
            low.len(),
            records.len(),
            low.join("; ")
        ));
    }
    Some(Warning::Note(text))
}
