//! Markdown (GitHub flavoured) for tickets, pull requests and wikis: the verdict first, then
//! the policy and its source, the runs, the rules, the days, the evidence and the warnings.
//! Every piece of text that comes from a record or a policy is escaped, so a directory name
//! cannot turn into a link, emphasis, raw HTML or an extra table column.

use std::io::{self, Write};

use crate::evaluate::{Evaluation, Verdict};

use super::view::{self, Align, Emphasis, Outcome, Table};
use super::view_node;

pub fn render(ev: &Evaluation, out: &mut dyn Write) -> io::Result<()> {
    let notes = view_node::notes(ev);
    banner(ev, &notes, out)?;
    policy_section(ev, out)?;
    runs_section(ev, out)?;
    table_section(
        out,
        "Rules",
        view_node::rules_table(ev),
        "The policy has no rules.",
    )?;
    if let Some(t) = view::days_table(ev) {
        heading(&t, out)?;
        table(&t, out)?;
        writeln!(out)?;
    }
    evidence_section(&notes, out)?;
    warnings_section(&notes, out)?;
    writeln!(
        out,
        "<sub>iopscheck {}, generated {}</sub>",
        crate::version::VERSION,
        ev.generated.format("%Y-%m-%d %H:%M:%S UTC")
    )?;
    Ok(())
}

/// The title and the verdict with its reason; under them the test's shape and what keeps it
/// from being the policy's.
fn banner(ev: &Evaluation, notes: &view_node::Notes, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "# iopscheck: {} — {}",
        esc(&ev.policy.name),
        verdict_word(ev.verdict)
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "**Verdict: {} {}** {} — {}",
        verdict_icon(ev.verdict),
        verdict_word(ev.verdict),
        esc(&ev.judged_on()),
        esc(&ev.reason)
    )?;
    writeln!(out)?;
    let context = &notes.beside_verdict;
    if !ev.runs.is_empty() || !context.is_empty() {
        if !ev.runs.is_empty() {
            writeln!(out, "- test: {}", esc(&super::test_shape(ev)))?;
        }
        for line in context {
            writeln!(out, "- {}", esc(line))?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// The policy, its source (a link where the address is safe), what was tested and how it was
/// judged.
fn policy_section(ev: &Evaluation, out: &mut dyn Write) -> io::Result<()> {
    let p = &ev.policy;
    let id = super::identity(ev);
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
        "- {}, directory {}, engine {}",
        if id.host.is_empty() {
            "host —".into()
        } else {
            esc(&id.host_words())
        },
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
        view_node::scope_words(ev.scope),
        p.aggregate.as_str(),
        view_node::strict_words(ev.strict)
    )?;
    writeln!(out)
}

/// The runs: past 200 runs the table has a row per day, said first, under the heading. The
/// runs left out of the verdict follow, each with the reason.
fn runs_section(ev: &Evaluation, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "## Runs")?;
    writeln!(out)?;
    if let Some(note) = view::runs_note(ev) {
        // Our own words (a count and flag names), written as Markdown: the flags as code.
        writeln!(out, "{note}")?;
        writeln!(out)?;
    }
    if let Some(note) = view::judging_note(ev) {
        // The deviations name fields and values from the outputs: escaped.
        writeln!(out, "{}", esc(&note))?;
        writeln!(out)?;
    }
    match view::runs_table(ev) {
        Some(t) => table(&t, out)?,
        None => writeln!(out, "{}", view_node::no_runs_words(ev))?,
    }
    writeln!(out)?;
    if let Some(t) = view_node::not_counted_table(ev) {
        writeln!(out, "### {}", t.title)?;
        writeln!(out)?;
        if let Some(note) = view_node::not_counted_note(ev) {
            writeln!(out, "{}", esc(&note))?;
            writeln!(out)?;
        }
        table(&t, out)?;
        writeln!(out)?;
    }
    Ok(())
}

/// What the verdict rests on, and how the test differed from the policy's, where it did.
fn evidence_section(notes: &view_node::Notes, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "## Evidence")?;
    writeln!(out)?;
    writeln!(out, "{}", esc(&notes.evidence))?;
    writeln!(out)?;
    if !notes.differences.is_empty() {
        writeln!(out, "## Differences from the policy's test")?;
        writeln!(out)?;
        for d in &notes.differences {
            writeln!(out, "- {}", esc(d))?;
        }
        writeln!(out)?;
    }
    Ok(())
}

fn warnings_section(notes: &view_node::Notes, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "## Warnings")?;
    writeln!(out)?;
    if notes.warnings.is_empty() {
        writeln!(out, "None.")?;
    }
    for w in &notes.warnings {
        writeln!(out, "- ⚠️ {}", esc(w))?;
    }
    writeln!(out)
}

/// A section of one view table: its heading, then the table, or `none` without one.
fn table_section(
    out: &mut dyn Write,
    heading: &str,
    t: Option<Table>,
    none: &str,
) -> io::Result<()> {
    writeln!(out, "## {heading}")?;
    writeln!(out)?;
    match t {
        Some(t) => table(&t, out)?,
        None => writeln!(out, "{none}")?,
    }
    writeln!(out)?;
    Ok(())
}

/// A view table's title as a second-level heading, its subject as code.
fn heading(t: &Table, out: &mut dyn Write) -> io::Result<()> {
    match &t.subject {
        Some(s) => writeln!(out, "## {} ({})", t.title, code(s))?,
        None => writeln!(out, "## {}", t.title)?,
    }
    writeln!(out)
}

/// A view table in GitHub's table syntax: names as code, every cell escaped, the aggregate in
/// bold; a cell's detail is left out and a label spanning columns is followed by empty cells.
fn table(t: &Table, out: &mut dyn Write) -> io::Result<()> {
    let mut head = String::from("|");
    let mut align = String::from("|");
    for c in &t.columns {
        let title = if c.name {
            code(&c.title)
        } else {
            c.title.clone()
        };
        let unit = if c.unit.is_empty() {
            String::new()
        } else {
            format!(" ({})", esc(&c.unit))
        };
        head.push_str(&format!(" {title}{unit} |"));
        align.push_str(match c.align {
            Align::Left => " --- |",
            Align::Right => " ---: |",
        });
    }
    writeln!(out, "{head}")?;
    writeln!(out, "{align}")?;
    for row in &t.rows {
        let mut line = String::from("|");
        for c in &row.cells {
            let text = if c.name { code(&c.text) } else { esc(&c.text) };
            match c.emphasis {
                Emphasis::Strong => line.push_str(&format!(" **{text}** |")),
                Emphasis::Outcome(o) => line.push_str(&format!(" {}{text} |", outcome_icon(o))),
                _ => line.push_str(&format!(" {text} |")),
            }
            for _ in 1..c.span {
                line.push_str(" |");
            }
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// The icon before a rule's outcome.
fn outcome_icon(o: Outcome) -> &'static str {
    match o {
        Outcome::Meets => "✅ ",
        Outcome::Fails => "❌ ",
        Outcome::Soft => "⚠️ ",
        Outcome::NotMeasured | Outcome::ShownOnly | Outcome::NotJudged | Outcome::Undecided => "",
    }
}

fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "PASS",
        Verdict::Fail => "FAIL",
        Verdict::Inconclusive => "INCONCLUSIVE",
    }
}

/// The icon before a verdict, the node's and the fleet's.
pub(super) fn verdict_icon(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "✅",
        Verdict::Fail => "❌",
        Verdict::Inconclusive => "❔",
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
