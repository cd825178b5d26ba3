//! fio applies its options in order: a `kb_base=1000` given after `bs` and `size` does not
//! change them. fio's JSON lists a job's options in a map whose order is not kept, so where
//! it cannot be told a size reads as unknown, said so, and a block size is read from the
//! bytes per I/O the run moved.

mod common;

use common::Env;

fn kb(name: &str) -> String {
    format!(
        "{}/tests/fixtures/kb-base/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn import(env: &Env, file: &str) -> (Option<i32>, String) {
    let out = env
        .cmd()
        .args(["import", "-p", &kb("mini2.yaml"), &kb(file), "--verbose"])
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (
        out.status.code(),
        all.split_whitespace().collect::<Vec<_>>().join(" "),
    )
}

#[test]
fn a_kb_base_given_after_the_sizes_does_not_change_them() {
    let env = Env::new();
    let (code, out) = import(&env, "kb.json");
    assert_eq!(code, Some(3), "{out}");
    // 107.43 MB/s ÷ 4 × 1024, not ÷ 4000/1024
    assert!(out.contains("write_iops_formula is 27502"), "{out}");
    assert!(!out.contains("bs 4000"), "{out}");
    assert!(!out.contains("7.6 MiB"), "{out}");
    assert!(
        out.contains("kb_base=1000 is listed with size"),
        "the unknown size is said: {out}"
    );
    // given first, it does apply
    let (code, out) = import(&env, "kb3.json");
    assert_eq!(code, Some(3), "{out}");
    assert!(out.contains("bs 4000 instead of 4k"), "{out}");
}
