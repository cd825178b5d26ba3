//! `iopscheck import`: read fio outputs (any version and format), judge them against the
//! policy as `run` does, and with `--record` add them to the history with their own
//! timestamps. A job of another shape is never judged silently.

mod assume;
mod input;
mod notes;
mod record;
mod select;

use anyhow::Context as _;
use std::path::Path;

use chrono::{Local, Utc};

use self::assume::assume;
use self::input::{digest, read_input};
use self::notes::{no_series_note, said_once};
use self::select::{Candidate, NOT_STATED, select};
use crate::cli::ImportArgs;
use crate::config::{Ctx, Input, Outputs};
use crate::engine::EngineUsed;
use crate::error::usage;
use crate::evaluate::{self, Options, Scope, Warning};
use crate::fio::{self, FioOutput};
use crate::history::{self, Record, Source, Target};
use crate::job::{IoEngine, ShapeDifference};
use crate::policy;
use crate::record::RunInfo;

pub fn run(args: ImportArgs, ctx: &Ctx) -> anyhow::Result<u8> {
    // A bundle holds its own history, policy and host: it is judged as its report was.
    if let Some(b) = args
        .files
        .iter()
        .find(|f| crate::commands::bundle_input::is_gzip(f))
    {
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
        return crate::commands::report::run(report, ctx);
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
        crate::config::history_path(&args.history.history),
    ));
    inputs.extend(crate::config::policy_input(&loaded, "-p/--policy"));
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
            inputs.extend(crate::config::policy_input(&a, "--assume-job"));
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
                measurement: m,
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
    notes.extend(no_series_note(&chosen.measurements, &policy));

    if args.record {
        record::record(&args.history.history, &chosen.records, ctx)?;
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
