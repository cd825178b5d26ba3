//! Markdown (GitHub flavoured) for tickets, pull requests and wikis: the verdict first, then
//! the policy and its source, the runs, the rules, the days, the evidence and the warnings.
//! Every piece of text that comes from a record or a policy is escaped, so a directory name
//! cannot turn into a link, emphasis, raw HTML or an extra table column.

use std::io::{self, Write};

use crate::evaluate::{Evaluation, RuleResult, Scope, Verdict};
use crate::policy::Level;

use super::fmt_value;

pub fn render(ev: &Evaluation, out: &mut dyn Write) -> io::Result<()> {
    let p = &ev.policy;
    let id = super::identity(ev);
    writeln!(
        out,
        "# iopscheck: {} — {}",
        esc(&p.name),
        verdict_word(ev.verdict)
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "**Verdict: {} {}** — {}",
        verdict_icon(ev.verdict),
        verdict_word(ev.verdict),
        esc(&ev.reason)
    )?;
    writeln!(out)?;
    // The test's shape and what keeps it from being the policy's, under the banner.
    let context = super::verdict_context(ev);
    if !ev.runs.is_empty() || !context.is_empty() {
        if !ev.runs.is_empty() {
            writeln!(out, "- test: {}", esc(&super::test_shape(ev)))?;
        }
        for line in &context {
            writeln!(out, "- {}", esc(line))?;
        }
        writeln!(out)?;
    }

    writeln!(out, "## Policy")?;
    writeln!(out)?;
    writeln!(out, "- **{}**: {}", esc(&p.name), esc(&p.description))?;
    let title = if p.source.is_empty() {
        "source"
    } else {
        &p.source
    };
    match super::safe_url(&p.url) {
        Some(url) => writeln!(
            out,
            "- source: [{}](<{}>) (seen {}; test {})",
            esc(title),
            url_in_brackets(url),
            esc(&p.seen),
            esc(&p.test)
        )?,
        None => writeln!(
            out,
            "- source: {} {} (seen {}; test {})",
            esc(title),
            esc(&p.url),
            esc(&p.seen),
            esc(&p.test)
        )?,
    }
    writeln!(
        out,
        "- host {}, directory {}, engine {}",
        esc_or_dash(&id.host),
        if id.dir.is_empty() {
            "—".into()
        } else {
            code(&id.dir)
        },
        esc_or_dash(&id.engine)
    )?;
    writeln!(
        out,
        "- judged: {} ({}){}",
        scope_word(ev.scope),
        p.aggregate.as_str(),
        if ev.strict {
            "; strict: warn-level rules decide too"
        } else {
            ""
        }
    )?;
    writeln!(out)?;

    runs_table(ev, out)?;
    rules_table(ev, out)?;

    if !ev.days.is_empty() {
        writeln!(
            out,
            "## Per day ({})",
            code(ev.primary_metric().unwrap_or(""))
        )?;
        writeln!(out)?;
        writeln!(out, "| day | runs | mean | min | max |")?;
        writeln!(out, "| --- | ---: | ---: | ---: | ---: |")?;
        for d in &ev.days {
            writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                d.date,
                d.runs,
                fmt_value(d.mean),
                fmt_value(d.min),
                fmt_value(d.max)
            )?;
        }
        writeln!(out)?;
    }

    writeln!(out, "## Evidence")?;
    writeln!(out)?;
    writeln!(
        out,
        "{} (window {}){}",
        esc(&ev.evidence.advice()),
        esc(&ev.evidence.window),
        if ev.scope == Scope::Report {
            ""
        } else {
            "; a report over the history applies this rule"
        }
    )?;
    writeln!(out)?;
    if !ev.differences.is_empty() {
        writeln!(out, "## Differences from the policy's test")?;
        writeln!(out)?;
        for d in &ev.differences {
            writeln!(out, "- {}", esc(&d.to_string()))?;
        }
        writeln!(out)?;
    }

    writeln!(out, "## Warnings")?;
    writeln!(out)?;
    if ev.warnings.is_empty() {
        writeln!(out, "None.")?;
    }
    for w in &ev.warnings {
        writeln!(out, "- ⚠️ {}", esc(&w.to_string()))?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "<sub>iopscheck {}, generated {}</sub>",
        env!("CARGO_PKG_VERSION"),
        ev.generated.format("%Y-%m-%d %H:%M:%S UTC")
    )?;
    Ok(())
}

