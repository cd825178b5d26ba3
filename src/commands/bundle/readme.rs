//! README.txt: the verdict, what each file holds, and how to judge the history again.

use std::path::Path;

use chrono::{DateTime, Local, Utc};

use super::lines::Kept;
use crate::evaluate::Evaluation;
use crate::policy;
use crate::version::VERSION;

/// The host name as it may appear in a file name.
pub(super) fn safe_name(s: &str) -> String {
    let s: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let s = s.trim_start_matches('.');
    if s.is_empty() {
        return "host".into();
    }
    if s.len() <= NAME_MAX {
        return s.into();
    }
    // Too long for a file name (255 bytes with the rest of it): the start of the name, and a
    // digest of the whole that keeps two long names apart.
    let mut h: u32 = 0x811c_9dc5;
    for b in s.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("{}-{h:08x}", &s[..NAME_MAX - 9])
}

/// The longest a name from the input (a host, a directory) gets in a file name of the bundle.
const NAME_MAX: usize = 64;

pub(super) fn group_slug(i: usize, ev: &Evaluation) -> String {
    match &ev.group {
        Some(g) => format!("{}-{}-{}", i + 1, g.engine, safe_name(&g.dir)),
        None => format!("{}", i + 1),
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn readme(
    host: &str,
    base: &str,
    history_path: &Path,
    kept: &Kept,
    evs: &[Evaluation],
    loaded: &policy::Loaded,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
) -> String {
    let ev = &evs[0];
    let mut reproduce = format!(
        "iopscheck report --history history.jsonl --policy policy.yaml --host {} --since {}",
        shell_word(host),
        since.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    );
    if let Some(g) = &ev.group {
        reproduce.push_str(&format!(
            " --dir {} --engine {}",
            shell_word(&g.dir),
            shell_word(&g.engine)
        ));
    }
    let mut left_out = String::new();
    if kept.other_hosts > 0 {
        left_out.push_str(&format!(
            "\n{} line(s) recording other hosts were left out: this bundle speaks for {host} only.",
            kept.other_hosts
        ));
    }
    if kept.unreadable > 0 {
        left_out.push_str(&format!(
            "\n{} line(s) that were not JSON records were left out (a torn write or another file's text).",
            kept.unreadable
        ));
    }
    if !left_out.is_empty() {
        left_out.push('\n');
    }
    let mut others = String::new();
    for (i, e) in evs.iter().enumerate().skip(1) {
        if let Some(g) = &e.group {
            others.push_str(&format!(
                "  reports/{}.json/.html  the same for {} with engine {}: {}\n",
                group_slug(i, e),
                g.dir,
                g.engine,
                e.verdict
            ));
        }
    }
    format!(
        "iopscheck support bundle for {host}
Made {made} by iopscheck {VERSION}.

Verdict: {verdict} — {reason}

Contents ({base}/):
  README.txt      this file
  history.jsonl   this host's lines of {history}, verbatim ({kept} line(s)): one JSON record per run
  policy.yaml     the policy the report judges by: {policy} ({origin})
  report.json     the report over the window (since {since_local}) in iopscheck's --format json
  report.html     the same as a self-contained page
{others}  context.json    OS, kernel, CPU, memory; each tested directory's mount, mount options and
                  device (model, rotational, I/O scheduler, write cache); the history's path
  version.txt     the iopscheck version and commit that made this bundle
  fio/            the fio outputs given to `iopscheck bundle`, byte for byte (if any)
  manifest.json   every other file's SHA-256, each history line's and their chain, the tool's
                  version and commit: `iopscheck verify` on the .tar.gz says what was altered
{left_out}
To judge the history again on another machine, from this directory:

  {reproduce}

(The window is given as a date, so the result does not move with the clock.) Every format is
there too: add --format table|json|csv|markdown|prometheus|junit|html.

The bundle holds no environment variables, no credentials and no other hosts' records.
",
        made = now.with_timezone(&Local).format("%Y-%m-%d %H:%M:%S %:z"),
        verdict = ev.verdict.as_str().to_uppercase(),
        reason = ev.reason,
        history = history_path.display(),
        kept = kept.kept,
        policy = loaded.policy.name,
        origin = loaded.origin,
        since_local = since.with_timezone(&Local).format("%Y-%m-%d %H:%M %:z"),
    )
}

/// A word as the shell reads it: quoted when it holds anything but plain characters.
fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '/' | ':' | '+'))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_words_are_made_safe() {
        assert_eq!(safe_name("node-1.example.com"), "node-1.example.com");
        assert_eq!(safe_name("../x y"), "_x_y");
        assert_eq!(safe_name(""), "host");
        assert_eq!(shell_word("/data/x"), "/data/x");
        assert_eq!(shell_word("my dir's"), "'my dir'\\''s'");
    }
}
