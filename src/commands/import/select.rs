//! Which job blocks of the outputs are judged, and why the others are left out.

use crate::history::Record;
use crate::job::ShapeDifference;
use crate::measure::Measurement;

/// How [`crate::job::JobShape::shape_differences`] names a field the output does not state.
pub(super) const NOT_STATED: &str = "not stated in the output";

/// One job block of an imported output, before it is known whether it counts.
pub(super) struct Candidate {
    pub(super) record: Record,
    /// What the record was made from, as fio's output states it.
    pub(super) measurement: Measurement,
    pub(super) label: String,
    pub(super) differences: Vec<ShapeDifference>,
    /// A field the output states (or its figures show) differs from the policy's job.
    pub(super) contradicts: bool,
    /// What the output's figures contradict of the job assumed with `--assume-job`.
    pub(super) figures_contradict: Vec<ShapeDifference>,
    /// Why the block does not count at all: the same run given again, fio's error, no one
    /// node's test (mixed definitions, a client/server sum).
    pub(super) excluded: Option<String>,
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
    pub(super) contradicted: Vec<ShapeDifference>,
}

/// The runs to judge. A block that is no run of its own or no evidence is never judged; where
/// some blocks have the policy's shape and others state another one (a read-only job beside
/// the write job), only the former are judged. Every block left out is listed as not counted,
/// with the reason.
pub(super) fn select(candidates: Vec<Candidate>) -> Chosen {
    let any_policy_shaped = candidates
        .iter()
        .any(|c| c.excluded.is_none() && !c.contradicts);
    let mut chosen = Chosen {
        records: Vec::new(),
        measurements: Vec::new(),
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
                chosen.measurements.push(c.measurement);
            }
        }
    }
    chosen
}
