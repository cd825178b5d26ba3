//! `iopscheck compare` in every format: the same [`Comparison`] (its sentence, both sides,
//! the ratio and its interval), each format doing syntax and escaping only.

use std::io::{self, Write};

use serde::Serialize;

use super::Format;
use crate::evaluate::compare::Comparison;

#[derive(Serialize)]
struct Doc<'a> {
    schema_version: u32,
    kind: &'static str,
    tool: crate::version::Tool,
    policy: &'a str,
    sentence: String,
    #[serde(flatten)]
    comparison: &'a Comparison,
}

/// Writes `c` (under `policy`) as `format`.
pub fn render(format: Format, c: &Comparison, policy: &str, out: &mut dyn Write) -> io::Result<()> {
    let sentence = c.sentence();
    let side = |s: &crate::evaluate::compare::Side| {
        format!(
            "{}: mean {} {} over {} run{} on {} day{}",
            s.label,
            crate::numbers::short(s.mean),
            c.unit,
            s.n,
            if s.n == 1 { "" } else { "s" },
            s.days,
            if s.days == 1 { "" } else { "s" }
        )
    };
    match format {
        Format::Table | Format::Summary | Format::Reply => {
            writeln!(out, "{sentence}")?;
            if format == Format::Table {
                writeln!(out, "  {}", side(&c.a))?;
                writeln!(out, "  {}", side(&c.b))?;
                writeln!(
                    out,
                    "  policy {policy}; the {}% interval (α {}) is the modified Cox interval of each side's mean, combined on the log scale ({} degrees of freedom)",
                    c.level(),
                    c.alpha,
                    c.df
                )?;
            }
        }
        Format::Json | Format::Jsonl => {
            let doc = Doc {
                schema_version: 1,
                kind: "comparison",
                tool: crate::version::TOOL,
                policy,
                sentence: sentence.clone(),
                comparison: c,
            };
            if format == Format::Json {
                serde_json::to_writer_pretty(&mut *out, &doc)?;
            } else {
                serde_json::to_writer(&mut *out, &doc)?;
            }
            writeln!(out)?;
        }
        Format::Csv => {
            use super::csv::field;
            writeln!(
                out,
                "policy,metric,a,a_runs,a_days,a_mean,b,b_runs,b_days,b_mean,ratio,ci95_low,ci95_high,alpha,real,sentence,confidence,ci_low,ci_high"
            )?;
            let row = [
                policy.to_string(),
                c.metric.clone(),
                c.a.label.clone(),
                c.a.n.to_string(),
                c.a.days.to_string(),
                c.a.mean.to_string(),
                c.b.label.clone(),
                c.b.n.to_string(),
                c.b.days.to_string(),
                c.b.mean.to_string(),
                c.ratio.to_string(),
                // Empty where the interval is not the 95% one: see ci_low, ci_high.
                c.ci95_low.map(|v| v.to_string()).unwrap_or_default(),
                c.ci95_high.map(|v| v.to_string()).unwrap_or_default(),
                c.alpha.to_string(),
                c.real.to_string(),
                sentence.clone(),
                c.confidence.to_string(),
                c.ci_low.to_string(),
                c.ci_high.to_string(),
            ];
            let row: Vec<String> = row.iter().map(|f| field(f)).collect();
            writeln!(out, "{}", row.join(","))?;
        }
        Format::Markdown => {
            use super::markdown::esc;
            writeln!(out, "## Comparison ({})\n", esc(policy))?;
            writeln!(out, "{}\n", esc(&sentence))?;
            writeln!(out, "| side | runs | days | mean {} |", esc(c.unit))?;
            writeln!(out, "| --- | ---: | ---: | ---: |")?;
            for s in [&c.a, &c.b] {
                writeln!(
                    out,
                    "| {} | {} | {} | {} |",
                    esc(&s.label),
                    s.n,
                    s.days,
                    crate::numbers::short(s.mean)
                )?;
            }
        }
        Format::Prometheus => {
            use super::prometheus::label_value;
            let l = format!(
                "policy=\"{}\",metric=\"{}\",a=\"{}\",b=\"{}\"",
                label_value(policy),
                label_value(&c.metric),
                label_value(&c.a.label),
                label_value(&c.b.label)
            );
            writeln!(out, "# {}", sentence.replace('\n', " "))?;
            let mut gauges = vec![(
                "iopscheck_compare_ratio",
                "Ratio of side a's mean to side b's.",
                c.ratio,
            )];
            // The 95% names only where the interval is the 95% one.
            if let (Some(low), Some(high)) = (c.ci95_low, c.ci95_high) {
                gauges.push((
                    "iopscheck_compare_ratio_ci95_low",
                    "Bottom of the ratio's 95% interval.",
                    low,
                ));
                gauges.push((
                    "iopscheck_compare_ratio_ci95_high",
                    "Top of the ratio's 95% interval.",
                    high,
                ));
            }
            for (name, help, v) in gauges.into_iter().chain([
                (
                    "iopscheck_compare_ratio_ci_low",
                    "Bottom of the ratio's interval at the confidence level.",
                    c.ci_low,
                ),
                (
                    "iopscheck_compare_ratio_ci_high",
                    "Top of the ratio's interval at the confidence level.",
                    c.ci_high,
                ),
                (
                    "iopscheck_compare_confidence",
                    "The interval's level, 1 - alpha.",
                    c.confidence,
                ),
                (
                    "iopscheck_compare_alpha",
                    "The level at which a difference is called real.",
                    c.alpha,
                ),
                (
                    "iopscheck_compare_real",
                    "1 when the interval leaves out 1: a real difference at alpha.",
                    if c.real { 1.0 } else { 0.0 },
                ),
            ]) {
                writeln!(
                    out,
                    "# HELP {name} {help}\n# TYPE {name} gauge\n{name}{{{l}}} {v}"
                )?;
            }
        }
        Format::Junit => {
            use super::xml::{attr, text};
            writeln!(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>")?;
            writeln!(
                out,
                "<testsuites name=\"iopscheck compare\" tests=\"1\" failures=\"0\" errors=\"0\">"
            )?;
            writeln!(
                out,
                "  <testsuite name=\"{}\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"0\">",
                attr(&format!("compare {policy}"))
            )?;
            writeln!(out, "    <properties>")?;
            let mut props = vec![("ratio", c.ratio.to_string())];
            if let (Some(low), Some(high)) = (c.ci95_low, c.ci95_high) {
                props.push(("ci95_low", low.to_string()));
                props.push(("ci95_high", high.to_string()));
            }
            for (k, v) in props.into_iter().chain([
                ("ci_low", c.ci_low.to_string()),
                ("ci_high", c.ci_high.to_string()),
                ("confidence", c.confidence.to_string()),
                ("alpha", c.alpha.to_string()),
                ("real", c.real.to_string()),
                ("sentence", sentence.clone()),
            ]) {
                writeln!(
                    out,
                    "      <property name=\"{}\" value=\"{}\"/>",
                    attr(k),
                    attr(&v)
                )?;
            }
            writeln!(out, "    </properties>")?;
            writeln!(
                out,
                "    <testcase classname=\"iopscheck.compare\" name=\"{}\"><system-out>{}</system-out></testcase>",
                attr(&format!("{} vs {}", c.a.label, c.b.label)),
                text(&sentence)
            )?;
            writeln!(out, "  </testsuite>\n</testsuites>")?;
        }
        Format::Html => {
            use super::xml::text;
            writeln!(
                out,
                "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/><title>iopscheck compare</title></head><body>"
            )?;
            writeln!(out, "<h1>Comparison ({})</h1>", text(policy))?;
            writeln!(out, "<p>{}</p>", text(&sentence))?;
            writeln!(
                out,
                "<table><tr><th>side</th><th>runs</th><th>days</th><th>mean {}</th></tr>",
                text(c.unit)
            )?;
            for s in [&c.a, &c.b] {
                writeln!(
                    out,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    text(&s.label),
                    s.n,
                    s.days,
                    crate::numbers::short(s.mean)
                )?;
            }
            writeln!(out, "</table></body></html>")?;
        }
    }
    Ok(())
}
