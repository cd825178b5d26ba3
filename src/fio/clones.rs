//! numjobs clones reported one by one (fio without `group_reporting`) put back together.
//!
//! fio runs each of a job's `numjobs` clones as a job of its own. Without `group_reporting` it
//! prints one block (one JSON `jobs[]` entry, one terse line) per clone, all with the job's
//! name and group, and only the `Run status group` line speaks for the job as a whole: bytes
//! summed over the longest runtime (fio-semantics §8). A clone alone is a fraction of the
//! job's I/O, and two clones are not two runs: recorded one by one they would understate the
//! disk and count one run as several towards the policy's evidence. So the clones become one
//! job, combined as fio's group line and `group_reporting` combine them.
//!
//! What cannot be combined from the printed figures is left out, never guessed: latency
//! percentiles (fio merges the clones' histograms, which its output does not carry) and the
//! per-interval IOPS samples. A printed decimal MB/s figure belongs to one clone, so the
//! combined bandwidth is computed from the summed bytes.

use std::collections::BTreeMap;

use super::{FioJob, FioOutput};
use crate::measure::{BwBasis, DirectionStats, Latency, Measurement};

/// Combines the blocks of `out` that are clones of one job (same run of the input, same name,
/// same group, same stated shape, as many as the numjobs it states) into one job each, stating
/// numjobs as the number of blocks where the output does not, in the place of the first clone, and
/// adds a note saying so. Only fio's own accounting makes blocks one job: clones are combined
/// where the run's group line is in the input ([`FioJob::grouped`]); without it (a text cut
/// before its `Run status group` line) they are not combined, and each is marked as no one
/// test of its own. Blocks whose shapes differ are left apart: they are different jobs that
/// share a name. A block repeating an earlier one ([`FioJob::repeat_of`]) is no clone.
pub fn combine(out: &mut FioOutput) {
    let mut by_job: BTreeMap<(usize, &str, u32), Vec<usize>> = BTreeMap::new();
    for (i, j) in out.jobs.iter().enumerate() {
        if j.repeat_of.is_none() {
            by_job
                .entry((j.invocation, &j.name, j.groupid))
                .or_default()
                .push(i);
        }
    }
    // A job stating numjobs=N prints N blocks: K blocks of a job stating another count are
    // K/N job sections of one name (or K jobs of numjobs=1), each its own writer running beside
    // the others, not one job's clones; they stay apart (`alongside` names them).
    let sets: Vec<Vec<usize>> = by_job
        .into_values()
        .filter(|ix| {
            ix.len() > 1
                && ix.iter().all(|&i| {
                    out.jobs[i].shape == out.jobs[ix[0]].shape && out.jobs[i].mixed.is_none()
                })
                && out.jobs[ix[0]]
                    .shape
                    .numjobs
                    .is_none_or(|n| usize::try_from(n).is_ok_and(|n| n == ix.len()))
        })
        .collect();
    if sets.is_empty() {
        return;
    }
    let mut drop = vec![false; out.jobs.len()];
    for ix in &sets {
        if !ix.iter().all(|&i| out.jobs[i].grouped) {
            let first = &out.jobs[ix[0]];
            let why = format!(
                "one of {} blocks of job '{}' (group {}) printed by one fio run (numjobs clones without group_reporting), whose 'Run status group {}' line is not in the input (cut?): their sum cannot be checked against fio's, and one clone is a fraction of the job",
                ix.len(),
                first.name,
                first.groupid,
                first.groupid
            );
            for &i in ix {
                out.jobs[i].mixed = Some(why.clone());
            }
            continue;
        }
        let clones: Vec<&FioJob> = ix.iter().map(|&i| &out.jobs[i]).collect();
        let erred = clones.iter().find(|c| c.error != 0);
        // Where the output does not state numjobs, the job is as many writers as blocks
        // combined: never the one a numjobs=1 policy asks for.
        let mut shape = clones[0].shape.clone();
        shape.numjobs = shape.numjobs.or_else(|| u32::try_from(clones.len()).ok());
        let mut job = FioJob::new(
            clones[0].name.clone(),
            clones[0].groupid,
            shape,
            measurement(&clones),
            erred.map_or(0, |c| c.error),
        );
        job.error_text = erred.and_then(|c| c.error_text.clone());
        job.place = clones[0].place.clone();
        job.invocation = clones[0].invocation;
        job.timestamp = clones[0].timestamp;
        job.grouped = true;
        job.stonewall = clones[0].stonewall;
        // the clones' times together, where each states its own
        job.window_ms = clones
            .iter()
            .map(|c| c.window_ms)
            .collect::<Option<Vec<_>>>()
            .and_then(|w| Some((w.iter().map(|x| x.0).min()?, w.iter().map(|x| x.1).max()?)));
        let processes: Vec<&str> = clones.iter().filter_map(|c| c.process.as_deref()).collect();
        job.process = (!processes.is_empty()).then(|| processes.join(" "));
        job.ios_counted = clones.iter().all(|c| c.ios_counted);
        // each clone's count is its own: the run's is their sum, known where each is
        job.syncs = clones
            .iter()
            .map(|c| c.syncs)
            .try_fold((0u64, 0u64), |(l, m), s| {
                s.map(|(a, b)| (l.saturating_add(a), m.saturating_add(b)))
            });
        out.notes.push(super::Note::Clones {
            job: job.name.clone(),
            group: job.groupid,
            clones: clones.len(),
        });
        out.jobs[ix[0]] = job;
        for &i in &ix[1..] {
            drop[i] = true;
        }
    }
    let mut i = 0;
    out.jobs.retain(|_| {
        i += 1;
        !drop[i - 1]
    });
}

