//! What an ops terminal and a support engineer see beyond the verdict: the IOPS series inside
//! each run, the disks' own account, and what imports keep of fio's.

mod common;

use common::{Env, fixture, skip};

fn one_record(env: &Env) -> serde_json::Value {
    let lines = env.history_lines();
    assert_eq!(lines.len(), 1);
    lines.into_iter().next().unwrap()
}

#[test]
fn a_native_run_records_its_series_and_the_disks_account() {
    let env = Env::new();
    env.cmd()
        .args(["run", "--dir"])
        .arg(&env.dir)
        .args(["--size", "4m", "--runtime", "1200ms", "--runs", "1"])
        .args(["--engine", "psync"])
        .assert()
        .code(predicates::function::function(|c: &i32| *c != 2));
    let r = one_record(&env);
    let s = &r["iops_series"];
    assert_eq!(s["interval_ms"], 500);
    let counts: Vec<u64> = s["write"]
        .as_array()
        .expect("write counts")
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    let ios = r["metrics"]["write_ios"].as_f64().unwrap() as u64;
    assert_eq!(counts.iter().sum::<u64>(), ios, "the intervals add up");
    assert!(
        counts.len() >= 3,
        "1.2 s is two full intervals and a part: {counts:?}"
    );
    assert_eq!(
        r["metrics"]["write_iops_samples"].as_f64().unwrap() as usize,
        counts.len() - 1
    );
    assert!(
        s.get("end_fsync_ms").is_some(),
        "the end fsync is its own phase"
    );

    // The disks: the device the record names, when the temp dir is on a block device.
    let disks = r["disk_stats"].as_array().cloned().unwrap_or_default();
    match r["target"]["filesystem"].as_str() {
        Some("tmpfs") | Some("overlay") | None => {
            skip("the temp dir is not on a block device: no disk stats to check");
        }
        _ if disks.is_empty() => skip("no /proc/diskstats entry for the temp dir's device"),
        _ => {
            let d = &disks[0];
            assert!(d["name"].as_str().is_some_and(|n| !n.is_empty()));
            assert!(d["util_pct"].as_f64().unwrap() <= 100.0);
            // The end fsync wrote the file's data: the disk saw writes.
            assert!(d["write_ios"].as_u64().unwrap() > 0, "{d}");
        }
    }
}

#[test]
fn imports_keep_fios_samples_and_disk_stats() {
    let env = Env::new();
    for (file, disk, ios) in [
        ("fio-3.33-io_uring-randwrite.txt", "vda", 3301u64),
        (
            "fio-2.1.4-json-5groups-seq-rand-read-write.json",
            "sdb",
            10508,
        ),
    ] {
        let out = env
            .cmd()
            .args(["import", "--format", "json"])
            .arg(fixture(file))
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let r = &v["runs"][0];
        let d = &r["disk_stats"][0];
        assert_eq!(d["name"], disk, "{file}");
        assert_eq!(d["write_ios"].as_u64(), Some(ios), "{file}");
    }
    let out = env
        .cmd()
        .args(["import", "--format", "json"])
        .arg(fixture("fio-3.33-io_uring-randwrite.txt"))
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = &v["runs"][0]["metrics"];
    // iops : min=56792, max=131072, avg=91700.70, stdev=29678.44, samples=10
    assert_eq!(m["write_iops_min"], 56792.0);
    assert_eq!(m["write_iops_max"], 131072.0);
    assert_eq!(m["write_iops_mean"], 91700.7);
    assert_eq!(m["write_iops_stdev"], 29678.44);
    assert_eq!(m["write_iops_samples"], 10.0);
}
