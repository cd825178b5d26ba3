//! Exit codes: the one table of what iopscheck's exit status means. Commands, the verdict,
//! errors and signals take their code from [`Exit`]; `--help`, the man page's EXIT STATUS and
//! docs/contract.md's "Exit codes" say what [`TABLE`] says (the man page and help are made
//! from it, and a test below holds contract.md's table to it).

/// How a command ended, as its exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The evidence meets the policy (also: a command that is not a check succeeded).
    Pass,
    /// The evidence says the policy is not met.
    Fail,
    /// Bad usage, invalid input, or the test could not run.
    Error,
    /// Too few runs or days for the policy, or the evidence is not from the policy's test.
    Inconclusive,
    /// Ended by a signal: 128 + its number, as a shell reports a process killed by it.
    Signal(i32),
}

impl Exit {
    /// The process's exit status.
    pub const fn code(self) -> u8 {
        match self {
            Exit::Pass => 0,
            Exit::Fail => 1,
            Exit::Error => 2,
            Exit::Inconclusive => 3,
            Exit::Signal(n) => {
                let c = 128 + n;
                if c < 0 {
                    0
                } else if c > 255 {
                    255
                } else {
                    c as u8
                }
            }
        }
    }

    /// The word a table of exit codes starts its meaning with.
    pub const fn name(self) -> &'static str {
        match self {
            Exit::Pass => "pass",
            Exit::Fail => "fail",
            Exit::Error => "error",
            Exit::Inconclusive => "inconclusive",
            Exit::Signal(_) => "interrupted",
        }
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> Self {
        std::process::ExitCode::from(e.code())
    }
}

/// One documented exit status: the short form `--help` gives, and the man page's sentence.
pub struct Documented {
    pub exit: Exit,
    pub brief: &'static str,
    pub meaning: &'static str,
}

/// Every exit status iopscheck documents, in order. A new code is a row here (and a variant
/// of [`Exit`]); contract.md's table gets the same row, or the test below fails.
pub const TABLE: [Documented; 6] = [
    Documented {
        exit: Exit::Pass,
        brief: "pass",
        meaning: "Pass: the evidence meets the policy (verify: verified).",
    },
    Documented {
        exit: Exit::Fail,
        brief: "fail",
        meaning: "Fail: the evidence says the policy is not met (verify: altered, or unverifiable).",
    },
    Documented {
        exit: Exit::Error,
        brief: "error (bad usage or input, the test could not run)",
        meaning: "Error: bad usage, invalid input (policy, fio output, history), or the test could not run.",
    },
    Documented {
        exit: Exit::Inconclusive,
        brief: "inconclusive (too few runs or days, or not the policy's test)",
        meaning: "Inconclusive: too few runs or days for the policy, or the evidence is not from the policy's test.",
    },
    Documented {
        exit: Exit::Signal(libc::SIGINT),
        brief: "interrupted",
        meaning: "Interrupted by SIGINT (nothing half-written is kept).",
    },
    Documented {
        exit: Exit::Signal(libc::SIGTERM),
        brief: "interrupted",
        meaning: "Interrupted by SIGTERM.",
    },
];

/// The man page's EXIT STATUS: (code, sentence) per row.
pub fn man_rows() -> Vec<(String, &'static str)> {
    TABLE
        .iter()
        .map(|d| (d.exit.code().to_string(), d.meaning))
        .collect()
}

/// `--help`'s paragraph: "Exit codes: 0 pass, 1 fail, …, 130/143 interrupted.", codes of one
/// brief joined by "/", wrapped at 90 columns.
pub fn help_text() -> String {
    let mut items: Vec<(Vec<u8>, &str)> = Vec::new();
    for d in &TABLE {
        match items.last_mut() {
            Some((codes, brief)) if *brief == d.brief => codes.push(d.exit.code()),
            _ => items.push((vec![d.exit.code()], d.brief)),
        }
    }
    let n = items.len();
    let words = items.into_iter().enumerate().map(|(i, (codes, brief))| {
        let codes: Vec<String> = codes.iter().map(|c| c.to_string()).collect();
        let end = if i + 1 == n { "." } else { "," };
        format!("{} {brief}{end}", codes.join("/"))
    });
    let mut out = String::from("Exit codes:");
    let mut line = out.len();
    for w in words {
        if line + 1 + w.len() > 90 {
            out.push('\n');
            out.push_str(&w);
            line = w.len();
        } else {
            out.push(' ');
            out.push_str(&w);
            line += 1 + w.len();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// contract.md's "Exit codes" table: (codes cell, meaning cell) per row.
    fn contract_rows() -> Vec<(String, String)> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/contract.md");
        let text = std::fs::read_to_string(path).unwrap();
        let section = text
            .split("\n## Exit codes\n")
            .nth(1)
            .expect("contract.md has a section \"Exit codes\"");
        let section = section.split("\n## ").next().unwrap();
        section
            .lines()
            .filter(|l| l.starts_with('|') && !l.starts_with("| code") && !l.contains("---"))
            .map(|l| {
                let cells: Vec<&str> = l.trim_matches('|').splitn(2, '|').collect();
                (cells[0].trim().to_string(), cells[1].trim().to_string())
            })
            .collect()
    }

    #[test]
    fn contract_md_lists_every_exit_code_as_the_table_does() {
        let rows = contract_rows();
        assert!(
            rows.len() >= 5,
            "contract.md's table was not found: {rows:?}"
        );
        // Each code of the table is in a row of contract.md that means the same.
        for d in &TABLE {
            let code = d.exit.code().to_string();
            let row = rows
                .iter()
                .find(|(codes, _)| codes.split(" / ").any(|c| c == code))
                .unwrap_or_else(|| panic!("contract.md has no row for exit code {code}"));
            assert!(
                row.1.to_lowercase().starts_with(d.exit.name()),
                "contract.md says {code} is {:?}; the table says {}",
                row.1,
                d.exit.name()
            );
        }
        // And contract.md has no code the table lacks ("128 + N" is Exit::Signal's rule).
        for (codes, meaning) in &rows {
            if codes == "128 + N" {
                assert_eq!(Exit::Signal(libc::SIGHUP).code(), 129);
                assert!(meaning.contains("SIGHUP 129"), "{meaning}");
                continue;
            }
            for c in codes.split(" / ") {
                let c: u8 = c
                    .parse()
                    .unwrap_or_else(|_| panic!("contract.md: code {c:?}"));
                assert!(
                    TABLE.iter().any(|d| d.exit.code() == c),
                    "contract.md documents exit code {c}, which the table does not have"
                );
            }
        }
    }

    #[test]
    fn help_names_every_code_once() {
        let help = help_text();
        assert!(
            help.starts_with("Exit codes: 0 pass, 1 fail, 2 error"),
            "{help}"
        );
        assert!(help.ends_with("130/143 interrupted."), "{help}");
        assert!(help.lines().all(|l| l.len() <= 90), "{help}");
        assert_eq!(man_rows().len(), TABLE.len());
    }
}
