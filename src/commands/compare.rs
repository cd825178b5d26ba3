//! `iopscheck compare`: two selections of the history's runs of the policy's test, compared
//! by `evaluate::compare` and rendered by `report::compare`.

use chrono::{DateTime, Utc};

use crate::config::compare::Side;
use crate::config::{CompareConfig, Ctx, Outputs};
use crate::error::usage;
use crate::evaluate;
use crate::evaluate::compare::{Comparison, compare};
use crate::exit::Exit;
use crate::history::{self, Record};
use crate::policy::Policy;
use crate::select::{self, Filter};

pub fn run(cfg: CompareConfig, ctx: &Ctx) -> anyhow::Result<u8> {
    let CompareConfig {
        policy,
        history: path,
        now,
        a,
        b,
        at,
        alpha,
        outputs,
    } = cfg;
    // A missing history reads as empty; one that is not a regular file, or not trusted, is
    // refused as `report` refuses it.
    let (records, skipped) =
        history::read_where(&path, |h| a.filter.keeps_head(h) || b.filter.keeps_head(h))?;
    for w in history::skipped_warnings(&skipped) {
        ctx.warn(w);
    }
    let side = |f: &Filter, later: Option<bool>| -> Vec<Record> {
        records
            .iter()
            .filter(|r| f.keeps(*r))
            .filter(|r| match (later, at) {
                (Some(l), Some(t)) => (r.timestamp.with_timezone(&Utc) >= t) == l,
                _ => true,
            })
            .cloned()
            .collect()
    };
    let (ra, rb) = if at.is_some() {
        (side(&a.filter, Some(true)), side(&b.filter, Some(false)))
    } else {
        (side(&a.filter, None), side(&b.filter, None))
    };
    let Some(rule) = policy.deciding_rules().next() else {
        return Err(usage(format!(
            "policy {} has no deciding rule to compare by",
            policy.name
        )));
    };
    let (va, da) = figures(ra, &a, &policy, &rule.metric, now)?;
    let (vb, db) = figures(rb, &b, &policy, &rule.metric, now)?;
    match compare(
        &rule.metric,
        (&a.label, &va, da),
        (&b.label, &vb, db),
        alpha,
    ) {
        Ok(c) => {
            emit(&outputs, &c, &policy.name)?;
            Ok(Exit::Pass.code())
        }
        Err(why) => {
            crate::out::err_line(format_args!("iopscheck: cannot compare: {why}"));
            Ok(Exit::Inconclusive.code())
        }
    }
}

/// A side's figures of `metric` (one per run of the policy's test) and the days they span.
/// Runs of several directories or engines are refused: a side is one group.
fn figures(
    recs: Vec<Record>,
    side: &Side,
    policy: &Policy,
    metric: &str,
    now: DateTime<Utc>,
) -> anyhow::Result<(Vec<f64>, usize)> {
    let (evs, _) = select::evaluate_groups(recs, policy, &side.filter, now, false);
    if evs.len() > 1 {
        let groups: Vec<String> = evs
            .iter()
            .filter_map(|e| e.group.as_ref())
            .map(|g| format!("{} {}", g.dir, g.engine))
            .collect();
        return Err(usage(format!(
            "{}: runs of {} directories or engines ({}): choose one with --dir/--vs-dir or --engine/--vs-engine",
            side.label,
            evs.len(),
            groups.join(", ")
        )));
    }
    let Some(ev) = evs.into_iter().next() else {
        return Ok((Vec::new(), 0));
    };
    let runs: Vec<&crate::run_index::Run> = ev
        .runs
        .iter()
        .filter(|r| r.metrics.contains_key(metric))
        .collect();
    let days = evaluate::run_days(runs.iter().copied(), policy.evidence.min_runs_per_day).counted;
    Ok((runs.iter().map(|r| r.metrics[metric]).collect(), days))
}

/// Renders the comparison on stdout and into every `-o`/`--export` file.
fn emit(outputs: &Outputs, c: &Comparison, policy: &str) -> anyhow::Result<()> {
    if let Some(f) = outputs.stdout {
        let mut out = crate::out::stdout();
        crate::report::compare::render(f, c, policy, &mut out)?;
        std::io::Write::flush(&mut out)?;
        crate::out::finish_stdout();
    }
    for (i, (f, file)) in outputs.files.iter().enumerate() {
        outputs
            .opened(i)
            .publish_with(|w| crate::report::compare::render(*f, c, policy, w))
            .map_err(|e| {
                anyhow::anyhow!("cannot write {} to {}: {e}", f.as_str(), file.display())
            })?;
    }
    Ok(())
}
