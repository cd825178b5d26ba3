//! `import`: a fio job whose shape says the policy's test but whose options change what it
//! measures (other block sizes, a smaller region or amount of I/O, compressible data, what is
//! already cached, a skewed access pattern, buffered=0) is not the policy's test. Through the
//! binary, on outputs of the installed fio.

mod common;

use std::path::{Path, PathBuf};

use common::{Env, have_fio, skip};

/// Swimlane's job at 8 MiB and 1 s by the installed fio, in JSON, with `extra` options.
fn fio_json(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let out = dir.join(name);
    common::small_swimlane_fio(dir, "json", &out, extra);
    for f in std::fs::read_dir(dir).unwrap().flatten() {
        if f.file_name().to_string_lossy().starts_with("random-write.") {
            std::fs::remove_file(f.path()).unwrap();
        }
    }
    out
}

#[test]
fn options_that_change_what_the_job_measures_make_it_another_test() {
    if !have_fio() {
        return skip("needs fio");
    }
    let env = Env::new();
    let policy = env.small_swimlane();
    let p = policy.to_str().unwrap();
    // the job as the policy has it passes (the disk is far above 3000 IOPS here)
    let plain = fio_json(&env.dir, "plain.json", &[]);
    let (code, j, err) = env.import_json(&[plain.to_str().unwrap(), "--policy", p]);
    assert_eq!(
        (code, &j["verdict"]),
        (Some(0), &"pass".into()),
        "{err} {}",
        j["reason"]
    );
    for (option, field) in [
        ("--bsrange=4k-8k", "bsrange"),
        ("--filesize=1m", "filesize"),
        ("--offset=4m", "offset"),
        ("--io_size=1m", "io_size"),
        (
            "--buffer_compress_percentage=90",
            "buffer_compress_percentage",
        ),
        ("--scramble_buffers=0", "scramble_buffers"),
        ("--invalidate=0", "invalidate"),
        ("--random_distribution=zipf:1.2", "random_distribution"),
        ("--buffered=0", "direct"),
    ] {
        let file = fio_json(&env.dir, &format!("{field}.json"), &[option]);
        let (code, j, err) = env.import_json(&[file.to_str().unwrap(), "--policy", p]);
        assert_eq!(code, Some(3), "{option}: {err} {}", j["reason"]);
        assert_eq!(j["verdict"], "inconclusive", "{option}");
        let named = j["deviations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["field"] == field);
        assert!(named, "{option}: {}", j["deviations"]);
        let reason = j["reason"].as_str().unwrap();
        assert!(
            reason.contains("not the policy's test") && reason.contains(field),
            "{option}: {reason}"
        );
    }
}

#[test]
fn an_option_given_its_default_value_changes_nothing() {
    if !have_fio() {
        return skip("needs fio");
    }
    let env = Env::new();
    let policy = env.small_swimlane();
    let p = policy.to_str().unwrap();
    let file = fio_json(
        &env.dir,
        "defaults.json",
        &[
            "--invalidate=1",
            "--offset=0",
            "--scramble_buffers=1",
            "--random_distribution=random",
        ],
    );
    let (code, j, err) = env.import_json(&[file.to_str().unwrap(), "--policy", p]);
    assert_eq!(code, Some(0), "{err} {} {}", j["reason"], j["deviations"]);
}
