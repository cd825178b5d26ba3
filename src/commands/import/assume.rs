//! A job shape stated beside the output (`--assume-job`, a pasted command line), completed
//! from what the output states and read against its figures.

use crate::evaluate::caveat::{Caveat, Figures as Shown, Statement};
use crate::job::ShapeDifference;

/// A job shape given with `--assume-job`, completed from what the output states.
pub(super) struct Assumption {
    /// What the output states, completed by the assumed job where the output is silent and
    /// its figures do not contradict it.
    pub(super) shape: crate::job::JobShape,
    /// Each stated field that differs from the assumption, and each assumed field the
    /// output's figures contradict.
    pub(super) notes: Vec<Caveat>,
    /// The assumed fields the figures contradict (left unknown in `shape`), named as the
    /// figures show them.
    pub(super) contradicted: Vec<ShapeDifference>,
}

/// Fewer I/Os than this in a direction, and its bytes ÷ I/Os says too little of the block
/// size to contradict an assumed one (terse IOPS are truncated integers).
pub(super) const MIN_IOS_FOR_BS: u64 = 100;

/// How far short of an assumed size-based job's size its bytes may fall (a job stopped by
/// its own runtime cap, truncated KiB in terse) before they state a smaller job.
pub(super) const SIZE_TOLERANCE: f64 = 0.10;

/// The share (%) of a run's I/Os issued at depths above an assumed iodepth past which its
/// depth distribution states a deeper job: fio never has more I/Os in flight than iodepth,
/// so any share there is one; the margin is for the distribution's one printed decimal.
pub(super) const DEPTH_SHARE: f64 = 1.0;

/// How many standard deviations of the binomial share of reads a mixed job's I/O counts may
/// be from the assumed rwmixread before they state another mix.
pub(super) const MIX_SIGMAS: f64 = 4.0;

/// The least distance (as a share of the I/Os) from an assumed rwmixread that is another mix:
/// terse I/O counts are estimated from truncated IOPS.
pub(super) const MIX_TOLERANCE: f64 = 0.02;

/// How far the bytes ÷ I/Os of a direction may be from an assumed block size: printed figures
/// carry 3–4 significant digits, terse counts are estimated from a truncated IOPS.
pub(super) const BS_TOLERANCE: f64 = 0.10;

/// The shape a job had, as far as the output states it, completed by the assumed one; an
/// assumption only fills what the output leaves unstated. What the output states wins, and
/// its figures are read against the assumed job: reads in a write-only job (or writes in a
/// read-only one), bytes per I/O that give another block size, a time-based job that ran
/// shorter than its runtime. Such an assumed field is not taken: it stays unknown, and the
/// figures' contradiction is named.
///
/// `by` names the statement ("--assume-job swimlane", "the fio command line at line 1"). The
/// customer's own (a command line): a field the output states otherwise is a contradiction,
/// named as a difference, not only a note.
pub(super) fn assume(
    stated: &crate::job::JobShape,
    assumed: &crate::job::JobShape,
    m: &crate::measure::Measurement,
    syncs: Option<(u64, u64)>,
    depths: Option<[f64; 7]>,
    by: &Statement,
) -> Assumption {
    let as_map = |s: &crate::job::JobShape| match serde_json::to_value(s) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    let stated_map = as_map(stated);
    let mut merged = as_map(assumed);
    let mut notes = Vec::new();
    let mut contradicted = Vec::new();
    let named = by.is_customers();
    for (k, v) in stated_map {
        if let Some(a) = merged.get(&k)
            && *a != v
        {
            notes.push(Caveat::StatedOtherwise {
                by: by.clone(),
                field: k.clone(),
                output: plain(&v),
                given: plain(a),
            });
            if named && let Some(field) = SHAPE_FIELDS.iter().find(|f| **f == k) {
                contradicted.push(ShapeDifference {
                    field,
                    expected: format!("{} ({by})", shown(&k, a)),
                    found: format!("{} (the output)", shown(&k, &v)),
                });
            }
        }
        merged.insert(k, v);
    }
    let shape: crate::job::JobShape = serde_json::from_value(serde_json::Value::Object(merged))
        .unwrap_or_else(|_| stated.clone());
    let mut out = Assumption {
        shape,
        notes,
        contradicted,
    };
    let figures = Figures {
        stated,
        assumed,
        m,
        syncs,
        depths,
        by,
    };
    figures.directions(&mut out);
    figures.mix(&mut out);
    figures.block_size(&mut out);
    figures.runtime(&mut out);
    figures.size(&mut out);
    figures.syncs(&mut out);
    figures.depth(&mut out);
    out
}

