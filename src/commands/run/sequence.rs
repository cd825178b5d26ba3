//! The group's runs in the history: its sequence (`--until-decided`, `--recheck-every`), and
//! where it stands against the evidence rule.

use std::path::Path;
use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::config::Ctx;
use crate::evaluate::{self, EvidenceCount, EvidenceStatus, Group, Options, Scope, Warning};
use crate::history::{self, Record};
use crate::policy::Policy;
use crate::run_index::Records;

/// The group's runs in the history over the policy's window, judged as `report
/// --until-decided` judges them, and the lines that could not be read (for the caller to
/// name, as `report` names them, once).
pub(super) fn group_sequence(
    path: &Path,
    group: &Group,
    policy: &Policy,
    settings: &evaluate::sequential::Settings,
    strict: bool,
    now: DateTime<Utc>,
    notes: &[Warning],
) -> anyhow::Result<(evaluate::Evaluation, Records, Vec<history::Skipped>)> {
    let since = crate::select::window_start(now, policy.evidence.window.0);
    let filter = crate::select::Filter::group(group, since);
    let (all, skipped) = history::read_where(path, |h| {
        filter.keeps_head(h) && filter.engine.as_ref() == Some(&h.engine)
    })?;
    let in_group: Vec<Record> = all.into_iter().filter(|r| filter.keeps(r)).collect();
    let mut opts = Options::new(Scope::Report, now);
    opts.strict = strict;
    opts.notes = notes.to_vec();
    opts.sequential = Some(*settings);
    let (mut ev, records) = evaluate::evaluate_left_out(in_group, Vec::new(), policy, &opts);
    ev.group = Some(group.clone());
    Ok((ev, records, skipped))
}

/// Names the history lines that could not be read, as every reader of a history names them.
pub(super) fn name_skipped(skipped: &[history::Skipped], ctx: &Ctx) {
    for w in history::skipped_warnings(skipped) {
        ctx.warn(w);
    }
}

/// Where the group stands against the policy's evidence rule: its runs of the policy's test
/// in the history over the policy's window, counted as a report counts them (a repeated
/// record once, its days as `evaluate::evidence_days` counts them), each line read once and
/// only its run kept. The lines of the window that cannot be read are named, as
/// every reader of a history names them; None (said) where the history cannot be read.
pub(super) fn history_evidence(
    path: &Path,
    group: Option<&Group>,
    policy: &Policy,
    now: DateTime<Utc>,
    ctx: &Ctx,
) -> Option<EvidenceStatus> {
    let since = crate::select::window_start(now, policy.evidence.window.0);
    // This group's runs only: its host, policy, directory and engine.
    let filter = group.map(|g| crate::select::Filter::group(g, since));
    let mut count = EvidenceCount::new(policy, now);
    // Read as a report reads it, from the file itself: a record that repeats an earlier one
    // (`Run::repeat_of`, confirmed by reading that line again) is one run, counted once.
    let read = history::open_for_reading(path).and_then(|file| match file {
        Some(f) => history::scan_runs_of(
            std::io::BufReader::with_capacity(history::READ_BUFFER, &f),
            Some(&f),
            path,
            history::MAX_LINE,
            Some(since),
            |h| {
                filter
                    .as_ref()
                    .is_some_and(|f| f.keeps_head(h) && f.engine.as_ref() == Some(&h.engine))
            },
            |r| {
                if filter.as_ref().is_some_and(|f| f.keeps(&r)) {
                    count.add(&r)
                }
            },
        ),
        None => Ok(Vec::new()),
    });
    match read {
        Ok(skipped) => {
            name_skipped(&skipped, ctx);
            Some(count.status())
        }
        Err(e) => {
            ctx.warn(e);
            None
        }
    }
}

/// When the group's next re-check is due, where its sequence has ended (every deciding rule's,
/// by a decision, at the threshold or at the budget): `every` after its newest run, the
/// decision or the latest re-check. None while the sequence goes on, or where a figure was
/// not positive (nothing was decided: test again).
pub(super) fn recheck_due(ev: &evaluate::Evaluation, every: Duration) -> Option<DateTime<Utc>> {
    use evaluate::sequential::Outcome;
    let ended = !ev.sequential.is_empty()
        && ev
            .sequential
            .iter()
            .all(|d| d.sequence.outcome.ended() && d.sequence.outcome != Outcome::NotPositive);
    if !ended {
        return None;
    }
    let newest = ev.runs.iter().map(|r| r.timestamp).max()?;
    Some(newest.with_timezone(&Utc) + chrono::Duration::from_std(every).ok()?)
}

/// The decision that stands (`--recheck-every`): each sequence's outcome, the run that decided
/// the last, and when the next re-check is due.
pub(super) fn standing(ev: &evaluate::Evaluation, due: DateTime<Utc>, every: Duration) -> Warning {
    Warning::DecisionStands {
        outcomes: ev.sequential.iter().map(|d| d.sequence.outcome).collect(),
        decided_at: ev
            .sequential
            .iter()
            .filter_map(|d| d.sequence.decided_at)
            .max(),
        due,
        every,
    }
}