fn runs_table(ev: &Evaluation, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "## Runs")?;
    writeln!(out)?;
    if ev.runs.is_empty() {
        writeln!(out, "No runs.")?;
        writeln!(out)?;
        return Ok(());
    }
    let cols = rule_columns(ev);
    let mut head = String::from("| # | time | host | engine | source |");
    let mut align = String::from("| ---: | --- | --- | --- | --- |");
    for r in &cols {
        let unit = if r.unit.is_empty() {
            String::new()
        } else {
            format!(" ({})", esc(r.unit))
        };
        head.push_str(&format!(" {}{} |", code(&r.metric), unit));
        align.push_str(" ---: |");
    }
    writeln!(out, "{head}")?;
    writeln!(out, "{align}")?;
    for (i, run) in ev.runs.iter().enumerate() {
        let mut line = format!(
            "| {} | {} | {} | {} | {} |",
            i + 1,
            run.timestamp.format("%Y-%m-%d %H:%M:%S %:z"),
            esc(&run.host),
            esc(&run.engine),
            run.source.as_str()
        );
        for r in &cols {
            let cell = match run.metrics.get(&r.metric) {
                Some(&v) => format!("{}{}", fmt_value(v), mark(r, v)),
                None => "—".into(),
            };
            line.push_str(&format!(" {cell} |"));
        }
        writeln!(out, "{line}")?;
    }
    let mut line = format!("| **{}** | | | | |", ev.policy.aggregate.as_str());
    for r in &cols {
        let cell = r
            .value
            .map(|v| format!("**{}**", fmt_value(v)))
            .unwrap_or("—".into());
        line.push_str(&format!(" {cell} |"));
    }
    writeln!(out, "{line}")?;
    writeln!(out)?;
    Ok(())
}

fn rules_table(ev: &Evaluation, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "## Rules")?;
    writeln!(out)?;
    if ev.rules.is_empty() {
        writeln!(out, "The policy has no rules.")?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(
        out,
        "| level | metric | {} | 95% interval | threshold | result | note |",
        ev.policy.aggregate.as_str()
    )?;
    writeln!(out, "| --- | --- | ---: | ---: | ---: | --- | --- |")?;
    for r in &ev.rules {
        let ci = ev
            .summary
            .metrics
            .get(&r.metric)
            .filter(|s| s.n > 1)
            .map(|s| format!("{}–{}", fmt_value(s.ci95_low), fmt_value(s.ci95_high)))
            .unwrap_or("—".into());
        writeln!(
            out,
            "| {} | {} | {} | {} | {} {} {} | {} | {} |",
            r.level.as_str(),
            code(&r.metric),
            r.value.map(fmt_value).unwrap_or("—".into()),
            ci,
            r.op,
            fmt_value(r.threshold),
            esc(r.unit),
            result(r, ev.strict),
            r.note.as_deref().map(esc).unwrap_or_default()
        )?;
    }
    writeln!(out)?;
    Ok(())
}

/// Each metric a rule names, once, with its first rule (for the per-run ✓/✗ marks).
fn rule_columns(ev: &Evaluation) -> Vec<&RuleResult> {
    let mut cols: Vec<&RuleResult> = Vec::new();
    for r in &ev.rules {
        if !cols.iter().any(|c| c.metric == r.metric) {
            cols.push(r);
        }
    }
    cols
}

fn mark(r: &RuleResult, v: f64) -> &'static str {
    match r.level {
        Level::Info => "",
        _ if r.op.holds(v, r.threshold) => " ✓",
        _ => " ✗",
    }
}

fn result(r: &RuleResult, strict: bool) -> String {
    let deciding = r.level == Level::Fail || (strict && r.level == Level::Warn);
    let base = match (r.passed, r.level) {
        (None, _) => "not measured",
        (Some(true), _) => "✅ meets",
        (Some(false), _) if deciding => "❌ fails",
        (Some(false), Level::Warn) => "⚠️ misses the soft limit",
        (Some(false), _) => "misses (shown only)",
    };
    if r.marginal {
        format!("{base} (marginal)")
    } else {
        base.to_string()
    }
}

fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "PASS",
        Verdict::Fail => "FAIL",
        Verdict::Inconclusive => "INCONCLUSIVE",
    }
}

fn verdict_icon(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "✅",
        Verdict::Fail => "❌",
        Verdict::Inconclusive => "❔",
    }
}

fn scope_word(s: Scope) -> &'static str {
    match s {
        Scope::Run => "the runs of this invocation",
        Scope::Import => "imported fio outputs",
        Scope::Report => "the history over the window",
    }
}

fn esc_or_dash(s: &str) -> String {
    if s.is_empty() { "—".into() } else { esc(s) }
}

/// Text safe anywhere in a line or a table cell: ASCII punctuation that Markdown or HTML could
/// read as syntax is backslash-escaped (CommonMark allows that for any ASCII punctuation), and
/// line breaks become spaces.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '&' | '#' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// A name (metric, directory) as code when it is plain enough to need no escaping there;
/// otherwise escaped text.
fn code(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ':' | '+' | '@'));
    if plain { format!("`{s}`") } else { esc(s) }
}

/// An address inside `<…>` link destination brackets, where only `<`, `>`, line breaks and
/// spaces would end it early.
fn url_in_brackets(url: &str) -> String {
    url.chars()
        .flat_map(|c| match c {
            '<' => "%3C".chars().collect::<Vec<_>>(),
            '>' => "%3E".chars().collect(),
            ' ' => "%20".chars().collect(),
            c if c.is_control() => vec![],
            c => vec![c],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::esc;

    #[test]
    fn record_text_cannot_become_markup() {
        assert_eq!(esc("/data|x"), "/data\\|x");
        assert_eq!(esc("<script>"), "\\<script\\>");
        assert_eq!(esc("[a](b)"), "\\[a\\](b)");
        assert_eq!(esc("two\nlines"), "two lines");
        assert_eq!(esc("write_iops"), "write\\_iops");
        assert_eq!(super::code("write_iops"), "`write_iops`");
        assert_eq!(super::code("/my dir|x"), "/my dir\\|x");
    }
}