/// An output's figures, read against the job stated beside it.
struct Figures<'a> {
    /// What the output states of its job.
    stated: &'a crate::job::JobShape,
    /// The job stated beside it.
    assumed: &'a crate::job::JobShape,
    m: &'a crate::measure::Measurement,
    /// The syncs the job issued while it ran, as the output counts them (least, most).
    syncs: Option<(u64, u64)>,
    /// The output's I/O depth distribution ([`crate::fio::FioJob::depths`]).
    depths: Option<[f64; 7]>,
    /// Who states it ("--assume-job swimlane", "the fio command line at line 1").
    by: &'a Statement,
}

impl Figures<'_> {
    /// The jobs the run had: as stated, else as assumed, at least one.
    fn jobs(&self) -> u64 {
        u64::from(
            self.stated
                .numjobs
                .or(self.assumed.numjobs)
                .unwrap_or(1)
                .max(1),
        )
    }

    /// The caveat that the figures show `shown` against the statement.
    fn contradict(&self, shown: Shown) -> Caveat {
        Caveat::Contradicted {
            by: self.by.clone(),
            figures: shown,
        }
    }
}

impl Figures<'_> {
    /// The directions: reads where the assumed job only writes, or writes where it only reads.
    fn directions(&self, out: &mut Assumption) {
        let moved = |d: &Option<crate::measure::DirectionStats>| {
            d.as_ref().is_some_and(|d| d.ios > 0 || d.bytes > 0)
        };
        let (reads, writes) = (moved(&self.m.read), moved(&self.m.write));
        // The directions: what the output did against what the assumed job does.
        if self.stated.rw.is_none()
            && let Some(rw) = self.assumed.rw
            && (reads || writes)
            && (reads != rw.reads() || writes != rw.writes())
        {
            let did = match (reads, writes) {
                (true, true) => "reads and writes",
                (true, false) => "reads only",
                _ => "writes only",
            };
            out.notes.push(self.contradict(Shown::Directions {
                did,
                rw: rw.to_string(),
            }));
            out.contradicted.push(ShapeDifference {
                field: "rw",
                expected: rw.to_string(),
                found: format!("{did} (the output's figures)"),
            });
            out.shape.rw = None;
        }
    }

    /// The mix of reads and writes, from the I/O counts.
    fn mix(&self, out: &mut Assumption) {
        // fio picks each I/O's direction at random with rwmixread's odds, so the reads' share
        // of the I/Os is binomial around it; a share further off than chance allows is
        // another mix.
        if self.stated.rwmixread.is_none()
            && let Some(want) = self.assumed.rwmixread
            && let (Some(r), Some(w)) = (&self.m.read, &self.m.write)
            && r.ios + w.ios >= MIN_IOS_FOR_BS
            && out.shape.rw.is_some()
        {
            let n = (r.ios + w.ios) as f64;
            let share = r.ios as f64 / n;
            let p = f64::from(want) / 100.0;
            let allowed = (MIX_SIGMAS * (p * (1.0 - p) / n).sqrt()).max(MIX_TOLERANCE);
            if (share - p).abs() > allowed {
                let found = Shown::reads_words(share);
                out.notes.push(self.contradict(Shown::Mix {
                    reads: share,
                    rwmixread: want,
                }));
                out.contradicted.push(ShapeDifference {
                    field: "rwmixread",
                    expected: format!("{want}% reads"),
                    found: format!("{found} (the output's I/O counts)"),
                });
                // the figures state the mix, to the percent: the record carries what they say
                out.shape.rwmixread = Some((share * 100.0).round() as u8);
            }
        }
    }

    /// The block size, from the bytes per I/O.
    fn block_size(&self, out: &mut Assumption) {
        // The block size: every I/O of a fixed-size job moves bs bytes.
        if self.stated.bs.is_none()
            && let Some(bs) = self.assumed.bs.filter(|&b| b > 0)
        {
            let per_io = [&self.m.read, &self.m.write]
                .into_iter()
                .flatten()
                .filter(|d| d.ios >= MIN_IOS_FOR_BS && d.bytes > 0)
                .map(|d| d.bytes as f64 / d.ios as f64)
                .find(|&b| (b / bs as f64 - 1.0).abs() > BS_TOLERANCE);
            if let Some(per_io) = per_io {
                let size = Shown::per_io_words(per_io);
                out.notes
                    .push(self.contradict(Shown::BlockSize { per_io, bs }));
                out.contradicted.push(ShapeDifference {
                    field: "bs",
                    expected: crate::units::format_size_fio(bs),
                    found: format!("about {size} per I/O (the output's bytes ÷ I/Os)"),
                });
                out.shape.bs = None;
            }
        }
    }

    /// The runtime of a time-based job, from the time the job ran.
    fn runtime(&self, out: &mut Assumption) {
        // The runtime: a time-based job runs its runtime, and fio's runtime includes the drain
        // and the end fsync, so it is never shorter (beyond the deviation rule's own slack). A
        // shorter run is left to the deviation rule, which reads the measured runtime.
        if self.stated.runtime_s.is_none()
            && self.assumed.time_based == Some(true)
            && self.stated.time_based != Some(false)
            && let Some(want) = self.assumed.runtime_s
        {
            let ran_ms = [&self.m.read, &self.m.write]
                .into_iter()
                .flatten()
                .map(|d| d.runtime_ms)
                .max();
            if let Some(ms) = ran_ms
                && ms as f64 / 1000.0 + crate::deviation::runtime_slack_s(want) < want
            {
                out.notes.push(self.contradict(Shown::Runtime {
                    ran_s: ms as f64 / 1000.0,
                    runtime_s: want,
                }));
                out.shape.runtime_s = None;
            }
        }
    }

    /// The size of a job that is not time-based, from the bytes it moved.
    fn size(&self, out: &mut Assumption) {
        // The size: a job that is not time-based ends when each of its jobs has moved `size`
        // bytes, so far fewer bytes moved is a smaller job (which flatters), whatever is
        // assumed.
        if self.stated.size.is_none()
            && self.assumed.time_based != Some(true)
            && self.stated.time_based != Some(true)
            && let Some(want) = self.assumed.size.filter(|&s| s > 0)
        {
            let moved: u64 = [&self.m.read, &self.m.write]
                .into_iter()
                .flatten()
                .map(|d| d.bytes)
                .sum();
            let jobs = self.jobs();
            if moved > 0 && (moved as f64) < want as f64 * (1.0 - SIZE_TOLERANCE) * jobs as f64 {
                let per_job = moved / jobs;
                out.notes.push(self.contradict(Shown::Size {
                    per_job,
                    size: want,
                }));
                out.shape.size = Some(per_job);
            }
        }
    }
}

