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

use std::collections::HashMap;

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
///
/// Two blocks keep each other company where they are of one run and one host, their stated
/// times overlap (or either states none), and no `stonewall` parts their groups. No stonewall
/// parts two groups exactly where as many of the run's stonewalled groups come at or before
/// each: so the blocks are counted by run, host and that number (their *stretch*), and within
/// one by their times, in n·log n (an output may hold tens of thousands of blocks; comparing
/// each with every other, and each pair's groups with every block, was cubic).
pub fn alongside(out: &FioOutput) -> Vec<Alongside> {
    let jobs = &out.jobs;
    // For each run, the groups a stonewall begins, in order.
    let mut walls: HashMap<usize, Vec<u32>> = HashMap::new();
    for c in jobs.iter().filter(|c| c.stonewall == Some(true)) {
        walls.entry(c.invocation).or_default().push(c.groupid);
    }
    for w in walls.values_mut() {
        w.sort_unstable();
        w.dedup();
    }
    let stretch = |j: &FioJob| {
        walls
            .get(&j.invocation)
            .map_or(0, |w| w.partition_point(|&g| g <= j.groupid))
    };
    type Stretch<'a> = (usize, Option<&'a str>, usize);
    let mut stretches: HashMap<Stretch, Vec<usize>> = HashMap::new();
    let mut groups: HashMap<(Stretch, u32), Vec<usize>> = HashMap::new();
    for (i, j) in jobs.iter().enumerate() {
        let key = (j.invocation, host(j), stretch(j));
        stretches.entry(key).or_default().push(i);
        groups.entry((key, j.groupid)).or_default().push(i);
    }
    let mut a = vec![Alongside::default(); jobs.len()];
    for members in stretches.values() {
        for (&i, n) in members.iter().zip(company(jobs, members)) {
            a[i].maybe = n;
        }
    }
    for members in groups.values() {
        for (&i, n) in members.iter().zip(company(jobs, members)) {
            a[i].surely = n;
            a[i].maybe -= n;
        }
    }
    a
}

