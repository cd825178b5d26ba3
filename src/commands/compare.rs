//! `iopscheck compare`: two selections of the history's runs of the policy's test, compared
//! by `evaluate::compare` and rendered by `report::compare`.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};

use crate::cli::CompareArgs;
use crate::config::{Ctx, Input, Outputs};
use crate::error::usage;
use crate::evaluate::{self, compare::compare};
use crate::exit::Exit;
use crate::history::{self, Record};
use crate::policy;
use crate::select::{self, Filter};

pub fn run(args: CompareArgs, ctx: &Ctx) -> anyhow::Result<u8> {
    let loaded = policy::resolve(&args.policy)?;
    let path = crate::config::history_path(&args.history.history);
    // Where the comparison goes, checked before anything is read: never over an input.
    let outputs = Outputs::from_args(&crate::cli::OutputArgs {
        format: args.format,
        output: args.output.clone(),
        export: args.export.clone(),
        strict: false,
        verbose: false,
    })?;
    let mut inputs: Vec<Input> = crate::config::policy_input(&loaded, "-p/--policy")
        .into_iter()
        .collect();
    inputs.push(Input::new("the history", &path));
    outputs.refuse_inputs(&inputs)?;
    let policy = loaded.policy;
    let now = Utc::now();
    let since = match (&args.since, args.at) {
        (Some(s), _) => s.start(now),
        (None, Some(_)) => DateTime::<Utc>::UNIX_EPOCH,
        (None, None) => select::window_start(now, policy.evidence.window.0),
    };
    let host = match args.host.clone() {
        Some(h) => h,
        None => crate::machine::host_from(None)
            .map_err(usage)?
            .unwrap_or_else(crate::machine::hostname),
    };
    let canonical = |d: &String| {
        std::fs::canonicalize(d)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| d.clone())
    };
    let a = Filter {
        host: Some(host.clone()),
        dir: args.dir.as_ref().map(canonical),
        engine: args.engine.clone(),
        policy: policy.name.clone(),
        since,
    };
    let b = Filter {
        host: Some(args.vs_host.clone().unwrap_or_else(|| host.clone())),
        dir: args.vs_dir.as_ref().map(canonical).or(a.dir.clone()),
        engine: args.vs_engine.clone().or(a.engine.clone()),
        policy: policy.name.clone(),
        since,
    };
    // Each side named by what sets it apart.
    let mut a_label = Vec::new();
    let mut b_label = Vec::new();
    if args.vs_host.is_some() || (args.vs_dir.is_none() && args.vs_engine.is_none()) {
        a_label.push(host.clone());
        b_label.push(b.host.clone().unwrap_or_default());
    }
    if let Some(d) = &b.dir
        && args.vs_dir.is_some()
    {
        a_label.push(a.dir.clone().unwrap_or_else(|| "any directory".into()));
        b_label.push(d.clone());
    }
    if let Some(e) = &args.vs_engine {
        a_label.push(a.engine.clone().unwrap_or_else(|| "any engine".into()));
        b_label.push(e.clone());
    }
    if let Some(at) = args.at {
        a_label.push(format!("since {}", at.format("%Y-%m-%d %H:%M UTC")));
        b_label.push(format!("before {}", at.format("%Y-%m-%d %H:%M UTC")));
    }
    let (a_label, b_label) = (a_label.join(" "), b_label.join(" "));

    // A missing history reads as empty; one that is not a regular file, or not trusted, is
    // refused as `report` refuses it.
    let (records, skipped) = history::read_where(&path, |h| a.keeps_head(h) || b.keeps_head(h))?;
    for w in history::skipped_warnings(&skipped) {
        ctx.warn(w);
    }
    let at = args.at;
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
        (side(&a, Some(true)), side(&b, Some(false)))
    } else {
        (side(&a, None), side(&b, None))
    };
    let Some(rule) = policy.deciding_rules().next() else {
        return Err(usage(format!(
            "policy {} has no deciding rule to compare by",
            policy.name
        )));
    };
    let figures = |recs: Vec<Record>,
                   f: &Filter,
                   label: &str|
     -> anyhow::Result<(Vec<f64>, usize)> {
        let (evs, _) = select::evaluate_groups(recs, &policy, f, now, false);
        if evs.len() > 1 {
            let groups: Vec<String> = evs
                .iter()
                .filter_map(|e| e.group.as_ref())
                .map(|g| format!("{} {}", g.dir, g.engine))
                .collect();
            return Err(usage(format!(
                "{label}: runs of {} directories or engines ({}): choose one with --dir/--vs-dir or --engine/--vs-engine",
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
            .filter(|r| r.metrics.contains_key(&rule.metric))
            .collect();
        let days: BTreeSet<_> = runs.iter().map(|r| evaluate::day_of(*r)).collect();
        Ok((
            runs.iter().map(|r| r.metrics[&rule.metric]).collect(),
            days.len(),
        ))
    };
    let (va, da) = figures(ra, &a, &a_label)?;
    let (vb, db) = figures(rb, &b, &b_label)?;
    match compare(
        &rule.metric,
        (&a_label, &va, da),
        (&b_label, &vb, db),
        args.alpha,
    ) {
        Ok(c) => {
            if let Some(f) = outputs.stdout {
                let mut out = crate::out::stdout();
                crate::report::compare::render(f, &c, &policy.name, &mut out)?;
                std::io::Write::flush(&mut out)?;
                crate::out::finish_stdout();
            }
            for (i, (f, file)) in outputs.files.iter().enumerate() {
                outputs
                    .opened(i)
                    .publish_with(|w| crate::report::compare::render(*f, &c, &policy.name, w))
                    .map_err(|e| {
                        anyhow::anyhow!("cannot write {} to {}: {e}", f.as_str(), file.display())
                    })?;
            }
            Ok(Exit::Pass.code())
        }
        Err(why) => {
            crate::out::err_line(format_args!("iopscheck: cannot compare: {why}"));
            Ok(Exit::Inconclusive.code())
        }
    }
}
