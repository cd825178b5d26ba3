//! The man pages: iopscheck(1) and one page per subcommand (iopscheck-run(1), …), generated
//! from the clap definitions so they always match the flags, with the sections clap does not
//! know: ENVIRONMENT, FILES, EXIT STATUS, SEE ALSO.

use std::io::Write;

use clap::CommandFactory;

use crate::cli::Cli;

const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "IOPSCHECK_HISTORY",
        "The history file, as --history (which wins over it).",
    ),
    (
        "IOPSCHECK_LOCK_FILE",
        "The lock file that keeps two runs from testing the same host at once (default: /run/iopscheck/iopscheck.lock for root, in a directory iopscheck makes 0755 and only root can write, else $XDG_RUNTIME_DIR/iopscheck.lock, else $XDG_STATE_HOME/iopscheck/run.lock, created private).",
    ),
    (
        "IOPSCHECK_HOST",
        "The node name run records and prints, as run --host (which wins over it); default: the host name.",
    ),
    (
        "IOPSCHECK_FLUSH_WAIT",
        "How long a run waits for an interrupted run's final flush to end (a duration: 30s, 5m; default 2m).",
    ),
    (
        "IOPSCHECK_HOLD",
        "How much memory report, bundle and fleet give the runs of their window (a size; default 40m): past it the oldest runs are let go and the verdict is inconclusive, naming the --since that fits.",
    ),
    (
        "IOPSCHECK_FIO",
        "The fio binary: the one run --engine fio runs and a bundle's context.json describes (default: fio on PATH).",
    ),
    (
        "NO_COLOR",
        "When set and not empty, no colour in the output.",
    ),
    (
        "COLUMNS",
        "The width of tables and text (80 to 200); default: the terminal's, or 100 when the output is piped.",
    ),
    (
        "XDG_STATE_HOME",
        "Where a non-root user's history lives: $XDG_STATE_HOME/iopscheck/history.jsonl (default: ~/.local/state).",
    ),
    (
        "XDG_RUNTIME_DIR",
        "Where a non-root user's run lock lives: $XDG_RUNTIME_DIR/iopscheck.lock.",
    ),
    ("HOME", "Used when XDG_STATE_HOME is not set."),
    ("PATH", "Searched for fio."),
];

const FILES: &[(&str, &str)] = &[
    (
        "/var/lib/iopscheck/history.jsonl",
        "The history of root's runs: one JSON record per line, append-only.",
    ),
    (
        "$XDG_STATE_HOME/iopscheck/history.jsonl",
        "The history of another user's runs.",
    ),
    (
        "/etc/iopscheck/policies/NAME.yaml",
        "Local policies, found by name after the built-in ones (iopscheck policy list shows both).",
    ),
    (
        "/run/iopscheck/iopscheck.lock",
        "The run lock (root). The directory is made 0755 by iopscheck; one another user owns or can write is refused, as is a lock that is not a regular file of root's holding a process id.",
    ),
];

/// Every page: (file name, roff), iopscheck.1 first.
pub fn pages() -> Vec<(String, Vec<u8>)> {
    let mut cmd = Cli::command();
    cmd.build();
    let mut out = Vec::new();
    collect(&cmd, "iopscheck", &mut out);
    out
}

/// The names of every page without the section, e.g. "iopscheck-policy-show".
pub fn names() -> Vec<String> {
    pages()
        .into_iter()
        .map(|(f, _)| f.trim_end_matches(".1").to_string())
        .collect()
}

fn collect(cmd: &clap::Command, title: &str, out: &mut Vec<(String, Vec<u8>)>) {
    let subs: Vec<&clap::Command> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        .collect();
    out.push((format!("{title}.1"), page(cmd, title, &subs)));
    for s in subs {
        collect(s, &format!("{title}-{}", s.get_name()), out);
    }
}

fn page(cmd: &clap::Command, title: &str, subs: &[&clap::Command]) -> Vec<u8> {
    let man = clap_mangen::Man::new(cmd.clone())
        .title(title)
        .section("1")
        .source(format!("iopscheck {}", crate::version::VERSION))
        .manual("User Commands");
    let mut w: Vec<u8> = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = man.render_title(&mut w);
    let _ = man.render_name_section(&mut w);
    let _ = man.render_synopsis_section(&mut w);
    let _ = man.render_description_section(&mut w);
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        let _ = man.render_options_section(&mut w);
    }
    if !subs.is_empty() {
        let _ = writeln!(w, ".SH COMMANDS");
        for s in subs {
            let _ = writeln!(
                w,
                ".TP\n\\fB{}\\-{}\\fR(1)\n{}",
                escape(title),
                escape(s.get_name()),
                escape(&s.get_about().map(|a| a.to_string()).unwrap_or_default())
            );
        }
    }
    if cmd.get_after_help().is_some() || cmd.get_after_long_help().is_some() {
        let _ = man.render_extra_section(&mut w);
    }
    section(&mut w, "ENVIRONMENT", ENVIRONMENT);
    section(&mut w, "FILES", FILES);
    let exit_status = crate::exit::man_rows();
    let exit_status: Vec<(&str, &str)> =
        exit_status.iter().map(|(c, m)| (c.as_str(), *m)).collect();
    section(&mut w, "EXIT STATUS", &exit_status);
    let _ = writeln!(w, ".SH \"SEE ALSO\"");
    let mut see: Vec<String> = Vec::new();
    if title != "iopscheck" {
        see.push("\\fBiopscheck\\fR(1)".into());
    }
    for s in subs {
        see.push(format!(
            "\\fB{}\\-{}\\fR(1)",
            escape(title),
            escape(s.get_name())
        ));
    }
    see.push("\\fBfio\\fR(1)".into());
    let _ = writeln!(w, "{}", see.join(", "));
    let _ = writeln!(w, ".SH VERSION\n{}", crate::version::VERSION);
    w
}

fn section(w: &mut Vec<u8>, name: &str, items: &[(&str, &str)]) {
    let _ = writeln!(w, ".SH \"{name}\"");
    for (k, v) in items {
        let _ = writeln!(w, ".TP\n\\fB{}\\fR\n{}", escape(k), escape(v));
    }
}

/// Text safe in roff: backslashes and hyphens escaped, no line starting with a control
/// character.
fn escape(s: &str) -> String {
    let t = s.replace('\\', "\\e").replace('-', "\\-");
    if t.starts_with('.') || t.starts_with('\'') {
        format!("\\&{t}")
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_subcommand_has_a_page_with_the_sections() {
        let names = names();
        for want in [
            "iopscheck",
            "iopscheck-run",
            "iopscheck-import",
            "iopscheck-report",
            "iopscheck-policy",
            "iopscheck-policy-show",
            "iopscheck-fleet",
            "iopscheck-bundle",
            "iopscheck-verify",
        ] {
            assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
        }
        for (name, roff) in pages() {
            let t = String::from_utf8(roff).unwrap();
            for s in ["ENVIRONMENT", "FILES", "EXIT STATUS", "SEE ALSO"] {
                assert!(t.contains(&format!(".SH \"{s}\"")), "{name}: {s}");
            }
        }
    }
}
