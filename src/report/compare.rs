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
    match format {
        Format::Table => {
            writeln!(out, "{sentence}")?;
            table_details(c, policy, out)
        }
        Format::Summary | Format::Reply => writeln!(out, "{sentence}"),
        Format::Json | Format::Jsonl => json(format == Format::Json, c, policy, sentence, out),
        Format::Csv => csv(c, policy, &sentence, out),
        Format::Markdown => markdown(c, policy, &sentence, out),
        Format::Prometheus => prometheus(c, policy, &sentence, out),
        Format::Junit => junit(c, policy, &sentence, out),
        Format::Html => html(c, policy, &sentence, out),
    }
}

/// The table's lines under the sentence: each side, then how the interval was made.
fn table_details(c: &Comparison, policy: &str, out: &mut dyn Write) -> io::Result<()> {
    for s in [&c.a, &c.b] {
        writeln!(
            out,
            "  {}: mean {} {} over {} run{} on {} day{}",
            s.label,
            crate::numbers::short(s.mean),
            c.unit,
            s.n,
            if s.n == 1 { "" } else { "s" },
            s.days,
            if s.days == 1 { "" } else { "s" }
        )?;
    }
    writeln!(
        out,
        "  policy {policy}; the {}% interval (α {}) is the modified Cox interval of each side's mean, combined on the log scale ({} degrees of freedom)",
        c.level(),
        c.alpha,
        c.df
    )
}

fn json(
    pretty: bool,
    c: &Comparison,
    policy: &str,
    sentence: String,
    out: &mut dyn Write,
) -> io::Result<()> {
    let doc = Doc {
        schema_version: 1,
        kind: "comparison",
        tool: crate::version::TOOL,
        policy,
        sentence,
        comparison: c,
    };
    if pretty {
        serde_json::to_writer_pretty(&mut *out, &doc)?;
    } else {
        serde_json::to_writer(&mut *out, &doc)?;
    }
    writeln!(out)
}

fn csv(c: &Comparison, policy: &str, sentence: &str, out: &mut dyn Write) -> io::Result<()> {
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
        sentence.to_string(),
        c.confidence.to_string(),
        c.ci_low.to_string(),
        c.ci_high.to_string(),
    ];
    let row: Vec<String> = row.iter().map(|f| super::csv::field(f)).collect();
    writeln!(out, "{}", row.join(","))
}

fn markdown(c: &Comparison, policy: &str, sentence: &str, out: &mut dyn Write) -> io::Result<()> {
    use super::markdown::esc;
    writeln!(out, "## Comparison ({})\n", esc(policy))?;
    writeln!(out, "{}\n", esc(sentence))?;
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
    Ok(())
}

/// A figure of the comparison that the machine formats give one by one: a Prometheus gauge,
/// a JUnit property.
struct Figure {
    property: &'static str,
    gauge: &'static str,
    help: &'static str,
    value: Value,
}

enum Value {
    Number(f64),
    /// 1 or 0 as a gauge, true or false as a property.
    Flag(bool),
}

impl Value {
    fn gauge(&self) -> f64 {
        match *self {
            Value::Number(v) => v,
            Value::Flag(b) => {
                if b {
                    1.0
                } else {
                    0.0
                }
            }
        }
    }

    fn property(&self) -> String {
        match self {
            Value::Number(v) => v.to_string(),
            Value::Flag(b) => b.to_string(),
        }
    }
}

/// The comparison's figures in the order the machine formats give them; the 95% names only
/// where the interval is the 95% one.
fn figures(c: &Comparison) -> Vec<Figure> {
    let figure = |property, gauge, help, value| Figure {
        property,
        gauge,
        help,
        value,
    };
    let mut figures = vec![figure(
        "ratio",
        "iopscheck_compare_ratio",
        "Ratio of side a's mean to side b's.",
        Value::Number(c.ratio),
    )];
    if let (Some(low), Some(high)) = (c.ci95_low, c.ci95_high) {
        figures.push(figure(
            "ci95_low",
            "iopscheck_compare_ratio_ci95_low",
            "Bottom of the ratio's 95% interval.",
            Value::Number(low),
        ));
        figures.push(figure(
            "ci95_high",
            "iopscheck_compare_ratio_ci95_high",
            "Top of the ratio's 95% interval.",
            Value::Number(high),
        ));
    }
    figures.extend([
        figure(
            "ci_low",
            "iopscheck_compare_ratio_ci_low",
            "Bottom of the ratio's interval at the confidence level.",
            Value::Number(c.ci_low),
        ),
        figure(
            "ci_high",
            "iopscheck_compare_ratio_ci_high",
            "Top of the ratio's interval at the confidence level.",
            Value::Number(c.ci_high),
        ),
        figure(
            "confidence",
            "iopscheck_compare_confidence",
            "The interval's level, 1 - alpha.",
            Value::Number(c.confidence),
        ),
        figure(
            "alpha",
            "iopscheck_compare_alpha",
            "The level at which a difference is called real.",
            Value::Number(c.alpha),
        ),
        figure(
            "real",
            "iopscheck_compare_real",
            "1 when the interval leaves out 1: a real difference at alpha.",
            Value::Flag(c.real),
        ),
    ]);
    figures
}

fn prometheus(c: &Comparison, policy: &str, sentence: &str, out: &mut dyn Write) -> io::Result<()> {
    use super::prometheus::label_value;
    let labels = format!(
        "policy=\"{}\",metric=\"{}\",a=\"{}\",b=\"{}\"",
        label_value(policy),
        label_value(&c.metric),
        label_value(&c.a.label),
        label_value(&c.b.label)
    );
    writeln!(out, "# {}", sentence.replace('\n', " "))?;
    for f in figures(c) {
        let (name, help, v) = (f.gauge, f.help, f.value.gauge());
        writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} gauge\n{name}{{{labels}}} {v}"
        )?;
    }
    Ok(())
}

fn junit(c: &Comparison, policy: &str, sentence: &str, out: &mut dyn Write) -> io::Result<()> {
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
    let properties = figures(c)
        .into_iter()
        .map(|f| (f.property, f.value.property()))
        .chain([("sentence", sentence.to_string())]);
    for (k, v) in properties {
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
        text(sentence)
    )?;
    writeln!(out, "  </testsuite>\n</testsuites>")
}

fn html(c: &Comparison, policy: &str, sentence: &str, out: &mut dyn Write) -> io::Result<()> {
    use super::xml::text;
    writeln!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/><title>iopscheck compare</title></head><body>"
    )?;
    writeln!(out, "<h1>Comparison ({})</h1>", text(policy))?;
    writeln!(out, "<p>{}</p>", text(sentence))?;
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
    writeln!(out, "</table></body></html>")
}