#[cfg(test)]
thread_local! {
    /// Blocks placed or looked up in [`company`] (the tests' measure of the work).
    static STEPS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

fn count_step() {
    #[cfg(test)]
    STEPS.with(|c| c.set(c.get() + 1));
}

/// For each of `members` (blocks of one run, host and stretch), how many of the others, not
/// repeats, it is not [`apart`] from.
fn company(jobs: &[FioJob], members: &[usize]) -> Vec<usize> {
    let own = |i: usize| jobs[i].repeat_of.is_none();
    let jobs_of_own = members.iter().filter(|&&i| own(i)).count();
    let mut timed: Vec<(u64, u64)> = members
        .iter()
        .filter(|&&i| own(i))
        .filter_map(|&i| jobs[i].window_ms)
        .collect();
    let untimed = jobs_of_own - timed.len();
    // Blocks whose window overlaps each timed member's, (b0, b1) with b0 <= a1 and
    // b1 >= a0: the timed blocks by start, added as the members' ends are reached, counted
    // by end in a Fenwick tree over their ends.
    timed.sort_unstable();
    let mut ends: Vec<u64> = timed.iter().map(|&(_, b1)| b1).collect();
    ends.sort_unstable();
    let mut queries: Vec<(u64, u64, usize)> = members
        .iter()
        .enumerate()
        .filter_map(|(k, &i)| jobs[i].window_ms.map(|(a0, a1)| (a1, a0, k)))
        .collect();
    queries.sort_unstable();
    let mut tree = vec![0usize; ends.len() + 1];
    let mut added = 0;
    let mut overlapping = vec![0; members.len()];
    for (a1, a0, k) in queries {
        while added < timed.len() && timed[added].0 <= a1 {
            let mut at = ends.partition_point(|&e| e < timed[added].1) + 1;
            while at < tree.len() {
                count_step();
                tree[at] += 1;
                at += at & at.wrapping_neg();
            }
            added += 1;
        }
        // added blocks ending before a0
        let mut at = ends.partition_point(|&e| e < a0);
        let mut before = 0;
        while at > 0 {
            count_step();
            before += tree[at];
            at -= at & at.wrapping_neg();
        }
        overlapping[k] = added - before;
    }
    members
        .iter()
        .zip(overlapping)
        .map(|(&i, overlapping)| {
            count_step();
            // itself, where it is counted among the others
            let itself = own(i) && !apart(&jobs[i], &jobs[i]);
            let n = match jobs[i].window_ms {
                None => jobs_of_own,
                Some(_) => untimed + overlapping,
            };
            n - usize::from(itself)
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

    /// The definition, pair by pair: what [`alongside`] must count.
    fn pairwise(jobs: &[FioJob]) -> Vec<Alongside> {
        let walled = |a: &FioJob, b: &FioJob| {
            let (lo, hi) = (a.groupid.min(b.groupid), a.groupid.max(b.groupid));
            lo != hi
                && jobs.iter().any(|c| {
                    c.invocation == a.invocation
                        && c.groupid > lo
                        && c.groupid <= hi
                        && c.stonewall == Some(true)
                })
        };
        (0..jobs.len())
            .map(|i| {
                let mut a = Alongside::default();
                for (j, other) in jobs.iter().enumerate() {
                    if j == i
                        || other.repeat_of.is_some()
                        || other.invocation != jobs[i].invocation
                        || host(other) != host(&jobs[i])
                        || apart(&jobs[i], other)
                        || walled(&jobs[i], other)
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

    type Spec = (u32, Option<bool>, Option<(u64, u64)>, usize, u8, bool);

    fn jobs_of(specs: &[Spec]) -> Vec<FioJob> {
        specs
            .iter()
            .map(|&(group, stonewall, window, invocation, host, repeat)| {
                let mut j = job(group, stonewall, window);
                j.invocation = invocation;
                j.name = match host {
                    0 => "random-write".into(),
                    h => format!("<node-{h}> random-write"),
                };
                j.repeat_of = repeat.then(|| "an earlier block".into());
                j
            })
            .collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(512),
            ..proptest::prelude::ProptestConfig::default()
        })]

        #[test]
        fn alongside_counts_what_the_pairwise_definition_counts(
            specs in proptest::collection::vec(
                (
                    0u32..5,
                    proptest::option::of(proptest::bool::weighted(0.2)),
                    // small times: equal ends, touching and inverted windows are common
                    proptest::option::of((0u64..12, 0u64..12)),
                    0usize..3,
                    0u8..3,
                    proptest::bool::weighted(0.15),
                ),
                0..40,
            )
        ) {
            let jobs = jobs_of(&specs);
            proptest::prop_assert_eq!(alongside(&out(jobs.clone())), pairwise(&jobs));
        }
    }

    /// Steps of [`company`] for one output's blocks.
    fn steps(jobs: Vec<FioJob>) -> (u64, Vec<Alongside>) {
        STEPS.with(|c| c.set(0));
        let a = alongside(&out(jobs));
        (STEPS.with(|c| c.get()), a)
    }

    #[test]
    fn the_work_grows_with_the_blocks_and_hardly_faster() {
        // one group started together; groups of four behind stonewalls; timed blocks one
        // after another and overlapping their neighbours; clients of a client/server run
        type Shape = (&'static str, fn(u32) -> FioJob);
        let shapes: [Shape; 4] = [
            ("one group", |_| job(0, Some(false), None)),
            ("stonewalled", |i| job(i / 4, Some(i % 4 == 0), None)),
            ("timed", |i| {
                let t = u64::from(i) * 1_000;
                job(0, None, Some((t, t + 1_500)))
            }),
            ("clients", |i| {
                let mut j = job(0, None, None);
                j.name = format!("<node-{}> random-write", i % 64);
                j
            }),
        ];
        for (shape, make) in shapes {
            let mut per_block = Vec::new();
            for n in [1_024u32, 16_384] {
                let jobs: Vec<FioJob> = (0..n).map(make).collect();
                let (steps, a) = steps(jobs);
                let expected = match shape {
                    "one group" => n as usize - 1,
                    "stonewalled" => 3,
                    "timed" => 2,
                    _ => n as usize / 64 - 1,
                };
                // every block but the ends and the edges of a stretch keeps that company
                let kept = a.iter().filter(|a| a.surely + a.maybe == expected).count();
                assert!(kept + 2 >= n as usize, "{shape}: {kept} of {n}");
                let per = steps as f64 / (f64::from(n) * f64::from(n).log2());
                assert!(per <= 4.0, "{shape}: {steps} steps for {n} blocks");
                per_block.push(steps as f64 / f64::from(n));
            }
            // sixteen times the blocks: the work per block grows as log n does, not as n
            assert!(per_block[1] <= 2.0 * per_block[0], "{shape}: {per_block:?}");
        }
    }
}