impl Figures<'_> {
    /// The syncs the job issued while it ran (`fsync=N`, `fdatasync=N`: one every N writes of
    /// each job), from the count the output states, against those of the assumed job: syncs
    /// where it has none, or another number than one every N writes. The end fsync is not in
    /// the count (fio 3.4–3.16 counted it: the count's range allows for it). Where the output
    /// counts none (terse, text before fio 3.4), nothing is read: unknown, never assumed.
    fn syncs(&self, out: &mut Assumption) {
        if self.stated.fsync.is_some() || self.stated.fdatasync.is_some() {
            return;
        }
        // A pasted command line may run a job file: only the syncs it names are its statement.
        if self.by.is_customers()
            && self.assumed.fsync.is_none()
            && self.assumed.fdatasync.is_none()
        {
            return;
        }
        let Some((least, most)) = self.syncs else {
            return;
        };
        let writes = self.m.write.as_ref().map_or(0, |w| w.ios);
        let jobs = self.jobs();
        let every = self
            .assumed
            .fsync
            .map(|n| ("fsync", n))
            .filter(|(_, n)| *n > 0)
            .or_else(|| self.assumed.fdatasync.map(|n| ("fdatasync", n)))
            .filter(|(_, n)| *n > 0);
        // the syncs the assumed job issues over these writes: each job syncs after every N of
        // its own writes, so up to one fewer per job than writes ÷ N
        let by = self.by;
        let (field, expected, (lo, hi)) = match every {
            None => ("fsync", format!("0, no sync while it runs ({by})"), (0, 0)),
            Some((field, n)) => {
                let per = writes / u64::from(n);
                (
                    field,
                    format!("{n}, a sync every {n} writes ({by})"),
                    (per.saturating_sub(jobs), per),
                )
            }
        };
        if most >= lo && least <= hi {
            return;
        }
        let count = if least == most {
            least.to_string()
        } else {
            format!("{least} to {most}")
        };
        let found = match writes {
            0 => format!("{count} syncs issued while it ran (the output's sync count)"),
            w => format!(
                "{count} syncs over {w} writes{} (the output's sync count)",
                per_writes(least, most, w)
            ),
        };
        out.contradicted.push(ShapeDifference {
            field,
            expected,
            found,
        });
        // The record carries what the count shows (fsync and fdatasync cannot be told apart in
        // it): a sync every k writes, or none, so that every later reading of the record finds
        // it another job than the policy's, as this one does.
        out.shape.fdatasync = None;
        out.shape.fsync = Some(match (least, writes) {
            (0, _) | (_, 0) => 0,
            (n, w) => {
                u32::try_from((w as f64 / n as f64).round().max(1.0) as u64).unwrap_or(u32::MAX)
            }
        });
    }
}

