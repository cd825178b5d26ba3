//! Which job blocks of the outputs are judged, and why the others are left out.

use crate::deviation::Contradiction;
use crate::history::Record;
use crate::job::ShapeDifference;
use crate::measure::Measurement;

/// One job block of an imported output, before it is known whether it counts.
pub(super) struct Candidate {
    pub(super) record: Record,
    /// What the record was made from, as fio's output states it.
    pub(super) measurement: Measurement,
    pub(super) label: String,
    /// The fields in which the output states (or its figures show) another job than the
    /// policy's.
    pub(super) differences: Vec<ShapeDifference>,
    /// Whether the output leaves a field of the job's shape unstated: the block is then not
    /// known to be the policy's job, whatever it states.
    pub(super) unstated: bool,
    /// What the output's figures contradict of the job assumed with `--assume-job`.
    pub(super) figures_contradict: Vec<ShapeDifference>,
    /// Why the block does not count at all: the same run given again, fio's error, no one
    /// node's test (mixed definitions, a client/server sum).
    pub(super) excluded: Option<String>,
    /// Left out as another format's copy of a run counted (its JSON, text or terse output).
    pub(super) copy: bool,
}

/// What [`select`] keeps.
pub(super) struct Chosen {
    /// The runs to judge.
    pub(super) records: Vec<Record>,
    /// Their measurements, in the same order.
    pub(super) measurements: Vec<Measurement>,
    /// The blocks left out, each with its reason ("file: why"), listed as not counted.
    pub(super) left_out: Vec<(Record, String)>,
    /// What the figures of the judged runs contradict of an assumed job.
    pub(super) contradicted: Vec<Contradiction>,
}

/// The runs to judge. A block that is no run of its own or no evidence is never judged; where
/// some blocks state the policy's shape and others state another one (a read-only job beside
/// the write job), only the former are judged. A block whose shape the output does not state
/// in full is not known to be the policy's job: it never has another block left out in its
/// favour (every block is then judged, and the verdict names what each shows and leaves
/// unstated). Every block left out is listed as not counted, with the reason.
pub(super) fn select(candidates: Vec<Candidate>) -> Chosen {
    let any_policy_shaped = candidates
        .iter()
        .any(|c| c.excluded.is_none() && c.differences.is_empty() && !c.unstated);
    let mut chosen = Chosen {
        records: Vec::new(),
        measurements: Vec::new(),
        left_out: Vec::new(),
        contradicted: Vec::new(),
    };
    for c in candidates {
        let reason = c.excluded.clone().or_else(|| {
            (any_policy_shaped && !c.differences.is_empty()).then(|| {
                let what: Vec<String> = c
                    .differences
                    .iter()
                    .map(|d| format!("{} {} instead of {}", d.field, d.found, d.expected))
                    .collect();
                format!("not the policy's job ({})", what.join(", "))
            })
        });
        match reason {
            Some(r) => chosen
                .left_out
                .push((c.record, format!("{}: {r}", c.label))),
            None => {
                let at = chosen.records.len();
                chosen
                    .contradicted
                    .extend(c.figures_contradict.into_iter().map(|d| Contradiction {
                        difference: d,
                        run: c.label.clone(),
                        record: Some(at),
                    }));
                chosen.records.push(c.record);
                chosen.measurements.push(c.measurement);
            }
        }
    }
    chosen
}
