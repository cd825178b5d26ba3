//! The job blocks of the fio outputs given, each made a candidate run with its record: why
//! it would not count, what the output states of its job (completed by a pasted command line
//! or `--assume-job`, read against its figures), and how it differs from the policy's job.

use std::collections::HashMap;
use std::path::Path;

use anyhow::Context as _;
use chrono::{DateTime, FixedOffset, Local};

use super::assume::assume;
use super::input::{digest, read_input};
use super::select::Candidate;
use super::{display_name, stated_dir};
use crate::deviation;
use crate::engine::EngineUsed;
use crate::evaluate::Warning;
use crate::evaluate::caveat::{Caveat, Statement};
use crate::fio::{self, FioFormat, FioOutput, RunIdentity};
use crate::history::{self, Record, Source, Target};
use crate::job::{IoEngine, JobShape};
use crate::policy::Policy;
use crate::record::RunInfo;

/// The outputs read so far, and what they make.
pub(super) struct Reading<'a> {
    pub(super) policy: &'a Policy,
    /// The node every record names.
    pub(super) host: &'a str,
    /// `--dir`: the directory every record names, else the one the output states.
    pub(super) dir: Option<&'a str>,
    /// `--assume-job`: its spec and its job.
    pub(super) assumed: Option<&'a (String, JobShape)>,
    /// Every job block read, in order.
    pub(super) candidates: Vec<Candidate>,
    pub(super) notes: Vec<Warning>,
    /// Notes that may repeat across files, with the file each came from: said once, with the
    /// files they came from.
    pub(super) file_notes: Vec<(String, Caveat)>,
    /// The outputs read so far, by digest, and their job blocks: the same output or the same
    /// run given again is one run.
    digests: Vec<(String, String)>,
    seen: Vec<(fio::FioJob, String)>,
    /// `seen` by a key its equal blocks share: only those are compared in full.
    seen_by_key: HashMap<BlockKey, Vec<usize>>,
    /// The runs counted so far, by what names them in any format: the same run given again
    /// in another format is one run.
    runs: Vec<Given>,
    /// `runs` by a coarse key every copy of a run shares: only those are compared in full
    /// (a linear search of every run for every block was quadratic in the input).
    runs_by_key: HashMap<RunKey, Vec<usize>>,
}

#[cfg(test)]
thread_local! {
    /// Blocks and runs looked at to find one given before (the tests' measure of the work).
    static LOOKED_AT: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// One block or run looked at, for the tests' measure.
fn count_looked_at() {
    #[cfg(test)]
    LOOKED_AT.with(|c| c.set(c.get() + 1));
}

/// What [`fio::FioJob::same_run`] requires equal of two blocks, in part: name, group,
/// process, and each direction's runtime and I/O count.
type BlockKey = (String, u32, Option<String>, [Option<(u64, u64)>; 2]);

fn block_key(j: &fio::FioJob) -> BlockKey {
    let d = |d: &Option<crate::measure::DirectionStats>| d.as_ref().map(|d| (d.runtime_ms, d.ios));
    (
        j.name.clone(),
        j.groupid,
        j.process.clone(),
        [d(&j.measurement.read), d(&j.measurement.write)],
    )
}

/// What [`RunIdentity::same_run`] requires equal of two copies of a run, in part: job,
/// group, and the runtime of each direction that moved data (the same directions).
type RunKey = (String, u32, [Option<u64>; 2]);

fn run_key(i: &RunIdentity) -> RunKey {
    (
        i.job.clone(),
        i.groupid,
        [
            i.read.as_ref().map(|d| d.runtime_ms),
            i.write.as_ref().map(|d| d.runtime_ms),
        ],
    )
}

/// A run counted so far.
struct Given {
    identity: RunIdentity,
    label: String,
    /// Its candidate.
    at: usize,
    format: FioFormat,
    /// The candidates left out as copies of it.
    copies: Vec<usize>,
}

/// How much of a run a format states: JSON its job's options and exact figures, text some of
/// its job and printed figures, terse neither its job nor more than truncated figures.
fn states(format: FioFormat) -> u8 {
    match format {
        FioFormat::Json | FioFormat::JsonPlus => 3,
        FioFormat::Text => 2,
        FioFormat::Terse => 1,
    }
}

fn format_name(format: FioFormat) -> &'static str {
    match format {
        FioFormat::Json => "JSON",
        FioFormat::JsonPlus => "json+",
        FioFormat::Text => "text",
        FioFormat::Terse => "terse",
    }
}

