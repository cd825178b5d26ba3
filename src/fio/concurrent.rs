//! Which job blocks of one fio run ran at the same time as others.
//!
//! fio starts every job of a group together (`run_threads()`); a job stating `stonewall`
//! waits for every job before it in the job file to end, and starts a new group. A group
//! begun by `new_group` alone is only a reporting group: its jobs start with the others
//! (fio-semantics §8). So two blocks of one run ran one after another only where the output
//! shows it: a `stonewall` stated between their groups (where a JSON lists it among the job's
//! options; fio 3.33 does not), or start times and runtimes that do not overlap (JSON
//! `job_start` and `job_runtime`, fio ≥ 3.36). Anywhere else they ran together, or may have: what the output does not state is
//! unknown, and a job that may have had company is not a job run alone.

use super::{FioJob, FioOutput};

/// The jobs a block ran beside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Alongside {
    /// Other jobs of the same run that ran at the same time (one group, no start times
    /// showing otherwise).
    pub surely: usize,
    /// Other jobs of the same run that may have: another group, with nothing stated that
    /// orders the two.
    pub maybe: usize,
}

impl Alongside {
    pub fn any(&self) -> bool {
        self.surely + self.maybe > 0
    }
}

/// For each block of `out`, the other jobs of the same fio run (the same
/// [`FioJob::invocation`]) it ran beside, or may have. A block repeating another
/// ([`FioJob::repeat_of`]) is no job of its own and keeps no one company.
pub fn alongside(out: &FioOutput) -> Vec<Alongside> {
    let jobs = &out.jobs;
    (0..jobs.len())
        .map(|i| {
            let mut a = Alongside::default();
            for (j, other) in jobs.iter().enumerate() {
                if j == i
                    || other.repeat_of.is_some()
                    || other.invocation != jobs[i].invocation
                    || host(other) != host(&jobs[i])
                    || apart(&jobs[i], other)
                    || one_after_another(jobs, &jobs[i], other)
                {
                    continue;
                }
                if other.groupid == jobs[i].groupid {
                    a.surely += 1;
                } else {
                    a.maybe += 1;
                }
            }
            a
        })
        .collect()
}

/// The client a block of a client/server run belongs to (`<host> name`, as the readers name
/// it): the clients' jobs run on machines of their own.
fn host(j: &FioJob) -> Option<&str> {
    j.name.strip_prefix('<')?.split_once("> ").map(|(h, _)| h)
}

/// Their stated times do not overlap.
fn apart(a: &FioJob, b: &FioJob) -> bool {
    match (a.window_ms, b.window_ms) {
        (Some((a0, a1)), Some((b0, b1))) => a1 < b0 || b1 < a0,
        _ => false,
    }
}

/// Their groups differ and a job of the later group, or of a group between, states
/// `stonewall`: every job before it had ended when it started.
fn one_after_another(jobs: &[FioJob], a: &FioJob, b: &FioJob) -> bool {
    let (lo, hi) = if a.groupid < b.groupid {
        (a.groupid, b.groupid)
    } else {
        (b.groupid, a.groupid)
    };
    lo != hi
        && jobs.iter().any(|c| {
            c.invocation == a.invocation
                && c.groupid > lo
                && c.groupid <= hi
                && c.stonewall == Some(true)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::JobShape;
    use crate::measure::Measurement;

    fn job(group: u32, stonewall: Option<bool>, window: Option<(u64, u64)>) -> FioJob {
        let mut j = FioJob::new(
            "random-write".into(),
            group,
            JobShape::default(),
            Measurement::default(),
            0,
        );
        j.stonewall = stonewall;
        j.window_ms = window;
        j
    }

    fn out(jobs: Vec<FioJob>) -> FioOutput {
        FioOutput {
            format: super::super::FioFormat::Json,
            fio_version: None,
            timestamp: None,
            jobs,
            notes: Vec::new(),
            command: None,
        }
    }

    #[test]
    fn one_group_runs_together_and_a_stonewall_or_start_times_part_them() {
        let together = out(vec![job(0, Some(false), None), job(0, Some(false), None)]);
        assert_eq!(
            alongside(&together)[0],
            Alongside {
                surely: 1,
                maybe: 0
            }
        );
        // new_group alone: another group, started with the first
        let new_group = out(vec![job(0, Some(false), None), job(1, Some(false), None)]);
        assert_eq!(
            alongside(&new_group)[1],
            Alongside {
                surely: 0,
                maybe: 1
            }
        );
        // text: not stated
        let unknown = out(vec![job(0, None, None), job(1, None, None)]);
        assert!(alongside(&unknown)[0].any());
        let walled = out(vec![job(0, Some(false), None), job(1, Some(true), None)]);
        assert!(alongside(&walled).iter().all(|a| !a.any()));
        let timed = out(vec![
            job(0, None, Some((1_000, 61_000))),
            job(0, None, Some((61_001, 121_000))),
        ]);
        assert!(alongside(&timed).iter().all(|a| !a.any()));
        let overlapping = out(vec![
            job(0, None, Some((1_000, 61_000))),
            job(0, None, Some((60_000, 121_000))),
        ]);
        assert!(alongside(&overlapping).iter().all(|a| a.any()));
        let mut other_run = out(vec![job(0, None, None), job(0, None, None)]);
        other_run.jobs[1].invocation = 1;
        assert!(alongside(&other_run).iter().all(|a| !a.any()));
        // client/server: each client's job on its own machine
        let mut clients = out(vec![job(0, None, None), job(0, None, None)]);
        clients.jobs[0].name = "<node-a> random-write".into();
        clients.jobs[1].name = "<node-b> random-write".into();
        assert!(alongside(&clients).iter().all(|a| !a.any()));
    }
}
