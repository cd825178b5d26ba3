//! What an output does not state of a job's shape is unknown: a block that leaves its shape
//! unstated is not known to be the policy's job, and never has a block that states another
//! job left out in its favour as "not the policy's job".

mod common;

use common::{Env, fixture};
use serde_json::Value;

#[test]
fn a_block_of_unstated_shape_is_not_taken_for_the_policys_job() {
    let env = Env::new();
    let base: Value =
        serde_json::from_slice(&std::fs::read(fixture("fio-3.33-sample.json")).unwrap()).unwrap();
    // one output states a random-read job; another, of another fio run, states no option
    let mut reader = base.clone();
    reader["jobs"][0]["job options"]["rw"] = "randread".into();
    reader["jobs"][0]["job_start"] = 1.into();
    let mut unstated = base.clone();
    unstated["jobs"][0]["job options"] = serde_json::json!({});
    unstated["jobs"][0]["job_start"] = 2.into();
    unstated["timestamp"] = (base["timestamp"].as_i64().unwrap() + 100).into();
    let (a, b) = (env.tmp.path().join("a.json"), env.tmp.path().join("b.json"));
    std::fs::write(&a, serde_json::to_vec(&reader).unwrap()).unwrap();
    std::fs::write(&b, serde_json::to_vec(&unstated).unwrap()).unwrap();
    let (code, j, err) = env.import_json(&[a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(code, Some(3), "{j}\n{err}");
    // the read job is not left out as though the other block were known to be the test
    assert_eq!(
        j["not_counted"],
        serde_json::json!([]),
        "{}",
        j["not_counted"]
    );
    let reason = j["reason"].as_str().unwrap();
    assert!(
        reason.contains("rw randread instead of randwrite"),
        "{reason}"
    );
    assert!(reason.contains("rw not stated in the output"), "{reason}");
}