fn measurement(clones: &[&FioJob]) -> Measurement {
    let ms: Vec<&Measurement> = clones.iter().map(|c| &c.measurement).collect();
    let max =
        |f: &dyn Fn(&Measurement) -> Option<f64>| ms.iter().filter_map(|m| f(m)).reduce(f64::max);
    let first = ms[0];
    Measurement {
        read: direction(ms.iter().map(|m| m.read.as_ref())),
        write: direction(ms.iter().map(|m| m.write.as_ref())),
        sync: latency(ms.iter().map(|m| m.sync.as_ref())),
        end_fsync_ms: max(&|m| m.end_fsync_ms),
        layout_ms: max(&|m| m.layout_ms),
        // fio's group figure divides the summed CPU time by the group's time; the printed
        // per-clone percentages do not give it back.
        cpu_usr_pct: None,
        cpu_sys_pct: None,
        bs: first.bs,
        series: None,
        // The disks' lines are the output's, not a clone's: every clone carries the same.
        disk: first.disk.clone(),
        device: None,
    }
}

/// One direction over the clones that have it: fio's group line (Σ bytes × 1000 / the
/// longest runtime, the runtime counted only for clones that moved bytes).
fn direction<'a>(dirs: impl Iterator<Item = Option<&'a DirectionStats>>) -> Option<DirectionStats> {
    let dirs: Vec<&DirectionStats> = dirs.flatten().collect();
    if dirs.is_empty() {
        return None;
    }
    let ios = dirs.iter().map(|d| d.ios).sum();
    let bytes = dirs.iter().map(|d| d.bytes).sum();
    let runtime_ms = dirs
        .iter()
        .filter(|d| d.bytes > 0)
        .map(|d| d.runtime_ms)
        .max()
        .unwrap_or(0);
    let mut out = DirectionStats::from_counts(ios, bytes, runtime_ms);
    if dirs.iter().any(|d| d.bw_basis == BwBasis::Printed) {
        out.bw_basis = BwBasis::Printed;
    }
    out.clat = latency(dirs.iter().map(|d| d.clat.as_ref()));
    out.lat = latency(dirs.iter().map(|d| d.lat.as_ref()));
    out.slat = latency(dirs.iter().map(|d| d.slat.as_ref()));
    Some(out)
}