/// One output read, as its blocks need it.
struct File<'f> {
    /// As given (a path, or "-").
    name: &'f str,
    parsed: &'f FioOutput,
    /// Its file name, which labels its blocks.
    base: String,
    digest: String,
    /// The output of the same bytes given earlier, by its file name.
    given_before: Option<String>,
    /// The time its blocks take where the output states none, and the note that says so.
    time: (DateTime<FixedOffset>, Caveat),
    /// For each block, the other jobs of its fio run it ran beside, or may have.
    alongside: Vec<fio::Alongside>,
}

impl<'a> Reading<'a> {
    pub(super) fn new(
        policy: &'a Policy,
        host: &'a str,
        dir: Option<&'a str>,
        assumed: Option<&'a (String, JobShape)>,
    ) -> Reading<'a> {
        Reading {
            policy,
            host,
            dir,
            assumed,
            candidates: Vec::new(),
            notes: Vec::new(),
            file_notes: Vec::new(),
            digests: Vec::new(),
            seen: Vec::new(),
            seen_by_key: HashMap::new(),
            runs: Vec::new(),
            runs_by_key: HashMap::new(),
        }
    }

    /// Reads one output (a file, or stdin as "-") and makes each of its job blocks a candidate.
    pub(super) fn file(&mut self, path: &Path) -> anyhow::Result<()> {
        let input = read_input(path)?;
        let parse_opts = fio::ParseOptions {
            result_lines_alone: self.assumed.is_some(),
        };
        let mut parsed: FioOutput =
            fio::parse_with(&input.bytes, parse_opts).with_context(|| input.name.clone())?;
        fio::combine_clones(&mut parsed);
        let base = Path::new(&input.name)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| input.name.clone());
        let file_digest = digest(&input.bytes);
        let given_before = self
            .digests
            .iter()
            .find(|(d, _)| *d == file_digest)
            .map(|(_, name)| name.clone());
        if given_before.is_none() {
            self.digests.push((file_digest.clone(), base.clone()));
        }
        for n in &parsed.notes {
            self.file_notes
                .push((base.clone(), Caveat::Reader(n.clone())));
        }
        let file_time = match input.modified {
            Some(m) => (m, Caveat::NoTimestamp { file_time: true }),
            None => (
                Local::now().fixed_offset(),
                Caveat::NoTimestamp { file_time: false },
            ),
        };
        if let Some((spec, _)) = self.assumed {
            self.file_notes
                .push((base.clone(), Caveat::Assumed { spec: spec.clone() }));
        }
        if let Some(cmd) = &parsed.command {
            self.file_notes.push((
                base.clone(),
                Caveat::CommandLine {
                    line: cmd.line,
                    complete: cmd.complete,
                },
            ));
        }
        let file = File {
            name: &input.name,
            parsed: &parsed,
            base,
            digest: file_digest,
            given_before,
            time: file_time,
            alongside: fio::alongside(&parsed),
        };
        for (i, job) in parsed.jobs.iter().enumerate() {
            self.block(&file, i, job)?;
        }
        Ok(())
    }

    /// Job block `i` of an output.
    fn block(&mut self, f: &File, i: usize, job: &fio::FioJob) -> anyhow::Result<()> {
        let label = if f.parsed.jobs.len() > 1 {
            format!("{} job {} ({})", f.base, i + 1, display_name(&job.name))
        } else {
            f.base.clone()
        };
        // What the output does not state is unknown: a time assumed places the run, and is
        // recorded as assumed, so that it counts towards no day of evidence.
        let (timestamp, time_assumed) = match job.timestamp.or(f.parsed.timestamp) {
            Some(t) => (t, None),
            None => {
                self.file_notes.push((f.base.clone(), f.time.1.clone()));
                let file_time = matches!(f.time.1, Caveat::NoTimestamp { file_time: true });
                (f.time.0, Some(Caveat::assumed_time(file_time).to_string()))
            }
        };
        let identity = RunIdentity::of(job, f.parsed.format, f.parsed.fio_version.as_deref());
        let mut excluded = self.excluded(i, job, f);
        let mut copy = false;
        if excluded.is_none() {
            excluded = self.given_in_another_format(&identity, &label, f.parsed.format);
            copy = excluded.is_some();
        }
        if f.given_before.is_none() && job.repeat_of.is_none() {
            self.seen_by_key
                .entry(block_key(job))
                .or_default()
                .push(self.seen.len());
            self.seen.push((job.clone(), label.clone()));
        }
        let mut figures_contradict = Vec::new();
        // The command line pasted with the output states the job, under the same rule
        // as the output: what the output states wins, a difference is named.
        let stated_shape = match &f.parsed.command {
            Some(cmd) => {
                let by = Statement::CommandLine { line: cmd.line };
                let c = assume(
                    &job.shape,
                    &cmd.shape,
                    &job.measurement,
                    job.syncs,
                    job.depths,
                    &by,
                );
                // what is read of a copy against its job is said of the copy counted
                for n in c.notes.into_iter().filter(|_| !copy) {
                    self.notes.push(Warning::InputCaveat {
                        about: label.clone(),
                        caveat: n,
                    });
                }
                figures_contradict.extend(c.contradicted);
                c.shape
            }
            None => job.shape.clone(),
        };
        let shape = match self.assumed {
            Some((spec, a)) => {
                let by = Statement::AssumedJob { spec: spec.clone() };
                let assumption = assume(
                    &stated_shape,
                    a,
                    &job.measurement,
                    job.syncs,
                    job.depths,
                    &by,
                );
                for c in assumption.notes.into_iter().filter(|_| !copy) {
                    self.notes.push(Warning::InputCaveat {
                        about: label.clone(),
                        caveat: c,
                    });
                }
                figures_contradict.extend(assumption.contradicted);
                assumption.shape
            }
            None => stated_shape,
        };
        // Which blocks are the policy's job, to choose among them, by what the output
        // states (crate::deviation, which judges each record again for the verdict); what
        // the figures contradict is named as they show it.
        let mut differences = deviation::stated_differences(&shape, self.policy);
        // what the output does not state of the job's shape is unknown: such a block is not
        // known to be the policy's job (`select`)
        let unstated = shape
            .shape_differences(&self.policy.job.shape())
            .iter()
            .any(|d| d.found == crate::job::NOT_STATED);
        differences.retain(|d| !figures_contradict.iter().any(|c| c.field == d.field));
        differences.extend(figures_contradict.iter().cloned());
        let mut m = job.measurement.clone();
        if m.bs.is_none() {
            m.bs = shape.bs;
        }
        let printed = [&m.read, &m.write]
            .into_iter()
            .flatten()
            .any(|d| d.bw_basis == crate::measure::BwBasis::Printed);
        let mut info = RunInfo::new(
            self.host.to_string(),
            Source::Imported,
            EngineUsed::Fio(shape.ioengine.as_deref().map(IoEngine::from)).to_string(),
            shape,
            Target {
                dir: self
                    .dir
                    .map(str::to_string)
                    .or_else(|| stated_dir(&job.shape))
                    .unwrap_or_else(|| "not stated".into()),
                ..Target::default()
            },
            self.policy.name.clone(),
        );
        info.source_file = Some(f.base.clone());
        info.job_assumed = self
            .assumed
            .as_ref()
            .map(|(spec, _)| Caveat::Assumed { spec: spec.clone() }.to_string());
        info.time_assumed = time_assumed;
        info.bw_basis = Some(if printed {
            crate::measure::BwBasis::Printed
        } else {
            crate::measure::BwBasis::Exact
        });
        info.fio_version = f.parsed.fio_version.clone();
        let mut record = Record::measured(info, timestamp, &m);
        record.source_digest = Some(format!("{}#{i}", f.digest));
        record.fio_run = Some(Box::new(identity));
        // A figure no disk can give (an overflow, a negative latency in an edited file)
        // is refused before anything is judged or recorded.
        history::check_metrics(&record.metrics).map_err(|e| {
            anyhow::anyhow!("{}: {label}: {e}; nothing was imported or recorded", f.name)
        })?;
        self.candidates.push(Candidate {
            record,
            measurement: m,
            label,
            differences,
            unstated,
            figures_contradict,
            excluded,
            copy,
        });
        Ok(())
    }

    /// Whether the block is a run counted already, given in another format (its JSON, text
    /// or terse output): then the copy that states more of the run counts (JSON over text
    /// over terse; the one given first where they state as much), and the other is left out,
    /// naming it. None where it is a run of its own, which is then counted.
    fn given_in_another_format(
        &mut self,
        identity: &RunIdentity,
        label: &str,
        format: FioFormat,
    ) -> Option<String> {
        let at = self.candidates.len();
        let key = run_key(identity);
        let found = self.runs_by_key.get(&key).and_then(|same_key| {
            same_key.iter().copied().find(|&r| {
                count_looked_at();
                self.runs[r].identity.same_run(identity)
            })
        });
        let Some(g) = found.map(|r| &mut self.runs[r]) else {
            self.runs_by_key
                .entry(key)
                .or_default()
                .push(self.runs.len());
            self.runs.push(Given {
                identity: identity.clone(),
                label: label.to_string(),
                at,
                format,
                copies: Vec::new(),
            });
            return None;
        };
        let why = |other: &str, its: FioFormat| {
            format!(
                "the same fio run as {other} (its {}: the same job, runtime, I/O counts and figures), counted once",
                format_name(its)
            )
        };
        if states(format) <= states(g.format) {
            g.copies.push(at);
            return Some(why(&g.label, g.format));
        }
        // this copy states more of the run: it counts, the earlier one is left out, and what
        // was read of that one against a stated job is said of this one instead
        let earlier = std::mem::replace(
            g,
            Given {
                identity: identity.clone(),
                label: label.to_string(),
                at,
                format,
                copies: Vec::new(),
            },
        );
        g.copies = earlier.copies;
        g.copies.push(earlier.at);
        for &c in &g.copies {
            self.candidates[c].excluded = Some(why(label, format));
            self.candidates[c].copy = true;
        }
        self.notes.retain(
            |n| !matches!(n, Warning::InputCaveat { about, .. } if *about == earlier.label),
        );
        None
    }

    /// The block given before that `job` is, figure for figure, with its label.
    fn seen_given_before(&self, job: &fio::FioJob) -> Option<&(fio::FioJob, String)> {
        let same_key = self.seen_by_key.get(&block_key(job))?;
        same_key.iter().map(|&i| &self.seen[i]).find(|(j, _)| {
            count_looked_at();
            j.same_run(job)
        })
    }

    /// Why a block is not counted, the first reason that holds: it is not a run of its own
    /// (given again), not evidence (fio's error), or no one node's test.
    fn excluded(&self, i: usize, job: &fio::FioJob, f: &File) -> Option<String> {
        let mut excluded = None;
        if let Some(earlier) = &f.given_before {
            excluded = Some(if *earlier == f.base {
                format!(
                    "{} is given twice: the same output is one run, counted once",
                    f.base
                )
            } else {
                format!("the same output as {earlier} (the same bytes), counted once")
            });
        } else if let Some(first) = &job.repeat_of {
            excluded = Some(format!(
                "the same fio run as {first}, repeated in the input; counted once"
            ));
        } else if let Some((_, first)) = self.seen_given_before(job) {
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
        } else if f.parsed.notes.contains(&fio::Note::Interrupted) {
            excluded = Some(
                "the output says fio was interrupted (fio: terminating on signal): a run cut short is not evidence, however good its figures"
                    .to_string(),
            );
        } else if let Some(a) = f.alongside.get(i).filter(|a| a.any()) {
            excluded = Some(alongside_reason(a));
        }
        excluded
    }
}

