//! `import --record` at the same time from many processes: the history's duplicate check and
//! the append are one step under the history's lock, so one fio run is recorded once however
//! many imports of it (of one output, or of its JSON and its text) run at once.
//!
//! Deterministic by construction: the assertion is the invariant after every import has
//! ended (exactly one record, every other import refused with exit 2), whatever order the
//! processes ran in. The old code (check outside the lock) broke it in about half the tries.

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;

use common::Env;

fn one_run(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/one-run")
        .join(name)
}

/// Starts one `import --record` per file of `files`, all at once, and waits for each: their
/// exit codes.
fn at_once(env: &Env, files: &[PathBuf]) -> Vec<Option<i32>> {
    let children: Vec<_> = files
        .iter()
        .map(|f| {
            let mut c = env.std_cmd();
            c.args([
                "import", "-q", "--record", "--host", "n1", "--format", "summary",
            ])
            .arg(f)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
            c.spawn().unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|mut c| c.wait().unwrap().code())
        .collect()
}

fn exactly_one_record(files: Vec<PathBuf>) {
    for round in 0..10 {
        let env = Env::new();
        let codes = at_once(&env, &files);
        assert_eq!(
            env.history_lines().len(),
            1,
            "round {round}: one fio run recorded more than once ({codes:?})"
        );
        let refused = codes.iter().filter(|c| **c == Some(2)).count();
        assert_eq!(refused, files.len() - 1, "round {round}: {codes:?}");
    }
}

#[test]
fn one_output_imported_by_many_processes_at_once_is_recorded_once() {
    exactly_one_record(vec![one_run("run1.json"); 8]);
}

#[test]
fn one_runs_json_and_text_imported_at_once_are_recorded_once() {
    let mut files = Vec::new();
    for _ in 0..4 {
        files.push(one_run("run1.json"));
        files.push(one_run("run1.txt"));
    }
    exactly_one_record(files);
}