impl Figures<'_> {
    /// The I/O depth, from the output's depth distribution: fio never has more I/Os in flight
    /// than iodepth, so I/Os issued at depths above the assumed one state a deeper job (an
    /// iodepth=1 job shows `1=100.0%`), named as the distribution shows it. Where the output
    /// states no distribution, nothing is read.
    fn depth(&self, out: &mut Assumption) {
        if self.stated.iodepth.is_some() {
            return;
        }
        let (Some(want), Some(shares)) = (self.assumed.iodepth, self.depths) else {
            return;
        };
        let buckets = crate::fio::DEPTH_BUCKETS;
        let above: Vec<(usize, f64)> = shares
            .iter()
            .enumerate()
            .filter(|&(i, _)| buckets[i] > want)
            .map(|(i, &s)| (i, s))
            .collect();
        let share: f64 = above.iter().map(|(_, s)| s).sum();
        if share <= DEPTH_SHARE {
            return;
        }
        let deepest = above
            .iter()
            .rev()
            .find(|(_, s)| *s > 0.0)
            .map_or(above[0].0, |(i, _)| *i);
        let range = match buckets.get(deepest + 1) {
            Some(next) if next - 1 > buckets[deepest] => {
                format!("{}–{}", buckets[deepest], next - 1)
            }
            Some(_) => buckets[deepest].to_string(),
            None => format!("{} or more", buckets[deepest]),
        };
        let shown: Vec<String> = buckets
            .iter()
            .zip(shares)
            .map(|(b, s)| {
                let b = if *b == 64 {
                    ">=64".into()
                } else {
                    b.to_string()
                };
                format!("{b}={s:.1}%")
            })
            .collect();
        out.contradicted.push(ShapeDifference {
            field: "iodepth",
            expected: format!("{want} ({})", self.by),
            found: format!(
                "{} or more ({:.1}% of its I/Os issued with {range} in flight, {share:.1}% with more than {want}: the output's I/O depth distribution {})",
                buckets[deepest],
                shares[deepest],
                shown.join(", ")
            ),
        });
        // The record carries the least depth the figures show, so that every later reading
        // of the record finds it another job than the policy's, as this one does.
        out.shape.iodepth = Some(buckets[deepest]);
    }
}

/// How often syncs came, in words: ", one every 4 writes".
fn per_writes(least: u64, most: u64, writes: u64) -> String {
    if least == 0 || least != most {
        return String::new();
    }
    let every = writes as f64 / least as f64;
    if (every - 1.0).abs() < 0.01 {
        ", one every write".into()
    } else {
        format!(", one every {every:.1} writes")
    }
}

/// A record's job fields, as named in its JSON.
pub(super) const SHAPE_FIELDS: [&str; 18] = [
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

/// A job field's value in words: sizes as fio writes them.
pub(super) fn shown(field: &str, v: &serde_json::Value) -> String {
    match (field, v.as_u64()) {
        ("bs" | "size", Some(n)) => crate::units::format_size_fio(n),
        _ => plain(v),
    }
}

pub(super) fn plain(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