/// Why a block that ran beside other jobs of its fio run is not a run of the policy's test.
fn alongside_reason(a: &fio::Alongside) -> String {
    let n = a.surely + a.maybe;
    let jobs = if n == 1 { "job" } else { "jobs" };
    if a.maybe == 0 {
        format!(
            "ran at the same time as {n} other {jobs} of the same fio invocation (one group, which fio starts together): not the policy's job run alone"
        )
    } else {
        format!(
            "ran at the same time as {n} other {jobs} of the same fio invocation, or may have (the output states no stonewall or start times that show they ran one after another): not the policy's job run alone"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_work_of_finding_runs_given_before_grows_with_the_input_and_no_faster() {
        let policy = crate::policy::resolve("swimlane").unwrap().policy;
        let one =
            include_str!("../../../tests/fixtures/fio-outputs/fio-3.33-posixaio-randwrite.txt");
        let dir = tempfile::tempdir().unwrap();
        let mut per_block = Vec::new();
        for n in [25, 100] {
            // n runs, each its own job; then the same runs again in another file (other bytes)
            let text: String = (0..n)
                .map(|i| one.replace("random-write", &format!("random-write-{i}")))
                .collect();
            let (a, b) = (dir.path().join("a.txt"), dir.path().join("b.txt"));
            std::fs::write(&a, &text).unwrap();
            std::fs::write(&b, format!("$ fio log of the same runs\n{text}")).unwrap();
            let mut reading = Reading::new(&policy, "node", None, None);
            LOOKED_AT.with(|c| c.set(0));
            reading.file(&a).unwrap();
            reading.file(&b).unwrap();
            let looked_at = LOOKED_AT.with(|c| c.get());
            let blocks = reading.candidates.len() as u64;
            assert_eq!(blocks, 2 * n as u64);
            // every block of the second file is a run of the first, found and counted once
            for c in &reading.candidates[n..] {
                let why = c.excluded.as_deref().unwrap_or_default();
                assert!(why.starts_with("the same fio run as a.txt job"), "{why}");
            }
            assert!(
                looked_at <= blocks,
                "{looked_at} looked at for {blocks} blocks"
            );
            per_block.push(looked_at as f64 / blocks as f64);
        }
        // Four times the blocks, the same work per block.
        assert!(
            (per_block[1] / per_block[0] - 1.0).abs() < 0.01,
            "{per_block:?}"
        );
    }
}
