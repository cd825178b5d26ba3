//! Which fio: `run --engine fio` and a bundle's context.json mean the same binary,
//! `$IOPSCHECK_FIO` when set. A wrapper that logs how it was called shows both use it.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

/// A stand-in fio in `dir`: says `version` to `--version`, logs every call's arguments, and
/// fails anything else (no test is run).
fn wrapper(dir: &Path, version: &str) -> std::path::PathBuf {
    let p = dir.join("my-fio-wrapper");
    let log = dir.join("calls.log");
    std::fs::write(
        &p,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nif [ \"$1\" = --version ]; then echo {version}; exit 0; fi\necho 'wrapper: no test here' >&2\nexit 1\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

fn iopscheck(tmp: &Path, fio: &Path) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin!("iopscheck"));
    c.current_dir(tmp)
        .env("NO_COLOR", "1")
        .env("IOPSCHECK_FIO", fio)
        .env("IOPSCHECK_HISTORY", tmp.join("history.jsonl"))
        .env("IOPSCHECK_LOCK_FILE", tmp.join("run.lock"))
        .env_remove("IOPSCHECK_HOST");
    c
}

#[test]
fn run_and_bundle_use_the_fio_that_iopscheck_fio_names() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path().canonicalize().unwrap();
    let fio = wrapper(&tmp, "fio-9.99-wrapped");
    let log = tmp.join("calls.log");
    let data = tmp.join("data");
    std::fs::create_dir(&data).unwrap();

    // run --engine fio runs the wrapper (which refuses: the run could not run, exit 2).
    let out = iopscheck(&tmp, &fio)
        .args([
            "run",
            "-q",
            "--engine",
            "fio",
            "--size",
            "1m",
            "--runtime",
            "1",
        ])
        .args(["--runs", "1", "--dir"])
        .arg(&data)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let calls = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        calls.contains("--output-format=json"),
        "run did not run $IOPSCHECK_FIO: calls {calls:?}; {stderr}"
    );
    assert!(
        std::fs::read_dir(&data).unwrap().next().is_none(),
        "no test file is left"
    );

    // The bundle of this machine names the same fio, by path and by what it says it is.
    let out = iopscheck(&tmp, &fio)
        .args(["bundle", "-o", "-"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(&out.stdout[..]));
    let mut context = None;
    for e in tar.entries().unwrap() {
        let mut e = e.unwrap();
        if e.path().unwrap().ends_with("context.json") {
            context = Some(serde_json::from_reader::<_, Value>(&mut e).unwrap());
        }
    }
    let context = context.expect("a context.json");
    assert_eq!(context["fio"], "fio-9.99-wrapped", "{context}");
    assert_eq!(context["fio_path"], fio.display().to_string(), "{context}");
    assert!(
        std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .any(|l| l == "--version"),
        "the bundle asked $IOPSCHECK_FIO its version"
    );
}
