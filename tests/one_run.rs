//! `import`: one fio run is one run whatever the formats it is given in (its JSON, text and
//! terse outputs, in one call or against the history), and the syncs an output counts are read
//! against an assumed job. Through the binary, on real fio 3.33 outputs: those of
//! tests/fixtures/one-run (see its README) and, where fio is installed, a small run made here.

mod common;

use std::path::{Path, PathBuf};

use common::{Env, fixture, have_fio, not_counted, runs, skip};
use serde_json::Value;

fn one_run(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/one-run")
        .join(name)
}

/// Swimlane's policy at the scale of the one-run outputs (8 MiB or 4 MiB files, 1 s): judged
/// by it, they are the policy's test, so a run counted twice or a job not the policy's shows
/// in the verdict.
fn small_policy(env: &Env) -> PathBuf {
    env.swimlane_policy("small.yaml", |y| {
        y.replace("size: 4g", "size: 4m")
            .replace("runtime: 60s", "runtime: 1s")
    })
}

fn import(env: &Env, files: &[&Path], args: &[&str]) -> (Option<i32>, Value, String) {
    let mut a: Vec<&str> = files.iter().map(|p| p.to_str().unwrap()).collect();
    a.extend_from_slice(args);
    env.import_json(&a)
}

/// The write I/Os a JSON output counts (`jobs[0].write.total_ios`).
fn json_write_ios(path: &Path) -> f64 {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["jobs"][0]["write"]["total_ios"].as_f64().unwrap()
}

/// The `issued rwts: total=r,w,t,sync` counts of a text output: (writes, syncs).
fn issued(text: &str) -> (u64, u64) {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("issued rwts:"))
        .expect("an issued rwts line");
    let total = line
        .split("total=")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap();
    let n: Vec<u64> = total.split(',').map(|v| v.parse().unwrap()).collect();
    (n[1], n[3])
}

// ---- 1. One fio run is one run, in whatever formats it is given -------------------------

#[test]
fn one_run_given_in_json_text_and_terse_is_one_run_and_its_json_counts() {
    let env = Env::new();
    let policy = small_policy(&env);
    let p = policy.to_str().unwrap();
    let (json, text, terse) = (
        one_run("run1.json"),
        one_run("run1.txt"),
        one_run("run1.terse"),
    );
    let ios = json_write_ios(&json);
    for (order, others) in [
        (vec![&json, &terse, &text], vec!["run1.terse", "run1.txt"]),
        (vec![&terse, &text, &json], vec!["run1.terse", "run1.txt"]),
        (vec![&text, &json], vec!["run1.txt"]),
        (vec![&terse, &json], vec!["run1.terse"]),
    ] {
        let files: Vec<&Path> = order.iter().map(|p| p.as_path()).collect();
        let (code, j, err) = import(&env, &files, &["--policy", p]);
        assert_eq!(code, Some(0), "{order:?}: {err} {}", j["reason"]);
        assert_eq!(runs(&j).len(), 1, "{order:?}: {}", not_counted(&j));
        assert_eq!(j["evidence"]["runs"], 1, "{order:?}");
        // the copy that states the run most exactly counts: the JSON's own I/O count
        assert_eq!(runs(&j)[0]["metrics"]["write_ios"].as_f64(), Some(ios));
        let nc = not_counted(&j);
        for o in others {
            assert!(
                nc.contains(&format!("{o}: the same fio run as run1.json (its JSON")),
                "{order:?}: {nc}"
            );
        }
    }
    // without the JSON, the text (which counts the I/Os) counts and the terse line does not
    let (_, j, _) = import(&env, &[&terse, &text], &["--policy", p]);
    assert_eq!(runs(&j).len(), 1);
    assert!(
        not_counted(&j).contains("run1.terse: the same fio run as run1.txt (its text"),
        "{}",
        not_counted(&j)
    );
    assert_eq!(runs(&j)[0]["metrics"]["write_ios"].as_f64(), Some(ios));
}