/// Latency moments over the clones, as fio's `sum_stat` pools them: counts added, the mean
/// weighted by count, the variance pooled. Known only if every clone states it.
fn latency<'a>(lats: impl Iterator<Item = Option<&'a Latency>>) -> Option<Latency> {
    let lats: Vec<&Latency> = lats.collect::<Option<Vec<_>>>()?;
    let n: u64 = lats.iter().map(|l| l.n).sum();
    if lats.is_empty() || n == 0 {
        return None;
    }
    let nf = n as f64;
    let mean = lats.iter().map(|l| l.n as f64 * l.mean_ns).sum::<f64>() / nf;
    let second = lats
        .iter()
        .map(|l| l.n as f64 * (l.stddev_ns * l.stddev_ns + l.mean_ns * l.mean_ns))
        .sum::<f64>()
        / nf;
    Some(Latency {
        n,
        min_ns: lats.iter().map(|l| l.min_ns).fold(f64::INFINITY, f64::min),
        max_ns: lats
            .iter()
            .map(|l| l.max_ns)
            .fold(f64::NEG_INFINITY, f64::max),
        mean_ns: mean,
        stddev_ns: (second - mean * mean).max(0.0).sqrt(),
        percentiles: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> FioOutput {
        let path = format!(
            "{}/tests/fixtures/fio-outputs/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        crate::fio::parse(&std::fs::read(path).unwrap()).unwrap()
    }

    #[test]
    fn two_text_clones_become_the_group_line() {
        let mut out = fixture("fio-3.33-numjobs2.txt");
        assert_eq!(out.jobs.len(), 2);
        combine(&mut out);
        assert_eq!(out.jobs.len(), 1);
        let w = out.jobs[0].measurement.write.as_ref().unwrap();
        // The two blocks' `issued` counts, and the longer of `run=3116-3131msec`.
        assert_eq!((w.ios, w.runtime_ms), (104_549 + 123_833, 3131));
        // The group line: `bw=285MiB/s (299MB/s)`.
        assert_eq!((w.bw_bytes / 1048576.0).round(), 285.0);
        assert_eq!((w.bw_bytes / 1e6).round(), 299.0);
        assert_eq!(w.bw_mb_s_printed, None, "one clone's printed figure");
        assert_eq!(w.bw_basis, BwBasis::Printed);
        let clat = w.clat.as_ref().unwrap();
        assert!(
            clat.percentiles.is_empty(),
            "percentiles cannot be combined"
        );
        // min of the two blocks' `clat (nsec): min=96` and `min=99`
        assert_eq!(clat.min_ns, 96.0);
        assert!(clat.mean_ns > 18_499.0 && clat.mean_ns < 22_171.0);
        assert!(
            out.notes
                .iter()
                .any(|n| matches!(n, crate::fio::Note::Clones { clones: 2, .. }))
        );
    }

    #[test]
    fn blocks_are_clones_only_as_many_as_the_numjobs_stated() {
        let two = fixture("fio-3.33-numjobs2.txt");
        assert_eq!(two.jobs[0].shape.numjobs, Some(2));
        // the same two blocks, each stating numjobs=1: two jobs of one name, left apart
        let mut ones = two.clone();
        for j in &mut ones.jobs {
            j.shape.numjobs = Some(1);
        }
        let before = ones.clone();
        combine(&mut ones);
        assert_eq!(ones, before);
        // not stated: combined, as many writers as blocks
        let mut unstated = two.clone();
        for j in &mut unstated.jobs {
            j.shape.numjobs = None;
        }
        combine(&mut unstated);
        assert_eq!(unstated.jobs.len(), 1);
        assert_eq!(unstated.jobs[0].shape.numjobs, Some(2));
    }

    #[test]
    fn group_reporting_output_and_single_jobs_are_left_alone() {
        for name in [
            "fio-3.33-numjobs2-group_reporting.txt",
            "fio-3.33-psync-randwrite.txt",
        ] {
            let before = fixture(name);
            let mut out = before.clone();
            combine(&mut out);
            assert_eq!(out, before, "{name}");
        }
    }

    #[test]
    fn pooled_moments_match_the_moments_of_all_samples() {
        // Samples {1, 3} and {10, 20, 30}: mean 12.8, population stdev of all five.
        let a = Latency {
            n: 2,
            min_ns: 1.0,
            max_ns: 3.0,
            mean_ns: 2.0,
            stddev_ns: 1.0,
            percentiles: vec![(50.0, 2.0)],
        };
        let b = Latency {
            n: 3,
            min_ns: 10.0,
            max_ns: 30.0,
            mean_ns: 20.0,
            stddev_ns: (200.0f64 / 3.0).sqrt(),
            percentiles: vec![(50.0, 20.0)],
        };
        let all = [1.0, 3.0, 10.0, 20.0, 30.0f64];
        let mean = all.iter().sum::<f64>() / 5.0;
        let sd = (all.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 5.0).sqrt();
        let c = latency([Some(&a), Some(&b)].into_iter()).unwrap();
        assert_eq!((c.n, c.min_ns, c.max_ns), (5, 1.0, 30.0));
        assert!((c.mean_ns - mean).abs() < 1e-9);
        assert!((c.stddev_ns - sd).abs() < 1e-9);
        assert!(c.percentiles.is_empty());
        assert_eq!(
            latency([Some(&a), None].into_iter()),
            None,
            "one clone does not state it"
        );
    }
}