#[test]
fn what_was_noted_of_a_copy_not_counted_is_not_said() {
    // The text's reader notes (figures printed to 3–4 digits, a date without a zone) are
    // about the text's figures: said when the text counts, not when its JSON does.
    let env = Env::new();
    let policy = small_policy(&env);
    let p = policy.to_str().unwrap();
    let (json, text) = (one_run("run1.json"), one_run("run1.txt"));
    let of_text = |j: &Value| -> Vec<String> {
        j["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .filter(|w| w.starts_with("run1.txt"))
            .map(str::to_string)
            .collect()
    };
    let (_, alone, _) = import(&env, &[&text], &["--policy", p]);
    assert!(
        of_text(&alone)
            .iter()
            .any(|w| w.contains("significant digits")),
        "{}",
        alone["warnings"]
    );
    for order in [[&text, &json], [&json, &text]] {
        let files: Vec<&Path> = order.iter().map(|p| p.as_path()).collect();
        let (_, j, _) = import(&env, &files, &["--policy", p]);
        assert!(not_counted(&j).contains("run1.txt: the same fio run as run1.json"));
        assert_eq!(of_text(&j), Vec::<String>::new(), "{order:?}");
    }
}

#[test]
fn two_runs_of_one_job_stay_two_runs_whatever_their_formats() {
    let env = Env::new();
    let policy = small_policy(&env);
    let p = policy.to_str().unwrap();
    // two runs of the same command a minute apart, each in each format
    for pair in [
        ["run1.json", "run2.terse"],
        ["run1.terse", "run2.json"],
        ["run1.txt", "run2.txt"],
        ["run1.txt", "run2.terse"],
        ["run1.terse", "run2.terse"],
    ] {
        let files: Vec<PathBuf> = pair.iter().map(|f| one_run(f)).collect();
        let files: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
        let (_, j, err) = import(&env, &files, &["--policy", p]);
        assert_eq!(runs(&j).len(), 2, "{pair:?}: {err} {}", not_counted(&j));
        assert!(not_counted(&j).is_empty(), "{pair:?}: {}", not_counted(&j));
    }
    // and the corpus's fio 3.33 runs of Swimlane's job, in text, terse and JSON, are each
    // one run of their own
    let corpus = [
        "fio-3.33-posixaio-randwrite.txt",
        "fio-3.33-terse.txt",
        "fio-3.33-io_uring-randwrite.txt",
        "fio-3.33-io_uring-randwrite.json",
        "fio-3.33-sample.json",
        "fio-3.33-psync-randwrite.txt",
    ];
    let files: Vec<PathBuf> = corpus.iter().map(|f| fixture(f)).collect();
    let files: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let (_, j, err) = import(&env, &files, &[]);
    assert!(
        !not_counted(&j).contains("the same fio run"),
        "{err} {}",
        not_counted(&j)
    );
    let counted = runs(&j).len() + j["not_counted"].as_array().unwrap().len();
    assert_eq!(counted, corpus.len(), "{}", not_counted(&j));
}

#[test]
fn the_same_run_from_another_of_its_outputs_is_not_recorded_twice() {
    let env = Env::new();
    let policy = small_policy(&env);
    let p = policy.to_str().unwrap();
    let rec = ["--policy", p, "--record", "--host", "n1"];
    let (code, _, err) = import(&env, &[&one_run("run1.terse")], &rec);
    assert_eq!(code, Some(3), "{err}");
    let before = std::fs::read(&env.history).unwrap();
    let refused = |files: &[&str], host: &str| {
        let out = env
            .cmd()
            .arg("import")
            .args(files.iter().map(|f| one_run(f)))
            .args(["--policy", p, "--record", "--host", host])
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for other in ["run1.json", "run1.txt"] {
        let (code, err) = refused(&[other], "n1");
        assert_eq!(code, Some(2), "{other}: {err}");
        assert!(
            err.contains(&format!(
                "--record: {other} is the same fio run as run1.terse"
            )) && err.contains("nothing was recorded"),
            "{err}"
        );
        assert_eq!(std::fs::read(&env.history).unwrap(), before, "{other}");
    }
    // nor beside a run of its own: all or none
    let (code, err) = refused(&["run2.json", "run1.json"], "n1");
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(std::fs::read(&env.history).unwrap(), before);
    // another run is recorded; the same run for another node is refused, naming the node it
    // is recorded for: one fio run is one run of one machine
    let (code, _, err) = import(&env, &[&one_run("run2.json")], &rec);
    assert_eq!(code, Some(0), "{err}");
    let before = std::fs::read(&env.history).unwrap();
    for other in ["run1.json", "run1.terse"] {
        let (code, err) = refused(&[other], "n2");
        assert_eq!(code, Some(2), "{other}: {err}");
        assert!(err.contains("for host n1"), "{other}: {err}");
        assert_eq!(std::fs::read(&env.history).unwrap(), before, "{other}");
    }
    assert_eq!(env.history_lines().len(), 2);
}

/// A small run of Swimlane's job by the installed fio (8 MiB, 1 s, in `dir`), written in
/// normal, JSON and terse output at once and cut apart as fio wrote them: (text, JSON,
/// terse). `extra` adds options.
fn fio_run_in_three_formats(dir: &Path, extra: &[&str]) -> (String, String, String) {
    let out = dir.join("all.out");
    common::small_swimlane_fio(dir, "normal,json,terse", &out, extra);
    let all = std::fs::read_to_string(&out).unwrap();
    std::fs::remove_file(&out).unwrap();
    let (mut text, mut json, mut terse) = (String::new(), String::new(), String::new());
    let mut in_json = false;
    for line in all.split_inclusive('\n') {
        if line.starts_with("3;fio-") {
            terse.push_str(line);
        } else if line.starts_with('{') || in_json {
            in_json = !line.starts_with('}');
            json.push_str(line);
        } else {
            text.push_str(line);
        }
    }
    (text, json, terse)
}

#[test]
fn a_run_of_the_installed_fio_in_three_formats_is_one_run_and_its_syncs_are_read() {
    if !have_fio() {
        skip("fio is not installed: a real run's three outputs cannot be made here");
        return;
    }
    let env = Env::new();
    let policy = env.small_swimlane();
    let p = policy.to_str().unwrap();
    let work = env.tmp.path().join("fio");
    std::fs::create_dir(&work).unwrap();
    let (text, json, terse) = fio_run_in_three_formats(&work, &[]);
    let mut files = Vec::new();
    for (name, body) in [
        ("run.json", &json),
        ("run.terse", &terse),
        ("run.txt", &text),
    ] {
        assert!(!body.is_empty(), "{name} empty");
        let f = env.tmp.path().join(name);
        std::fs::write(&f, body).unwrap();
        files.push(f);
    }
    let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let (_, j, err) = import(&env, &paths, &["--policy", p]);
    assert_eq!(runs(&j).len(), 1, "{err} {}", not_counted(&j));
    assert_eq!(
        runs(&j)[0]["metrics"]["write_ios"].as_f64(),
        Some(json_write_ios(&files[0]))
    );
    let nc = not_counted(&j);
    assert!(
        nc.contains("run.terse: the same fio run as run.json")
            && nc.contains("run.txt: the same fio run as run.json"),
        "{nc}"
    );

    // a run with a sync after every write, its text imported as Swimlane's job
    let (text, _, _) = fio_run_in_three_formats(&work, &["--fsync=1"]);
    let (writes, syncs) = issued(&text);
    let f = env.tmp.path().join("fsync.txt");
    std::fs::write(&f, &text).unwrap();
    let (code, j, err) = import(&env, &[&f], &["--policy", p, "--assume-job", p]);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        j["reason"]
            .as_str()
            .unwrap()
            .contains(&format!("{syncs} syncs over {writes} writes")),
        "{}",
        j["reason"]
    );
    // what fio laid out is removed with the temp dir; nothing else is left in it
    assert_eq!(common::listing(&work), vec!["random-write.0.0"]);
}

// ---- 2. The syncs an output counts, against an assumed job ---------------------------------

#[test]
fn syncs_counted_in_the_output_contradict_an_assumed_job_without_them() {
    let env = Env::new();
    let policy = small_policy(&env);
    let p = policy.to_str().unwrap();
    let file = one_run("fsync1.txt");
    let (writes, syncs) = issued(&std::fs::read_to_string(&file).unwrap());
    assert!(syncs > 0 && writes > 0);
    let (code, j, err) = import(&env, &[&file], &["--policy", p, "--assume-job", p]);
    assert_eq!(code, Some(3), "{err}");
    assert_eq!(j["verdict"], "inconclusive");
    let reason = j["reason"].as_str().unwrap();
    assert!(
        reason.contains("not the policy's test")
            && reason.contains(&format!("{syncs} syncs over {writes} writes")),
        "{reason}"
    );
    // named once, as the file's count shows it: the record carries that count's fsync, and
    // the deviation that record shows is the same difference
    let fsync = |j: &Value| -> Vec<String> {
        j["differences"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["field"] == "fsync")
            .map(|d| d["found"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        fsync(&j),
        [format!(
            "{syncs} syncs over {writes} writes, one every write (the output's sync count) in fsync1.txt"
        )]
    );
    // beside it, another run whose output states fsync=1 itself: its difference stays
    let mut stated: Value =
        serde_json::from_str(&std::fs::read_to_string(one_run("run2.json")).unwrap()).unwrap();
    stated["jobs"][0]["job options"]["fsync"] = "1".into();
    let stated_file = env.dir.join("stated-fsync.json");
    std::fs::write(&stated_file, stated.to_string()).unwrap();
    let (_, both, err) = import(
        &env,
        &[&file, &stated_file],
        &["--policy", p, "--assume-job", p],
    );
    assert_eq!(both["summary"]["n"], 2, "{err}");
    let found = fsync(&both);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found.contains(&"1".to_string()), "{found:?}");
    // the same verdict in the one-line summary
    let out = env
        .cmd()
        .args([
            "import",
            "--policy",
            p,
            "--assume-job",
            p,
            "--format",
            "summary",
        ])
        .arg(&file)
        .output()
        .unwrap();
    let line = String::from_utf8_lossy(&out.stdout);
    assert!(line.starts_with("INCONCLUSIVE"), "{line}");
    assert_eq!(out.status.code(), Some(3));

    // recorded, the run is never the policy's test in a later report either
    let (code, _, err) = import(
        &env,
        &[&file],
        &["--policy", p, "--assume-job", p, "--record", "--host", "n1"],
    );
    assert_eq!(code, Some(3), "{err}");
    let lines = env.history_lines();
    assert_eq!(lines.len(), 1);
    assert!(
        lines[0]["job"]["fsync"].as_u64().is_some_and(|k| k >= 1),
        "{}",
        lines[0]["job"]
    );
    let out = env
        .cmd()
        .args(["report", "--host", "n1", "--policy", p, "--format", "json"])
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_ne!(r["verdict"], "pass", "{}", r["reason"]);
    assert_eq!(r["evidence"]["runs"], 0, "{}", r["evidence"]);
    assert!(
        not_counted(&r).contains("fsync 1 instead of 0"),
        "{}",
        r["not_counted"]
    );
}

#[test]
fn where_the_output_counts_no_syncs_the_assumed_job_stands_and_where_it_has_no_count_nothing_is_read()
 {
    let env = Env::new();
    let policy = small_policy(&env);
    let p = policy.to_str().unwrap();
    // the text of a run without syncs while it ran: its count (0) agrees with the assumed job
    let file = one_run("run1.txt");
    assert_eq!(issued(&std::fs::read_to_string(&file).unwrap()).1, 0);
    let (code, j, err) = import(
        &env,
        &[&file],
        &["--policy", p, "--assume-job", p, "--record", "--host", "n1"],
    );
    assert_eq!(code, Some(0), "{err} {}", j["reason"]);
    assert_eq!(j["verdict"], "pass");
    // recorded, it counts as the policy's test (what the fsync run's record is not)
    let out = env
        .cmd()
        .args(["report", "--host", "n1", "--policy", p, "--format", "json"])
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["evidence"]["runs"], 1, "{}", r["evidence"]);
    // terse output has no sync count: the fsync run's terse line is not read as a contradiction
    // (unknown, as the assumed job's other unstated fields are)
    let (code, j, err) = import(
        &env,
        &[&one_run("fsync1.terse")],
        &["--policy", p, "--assume-job", p],
    );
    assert_eq!(code, Some(0), "{err} {}", j["reason"]);
    assert!(!j["differences"].to_string().contains("fsync"));
}

#[test]
fn where_fio_counted_the_end_fsync_a_count_without_it_contradicts_the_assumed_end_fsync() {
    // fio 3.4–3.16 counted the end fsync among the syncs (3.17 stopped): the run without
    // periodic syncs, as such a fio would print it, shows no end fsync where Swimlane's job
    // has one (a deviation that flatters), and the fsync run still shows its periodic syncs.
    let env = Env::new();
    let policy = small_policy(&env);
    let p = policy.to_str().unwrap();
    let as_3_7 = |name: &str| {
        let text = std::fs::read_to_string(one_run(name)).unwrap();
        assert!(text.contains("\nfio-3.33\n"));
        let f = env.tmp.path().join(format!("3.7-{name}"));
        std::fs::write(&f, text.replace("\nfio-3.33\n", "\nfio-3.7\n")).unwrap();
        f
    };
    let (code, j, err) = import(
        &env,
        &[&as_3_7("run1.txt")],
        &["--policy", p, "--assume-job", p],
    );
    assert_eq!(code, Some(3), "{err}");
    assert_ne!(j["verdict"], "pass");
    assert!(
        j["deviations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["field"] == "end_fsync" && d["effect"] == "flatters"),
        "{}",
        j["deviations"]
    );
    let file = as_3_7("fsync1.txt");
    let (writes, syncs) = issued(&std::fs::read_to_string(&file).unwrap());
    let (code, j, err) = import(&env, &[&file], &["--policy", p, "--assume-job", p]);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        j["reason"].as_str().unwrap().contains(&format!(
            "{} to {syncs} syncs over {writes} writes",
            syncs - 1
        )),
        "{}",
        j["reason"]
    );
}
