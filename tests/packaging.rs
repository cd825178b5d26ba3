//! What the packages ship, checked without building them (packaging/check.sh builds them in
//! CI): every asset the package metadata names exists, the units schedule and harden as
//! intended, nothing runs before the administrator names a directory, the manifests and the
//! playbook parse and agree with their settings, the scheduled-check script works end to end
//! with the real binary, and `--version` names the commit.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn yaml(rel: &str) -> Value {
    serde_saphyr::from_str(&read(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn iopscheck() -> Command {
    Command::new(assert_cmd::cargo::cargo_bin!("iopscheck"))
}

/// The places of a scheduled check, in a temp dir: its data directory (empty, its canonical
/// path), history, state directory and run lock.
struct Sched {
    tmp: tempfile::TempDir,
    data: PathBuf,
    history: PathBuf,
    state: PathBuf,
    lock: PathBuf,
}

impl Sched {
    fn new() -> Sched {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        std::fs::create_dir(&data).unwrap();
        let data = data.canonicalize().unwrap();
        let history = tmp.path().join("history.jsonl");
        let state = tmp.path().join("state");
        let lock = tmp.path().join("run.lock");
        Sched {
            tmp,
            data,
            history,
            state,
            lock,
        }
    }

    /// An env file's lines naming these places and the binary built, no textfile, then `more`.
    fn env_file(&self, more: &str) -> String {
        format!(
            "IOPSCHECK_DIR={}\nIOPSCHECK_BIN={}\nIOPSCHECK_HISTORY={}\nIOPSCHECK_STATE_DIR={}\nIOPSCHECK_LOCK_FILE={}\nIOPSCHECK_TEXTFILE=\n{more}",
            self.data.display(),
            assert_cmd::cargo::cargo_bin!("iopscheck").display(),
            self.history.display(),
            self.state.display(),
            self.lock.display(),
        )
    }

    /// The scheduled script under `sh`, with the binary built and these places (but the data
    /// directory) in its environment.
    fn script(&self) -> std::process::Command {
        let mut c = std::process::Command::new("sh");
        c.arg(repo().join("packaging/libexec/iopscheck-scheduled"))
            .env("IOPSCHECK_BIN", assert_cmd::cargo::cargo_bin!("iopscheck"))
            .env("IOPSCHECK_STATE_DIR", &self.state)
            .env("IOPSCHECK_HISTORY", &self.history)
            .env("IOPSCHECK_LOCK_FILE", &self.lock)
            .env("NO_COLOR", "1");
        c
    }
}

#[test]
fn version_names_the_commit_it_was_built_from() {
    let out = iopscheck().arg("--version").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let text = text.trim();
    let rest = text
        .strip_prefix(&format!("iopscheck {}", env!("CARGO_PKG_VERSION")))
        .unwrap_or_else(|| panic!("{text}"));
    if repo().join(".git").exists() {
        let commit = rest
            .strip_prefix(" (commit ")
            .and_then(|r| r.strip_suffix(')'))
            .unwrap_or_else(|| panic!("no commit in {text:?}"));
        assert!(
            commit.len() >= 7 && commit.chars().all(|c| c.is_ascii_hexdigit()),
            "{text}"
        );
    }
}

#[test]
fn every_asset_the_package_metadata_names_exists() {
    let toml = read("Cargo.toml");
    let meta = &toml[toml.find("[package.metadata.deb]").expect("deb metadata")..];
    let mut sources = Vec::new();
    for line in meta.lines() {
        let line = line.trim();
        let src = if let Some(rest) = line.strip_prefix("[\"") {
            rest.split('"').next()
        } else if let Some(i) = line.find("source = \"") {
            line[i + 10..].split('"').next()
        } else {
            None
        };
        if let Some(s) = src {
            sources.push(s.to_string());
        }
    }
    assert!(sources.len() >= 20, "{sources:?}");
    for s in &sources {
        // Built by cargo and packaging/build.sh, not kept in the repository.
        if s.starts_with("target/release/") {
            continue;
        }
        if let Some(dir) = s.strip_suffix("/*.yaml") {
            let n = std::fs::read_dir(repo().join(dir)).unwrap().count();
            assert!(n > 0, "{s}: no files");
        } else {
            assert!(repo().join(s).is_file(), "{s}: no such file");
        }
    }
    for generated in [
        "target/release/packaging/man/*.1.gz",
        "target/release/packaging/completions/iopscheck.bash",
        "target/release/packaging/completions/_iopscheck",
        "target/release/packaging/completions/iopscheck.fish",
    ] {
        assert!(
            sources.iter().filter(|s| *s == generated).count() == 2,
            "{generated} in both packages"
        );
        assert!(
            read("packaging/build.sh").contains(
                generated
                    .trim_start_matches("target/release/packaging/")
                    .split('/')
                    .next()
                    .unwrap()
            )
        );
    }
}

#[test]
fn the_man_page_and_completions_come_from_the_binary() {
    let man = iopscheck().arg("man").output().unwrap();
    assert!(String::from_utf8_lossy(&man.stdout).contains(".TH iopscheck"));
    for shell in ["bash", "zsh", "fish"] {
        let out = iopscheck().args(["completions", shell]).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("fleet") && text.contains("bundle"),
            "{shell}"
        );
    }
}

/// `Key=value` lines of a unit file's section.
fn unit_keys(text: &str, section: &str) -> Vec<(String, String)> {
    let mut inside = false;
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == format!("[{section}]");
        } else if inside
            && !line.starts_with('#')
            && let Some((k, v)) = line.split_once('=')
        {
            out.push((k.to_string(), v.to_string()));
        }
    }
    out
}

fn has(keys: &[(String, String)], k: &str, v: &str) -> bool {
    keys.iter().any(|(a, b)| a == k && b == v)
}

#[test]
fn the_service_runs_the_scheduled_check_hardened_with_verdicts_not_marked_failed() {
    let s = unit_keys(&read("packaging/systemd/iopscheck.service"), "Service");
    for (k, v) in [
        ("Type", "oneshot"),
        // The script reads the settings, as in the cron path, with its checks: systemd's
        // EnvironmentFile= would take any key (LD_PRELOAD=, PATH=) from any file.
        (
            "ExecStart",
            "/usr/lib/iopscheck/iopscheck-scheduled --env /etc/iopscheck/iopscheck.env",
        ),
        ("SuccessExitStatus", "1 3"),
        ("StateDirectory", "iopscheck"),
        ("NoNewPrivileges", "yes"),
        ("ProtectSystem", "full"),
        ("PrivateTmp", "yes"),
    ] {
        assert!(has(&s, k, v), "iopscheck.service lacks {k}={v}");
    }
    assert!(
        !s.iter().any(|(k, _)| k == "EnvironmentFile"),
        "iopscheck.service reads its settings with EnvironmentFile="
    );
    // Strict would make the data directory read-only: it is named only at run time.
    assert!(!has(&s, "ProtectSystem", "strict"));
    // Where the script is installed is where the service looks for it.
    assert!(
        read("Cargo.toml").contains(
            "[\"packaging/libexec/iopscheck-scheduled\", \"usr/lib/iopscheck/\", \"755\"]"
        )
    );
}

#[test]
fn the_timer_spreads_runs_over_the_day_at_random_and_catches_up() {
    let t = unit_keys(&read("packaging/systemd/iopscheck.timer"), "Timer");
    assert!(has(&t, "Persistent", "true"));
    let calendar = &t.iter().find(|(k, _)| k == "OnCalendar").unwrap().1;
    let hours = calendar
        .split(' ')
        .nth(1)
        .unwrap()
        .split(':')
        .next()
        .unwrap();
    assert!(
        hours.split(',').count() >= 2,
        "several runs a day: {calendar}"
    );
    assert!(t.iter().any(|(k, v)| k == "RandomizedDelaySec" && v != "0"));
    let install = unit_keys(&read("packaging/systemd/iopscheck.timer"), "Install");
    assert!(has(&install, "WantedBy", "timers.target"));
}

#[test]
fn nothing_runs_before_the_administrator_names_a_directory() {
    let env = read("packaging/etc/iopscheck.env");
    assert!(
        env.lines().any(|l| l == "IOPSCHECK_DIR="),
        "IOPSCHECK_DIR empty by default"
    );
    let keys: BTreeSet<&str> = env
        .lines()
        .map(|l| l.trim_start_matches('#'))
        .filter_map(|l| l.split_once('=').map(|(k, _)| k))
        .filter(|k| k.starts_with("IOPSCHECK_"))
        .collect();
    let script = read("packaging/libexec/iopscheck-scheduled");
    for k in &keys {
        assert!(
            script.contains(k),
            "{k} is set in iopscheck.env but not read by the script"
        );
    }
    // The cron file is all comments until someone chooses cron over the timer.
    let cron = read("packaging/cron/iopscheck");
    assert!(cron.lines().all(|l| l.is_empty() || l.starts_with('#')));
    let line = cron
        .lines()
        .find(|l| l.contains("iopscheck-scheduled"))
        .unwrap();
    assert!(line.contains("--env /etc/iopscheck/iopscheck.env") && line.contains("--random-delay"));
    // The package enables and starts nothing.
    let toml = read("Cargo.toml");
    assert!(toml.contains("enable = false, start = false"));
}

#[test]
fn an_env_file_line_with_a_backslash_is_refused_before_anything_runs() {
    // systemd reads `\` as an escape and a trailing one as a continuation line; the cron path's
    // reader does not, so it refuses such a line rather than run with another setting.
    let sched = Sched::new();
    let (data, history) = (&sched.data, &sched.history);
    let file = sched.tmp.path().join("iopscheck.env");
    std::fs::write(
        &file,
        format!(
            "# a comment\nIOPSCHECK_POLICY=swimlane\nIOPSCHECK_RUN_ARGS=--size 8m \\\n  --runtime 1s\nIOPSCHECK_DIR={}\n",
            data.display()
        ),
    )
    .unwrap();
    let out = sched.script().arg("--env").arg(&file).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("{}:3: a backslash", file.display())),
        "{err}"
    );
    assert!(!history.exists(), "nothing ran");
    assert_eq!(std::fs::read_dir(data).unwrap().count(), 0);
}

#[test]
fn the_kubernetes_manifests_have_the_expected_kinds() {
    for (file, kind) in [
        ("node/namespace.yaml", "Namespace"),
        ("node/serviceaccount.yaml", "ServiceAccount"),
        ("node/daemonset.yaml", "DaemonSet"),
        ("node/job.yaml", "Job"),
        ("node/kustomization.yaml", "Kustomization"),
        ("openshift/scc.yaml", "SecurityContextConstraints"),
        ("openshift/kustomization.yaml", "Kustomization"),
        ("storageclass/namespace.yaml", "Namespace"),
        ("storageclass/job.yaml", "Job"),
        ("storageclass/kustomization.yaml", "Kustomization"),
        ("monitoring/prometheus-rule.yaml", "PrometheusRule"),
        ("monitoring/kustomization.yaml", "Kustomization"),
    ] {
        let v = yaml(&format!("packaging/kubernetes/{file}"));
        assert_eq!(v["kind"], kind, "{file}");
    }
    let ds = yaml("packaging/kubernetes/node/daemonset.yaml");
    let c = &ds["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["command"][0], "/usr/lib/iopscheck/iopscheck-scheduled");
    // The image (staged by image.sh, FROM scratch) holds the script where the DaemonSet runs it,
    // and every manifest names the image this version builds.
    assert!(read("packaging/kubernetes/Containerfile").contains("FROM scratch"));
    assert!(read("packaging/kubernetes/image.sh").contains(
        "put packaging/libexec/iopscheck-scheduled /usr/lib/iopscheck/iopscheck-scheduled"
    ));
    let image = format!(
        "registry.example.com/iopscheck:{}",
        env!("CARGO_PKG_VERSION")
    );
    for file in [
        "node/daemonset.yaml",
        "node/job.yaml",
        "storageclass/job.yaml",
    ] {
        let v = yaml(&format!("packaging/kubernetes/{file}"));
        assert_eq!(
            v["spec"]["template"]["spec"]["containers"][0]["image"],
            image.as_str(),
            "{file}"
        );
    }
    let rules = yaml("packaging/kubernetes/monitoring/prometheus-rule.yaml");
    // The rules read series that `--format prometheus` writes.
    let prom_doc = read("src/report/prometheus.rs");
    for g in rules["spec"]["groups"].as_array().unwrap() {
        for r in g["rules"].as_array().unwrap() {
            let e = r["expr"].as_str().unwrap();
            for (i, _) in e.match_indices("iopscheck_") {
                let metric: String = e[i..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                assert!(
                    prom_doc.contains(&format!("`{metric}")),
                    "{metric} is not exported"
                );
            }
        }
    }
}

/// The pod templates of the workloads, by file.
fn pod_templates() -> Vec<(&'static str, Value)> {
    [
        "node/daemonset.yaml",
        "node/job.yaml",
        "storageclass/job.yaml",
    ]
    .into_iter()
    .map(|f| {
        let v = yaml(&format!("packaging/kubernetes/{f}"));
        (f, v["spec"]["template"]["spec"].clone())
    })
    .collect()
}

#[test]
fn pods_name_their_node_without_host_networking() {
    for dir in ["node", "openshift", "storageclass", "monitoring"] {
        for e in std::fs::read_dir(repo().join("packaging/kubernetes").join(dir)).unwrap() {
            let p = e.unwrap().path();
            let text = std::fs::read_to_string(&p).unwrap();
            assert!(!text.contains("hostNetwork: true"), "{}", p.display());
        }
    }
    for (f, pod) in pod_templates() {
        assert!(pod.get("hostNetwork").is_none(), "{f}");
        let c = &pod["containers"][0];
        let host = c["env"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == "IOPSCHECK_HOST")
            .unwrap_or_else(|| panic!("{f}: no IOPSCHECK_HOST"));
        assert_eq!(
            host["valueFrom"]["fieldRef"]["fieldPath"], "spec.nodeName",
            "{f}"
        );
        // Each pod's result is one line of its log.
        let args = c["args"].as_array().cloned().unwrap_or_default();
        let env_args = c["env"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == "IOPSCHECK_RUN_ARGS")
            .and_then(|e| e["value"].as_str().map(String::from))
            .unwrap_or_default();
        let log_format = c["env"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == "IOPSCHECK_LOG_FORMAT")
            .and_then(|e| e["value"].as_str().map(String::from));
        assert!(
            args.windows(2)
                .any(|w| w[0] == "--format" && w[1] == "jsonl")
                || env_args.contains("--format jsonl")
                || log_format.as_deref() == Some("jsonl"),
            "{f}: the result is not printed as one JSON line"
        );
        // The DaemonSet collects days of runs: its line is the history's verdict, not the
        // last sitting's.
        if f.contains("daemonset") {
            assert_eq!(log_format.as_deref(), Some("jsonl"), "{f}");
            assert!(!env_args.contains("--format"), "{f}: {env_args}");
        }
    }
}

#[test]
fn each_namespace_declares_the_pod_security_level_its_pods_need() {
    let level = |f: &str| {
        yaml(&format!("packaging/kubernetes/{f}"))["metadata"]["labels"]
            ["pod-security.kubernetes.io/enforce"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(level("node/namespace.yaml"), "privileged");
    assert_eq!(level("storageclass/namespace.yaml"), "restricted");

    // The StorageClass Job: restricted, non-root, read-only root, a claimed volume of a class.
    let job = yaml("packaging/kubernetes/storageclass/job.yaml");
    assert_eq!(job["metadata"]["namespace"], "iopscheck-storage");
    let pod = &job["spec"]["template"]["spec"];
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_ne!(pod["securityContext"]["runAsUser"], 0);
    assert_eq!(
        pod["securityContext"]["seccompProfile"]["type"],
        "RuntimeDefault"
    );
    let sc = &pod["containers"][0]["securityContext"];
    assert_eq!(sc["allowPrivilegeEscalation"], false);
    assert_eq!(sc["readOnlyRootFilesystem"], true);
    assert_eq!(sc["capabilities"]["drop"][0], "ALL");
    assert!(sc["capabilities"].get("add").is_none());
    let vols = pod["volumes"].as_array().unwrap();
    assert!(vols.iter().all(|v| v.get("hostPath").is_none()));
    let claim = &vols[0]["ephemeral"]["volumeClaimTemplate"]["spec"];
    assert!(claim["storageClassName"].is_string());
    // Room for the policy's 4 GiB test file.
    let size = claim["resources"]["requests"]["storage"].as_str().unwrap();
    let gi: u64 = size.strip_suffix("Gi").unwrap().parse().unwrap();
    assert!(gi > 4, "{size}");
    let mounts: Vec<&str> = pod["containers"][0]["volumeMounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["mountPath"].as_str().unwrap())
        .collect();
    assert!(
        mounts.contains(&"/tmp"),
        "the run lock needs a writable /tmp"
    );
}

#[test]
fn the_playbook_parses_and_every_setting_it_reads_has_a_default() {
    let plays = yaml("packaging/ansible/iopscheck.yml");
    assert_eq!(plays.as_array().unwrap().len(), 4);
    let defaults = yaml("packaging/ansible/defaults.yml");
    let text: String = read("packaging/ansible/iopscheck.yml")
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    let mut used = BTreeSet::new();
    for (i, _) in text.match_indices("iopscheck_") {
        let name: String = text[i..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        used.insert(name);
    }
    // Set by the playbook itself (facts, registered results, play vars).
    let own = [
        "iopscheck_node_name",
        "iopscheck_remote_bin",
        "iopscheck_history_args",
        "iopscheck_decide_args",
        "iopscheck_tmp",
        "iopscheck_check",
        "iopscheck_expect",
        "iopscheck_files",
        "iopscheck_fleet",
        "iopscheck_fleet_dir",
        "iopscheck_fleet_bin",
        "iopscheck_on_controller",
        "iopscheck_judge",
        "iopscheck_gathered",
    ];
    for u in &used {
        assert!(
            defaults.get(u).is_some() || own.contains(&u.as_str()),
            "{u} has no default in defaults.yml"
        );
    }
}

#[test]
fn the_playbook_names_hosts_as_the_inventory_does_and_the_example_runs_the_policys_test() {
    let plays = yaml("packaging/ansible/iopscheck.yml");
    let text = read("packaging/ansible/iopscheck.yml");
    assert!(text.contains("'--host', iopscheck_node_name"), "--host");
    let defaults = yaml("packaging/ansible/defaults.yml");
    assert_eq!(defaults["iopscheck_host_name"], "{{ inventory_hostname }}");
    // The fleet is judged on a node by default: the controller needs no iopscheck.
    assert_eq!(defaults["iopscheck_fleet_on"], "first_node");
    let judge = &plays[3];
    assert_eq!(judge["hosts"], "{{ iopscheck_hosts }}");
    // Neither the example inventory nor the defaults shrink the policy's test.
    let inv = read("packaging/ansible/inventory.example.ini");
    for quick in ["--size", "--runtime", "--runs", "iopscheck_run_args"] {
        assert!(!inv.contains(quick), "the example inventory sets {quick}");
    }
    assert!(inv.contains("iopscheck_action=run"));
    assert_eq!(defaults["iopscheck_run_args"], Value::Array(vec![]));
}

fn write_history(path: &Path, host: &str, dir: &str, mb_s: f64) {
    write_history_of(path, host, dir, &[mb_s; 6]);
}

/// Six Swimlane runs, three yesterday and three today, the last half an hour ago, of
/// `figures` MB/s (the first six, newest first).
fn write_history_of(path: &Path, host: &str, dir: &str, figures: &[f64]) {
    let mut text = String::new();
    for d in 0..2 {
        for i in 0..3 {
            let mb_s = figures[(d * 3 + i) as usize];
            let ts = chrono::Local::now()
                - chrono::Duration::days(d)
                - chrono::Duration::minutes(30 + 10 * i);
            let r = serde_json::json!({
                "schema_version": 1,
                "timestamp": ts.fixed_offset().to_rfc3339(),
                "host": host,
                "source": "native",
                "engine": "posixaio",
                // the policy's own job: only its runs count as evidence
                "job": serde_json::to_value(
                    iopscheck::testing::policy::resolve("swimlane").unwrap().policy.job.shape()
                ).unwrap(),
                "metrics": {
                    "write_bw_mb_s": mb_s,
                    "write_iops_formula": mb_s / 4.0 * 1024.0,
                },
                "target": { "dir": dir },
                "tool_version": "0.1.0",
                "policy": "swimlane",
            });
            text.push_str(&r.to_string());
            text.push('\n');
        }
    }
    std::fs::write(path, text).unwrap();
}

/// The DaemonSet's log line: with `IOPSCHECK_LOG_FORMAT=jsonl`, the scheduled check prints
/// the history's verdict (report scope) on stdout, one line, nothing of the run itself, and
/// `fleet -` judges the node on its history from it.
#[test]
fn the_scheduled_checks_log_line_is_the_historys_verdict_for_fleet() {
    let sched = Sched::new();
    let tmp = &sched.tmp;
    write_history(&sched.history, "node-7", sched.data.to_str().unwrap(), 16.4);
    let out = sched
        .script()
        .env("IOPSCHECK_DIR", &sched.data)
        .env("IOPSCHECK_HOST", "node-7")
        .env("IOPSCHECK_RUN_ARGS", "--size 8m --runtime 1 --runs 1")
        .env("IOPSCHECK_LOG_FORMAT", "jsonl")
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "one line: {stdout}");
    let line: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(line["scope"], "report", "{line:#}");
    assert!(
        line["judged_on"]
            .as_str()
            .unwrap()
            .starts_with("on the history"),
        "{line:#}"
    );
    // report.json is written as before.
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(tmp.path().join("state/report.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(report["verdict"], line["verdict"]);

    let fleet = Command::new(assert_cmd::cargo::cargo_bin!("iopscheck"))
        .args(["fleet", "-", "--format", "json"])
        .write_stdin(format!("[pod/iopscheck-x/iopscheck] {stdout}"))
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&fleet.stdout).unwrap();
    assert_eq!(v["hosts"][0]["host"], "node-7", "{v:#}");
    assert_eq!(v["hosts"][0]["judged_on"], "history", "{v:#}");
    assert_eq!(v["hosts"][0]["verdict"], line["verdict"], "{v:#}");
}

#[test]
fn the_scheduled_check_runs_then_exports_the_windows_verdict() {
    let sched = Sched::new();
    let tmp = &sched.tmp;
    write_history(
        &sched.history,
        &iopscheck::testing::machine::hostname(),
        sched.data.to_str().unwrap(),
        16.4,
    );
    std::fs::create_dir(tmp.path().join("textfile")).unwrap();
    let script = repo().join("packaging/libexec/iopscheck-scheduled");
    let run = |textfile: &Path| {
        sched
            .script()
            .env("IOPSCHECK_DIR", &sched.data)
            .env("IOPSCHECK_TEXTFILE", textfile)
            .env("IOPSCHECK_RUN_ARGS", "--size 32m --runtime 1 --runs 1")
            .output()
            .unwrap()
    };
    let out = run(&tmp.path().join("textfile/iopscheck.prom"));
    let code = out.status.code().unwrap();
    // 0/1/3 when the engine ran; 2 when the run could not run: the report is written anyway.
    assert!([0, 1, 2, 3].contains(&code), "{out:?}");
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(tmp.path().join("state/report.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(report["scope"], "report");
    assert!(report["runs"].as_array().unwrap().len() >= 6);
    let prom = std::fs::read_to_string(tmp.path().join("textfile/iopscheck.prom")).unwrap();
    assert!(prom.contains("iopscheck_verdict{"), "{prom}");
    assert!(
        !tmp.path().join("data").read_dir().unwrap().any(|_| true),
        "the test file is gone"
    );

    // No textfile directory: said, and nothing written there.
    let out = run(&tmp.path().join("absent/iopscheck.prom"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no Prometheus textfile written"));
    assert!(!tmp.path().join("absent").exists());

    // No directory named: refused, exit 2.
    let out = std::process::Command::new("sh")
        .arg(&script)
        .env_remove("IOPSCHECK_DIR")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("IOPSCHECK_DIR is not set"));
}

#[test]
fn the_dashboards_queries_read_series_iopscheck_writes_or_its_rules_record() {
    let dash: Value = serde_json::from_str(&read("packaging/grafana/iopscheck.json")).unwrap();
    let mut exprs = Vec::new();
    for p in dash["panels"].as_array().unwrap() {
        for t in p["targets"].as_array().into_iter().flatten() {
            exprs.push(t["expr"].as_str().unwrap().to_string());
        }
    }
    for v in dash["templating"]["list"].as_array().unwrap() {
        if let Some(q) = v["query"]["query"].as_str() {
            exprs.push(q.to_string());
        }
    }
    assert!(exprs.len() > 5, "{exprs:?}");
    let prom_doc = read("src/report/prometheus.rs");
    let rules = read("packaging/kubernetes/monitoring/prometheus-rule.yaml");
    let mut fleet_verdict = false;
    for e in &exprs {
        let names: Vec<String> = e
            .match_indices("iopscheck")
            .map(|(i, _)| {
                e[i..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                    .collect()
            })
            .collect();
        assert!(
            !names.is_empty(),
            "a query that reads no iopscheck series: {e}"
        );
        for n in names {
            if n.contains(':') {
                assert!(
                    rules.contains(&format!("record: {n}")),
                    "{n} is not recorded"
                );
                fleet_verdict |= n == "iopscheck:fleet_verdict";
            } else {
                assert!(prom_doc.contains(&format!("`{n}")), "{n} is not exported");
            }
        }
    }
    assert!(fleet_verdict, "the dashboard shows no fleet verdict");
    // Each node's latest day beside its window: a window's mean hides the day it began to fail.
    assert!(
        exprs
            .iter()
            .any(|e| e.starts_with("iopscheck_rule_latest_day_value{")),
        "{exprs:?}"
    );
    // Each node's deciding figure against its threshold.
    assert!(
        exprs
            .iter()
            .any(|e| e.contains("iopscheck_rule_value{") && e.contains("level=\"fail\""))
    );
    assert!(
        exprs
            .iter()
            .any(|e| e.contains("iopscheck_rule_threshold{"))
    );
}

/// The shells the scheduled script runs under: Debian's /bin/sh (dash), bash (the /bin/sh of
/// the .rpm's targets) and bash in POSIX mode. A shell that is not installed is left out, said.
fn shells() -> Vec<Vec<&'static str>> {
    let mut out = Vec::new();
    for sh in [vec!["dash"], vec!["bash"], vec!["bash", "--posix"]] {
        let there = std::process::Command::new(sh[0])
            .args(["-c", "true"])
            .status()
            .is_ok_and(|s| s.success());
        if there {
            out.push(sh);
        } else {
            eprintln!("skipped: {} is not installed", sh[0]);
        }
    }
    out
}

/// Runs the scheduled script under `shell` with `args`, a clean environment (PATH only) and at
/// most a minute: a script that loops for ever fails the test instead of hanging it.
fn scheduled(shell: &[&str], args: &[&std::ffi::OsStr]) -> (Option<i32>, String) {
    let mut child = std::process::Command::new(shell[0])
        .args(&shell[1..])
        .arg(repo().join("packaging/libexec/iopscheck-scheduled"))
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{shell:?} {args:?}: still running after a minute; stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_env_file_sets_the_documented_settings_and_never_the_script_itself() {
    let sched = Sched::new();
    let (tmp, history) = (&sched.tmp, &sched.history);
    let mark = tmp.path().join("executed");
    let settings =
        sched.env_file("IOPSCHECK_RUN_ARGS=--size 8m --runtime 1 --runs 1 --engine psync\n");
    let file = tmp.path().join("iopscheck.env");
    for shell in shells() {
        // Lines that would steer the script: an arithmetic expression that runs a command
        // (bash evaluates a variable's value in $((n + 1))), the loop's period, the field
        // separator, the search path. Each is refused with its place, and nothing runs.
        for (line, key) in [
            (format!("n=PATH[$(touch {})]", mark.display()), "n"),
            ("every=4".to_string(), "every"),
            ("IFS=-".to_string(), "IFS"),
            (format!("PATH={}", tmp.path().display()), "PATH"),
            ("IOPSCHECK_UNKNOWN=1".to_string(), "IOPSCHECK_UNKNOWN"),
        ] {
            std::fs::write(&file, format!("# settings\n{line}\n{settings}")).unwrap();
            let (code, err) = scheduled(&shell, &["--env".as_ref(), file.as_os_str()]);
            assert_eq!(code, Some(2), "{shell:?} {line}: {err}");
            assert!(
                err.contains(&format!(
                    "{}:2: {key} is not a setting of the scheduled check",
                    file.display()
                )),
                "{shell:?} {line}: {err}"
            );
            assert!(!mark.exists(), "{shell:?} {line}: a command ran");
            assert!(!history.exists(), "{shell:?} {line}: the check ran");
        }
        // A line that is no KEY=value at all.
        std::fs::write(&file, format!("{settings}rm -rf /\n")).unwrap();
        let (code, err) = scheduled(&shell, &["--env".as_ref(), file.as_os_str()]);
        assert_eq!(code, Some(2), "{shell:?}: {err}");
        assert!(err.contains(":8: not a KEY=value line"), "{shell:?}: {err}");
        assert!(!history.exists());
        // The command line's periods are whole seconds, never expressions.
        let expr = format!("PATH[$(touch {})]", mark.display());
        for flag in ["--every", "--random-delay"] {
            let (code, err) = scheduled(&shell, &[flag.as_ref(), expr.as_ref()]);
            assert_eq!(code, Some(2), "{shell:?} {flag}: {err}");
            assert!(err.contains("is not a number of seconds"), "{err}");
            assert!(!mark.exists(), "{shell:?} {flag}: a command ran");
        }
        // The documented settings, iopscheck's own among them, are taken.
        std::fs::write(&file, format!("{settings}IOPSCHECK_HOST=node-a\n")).unwrap();
        let (code, err) = scheduled(&shell, &["--env".as_ref(), file.as_os_str()]);
        assert!(
            [Some(0), Some(1), Some(3)].contains(&code),
            "{shell:?}: {err}"
        );
        let text = std::fs::read_to_string(history).unwrap();
        let r: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        assert_eq!(r["host"], "node-a", "{shell:?}");
        assert_eq!(r["overrides"]["size"], "8m", "{shell:?}");
        std::fs::remove_file(history).unwrap();
    }
}

#[test]
fn the_recheck_setting_tests_until_decided_then_only_when_due() {
    let sched = Sched::new();
    let (tmp, data, history, state) = (&sched.tmp, &sched.data, &sched.history, &sched.state);
    // Swimlane's job at a test's scale (a policy file, as --size is not the policy's test).
    let shown = iopscheck()
        .args(["policy", "show", "swimlane"])
        .output()
        .unwrap();
    let small = tmp.path().join("small.yaml");
    std::fs::write(
        &small,
        String::from_utf8(shown.stdout)
            .unwrap()
            .replace("size: 4g", "size: 8m")
            .replace("runtime: 60s", "runtime: 1s"),
    )
    .unwrap();
    let settings = |policy: &Path| {
        sched.env_file(&format!(
            "IOPSCHECK_HOST=node-a\nIOPSCHECK_POLICY={}\nIOPSCHECK_RUN_ARGS=--engine posixaio\nIOPSCHECK_RECHECK_EVERY=2d\n",
            policy.display(),
        ))
    };
    let file = tmp.path().join("iopscheck.env");
    for shell in shells() {
        // No runs yet: undecided, so the check tests -- once, not the sequence's budget.
        let _ = std::fs::remove_file(history);
        std::fs::write(&file, settings(&small)).unwrap();
        let (code, err) = scheduled(&shell, &["--env".as_ref(), file.as_os_str()]);
        assert_eq!(code, Some(3), "{shell:?}: {err}");
        let lines = std::fs::read_to_string(history).unwrap();
        assert_eq!(lines.lines().count(), 1, "{shell:?}: {err}");
        assert!(!err.contains("no test run"), "{shell:?}: {err}");
        assert!(
            !data.read_dir().unwrap().any(|_| true),
            "the test file is gone"
        );

        // Decided pass over two days (about 4,200 IOPS against Swimlane's 3000, ±2%):
        // nothing is tested, the verdict stands in report.json and the log says when the
        // next re-check is due.
        let figures: Vec<f64> = (0..6)
            .map(|i| 16.4 * (1.0 + 0.02 * (i % 3) as f64))
            .collect();
        write_history_of(history, "node-a", data.to_str().unwrap(), &figures);
        let before = std::fs::read_to_string(history).unwrap();
        std::fs::write(&file, settings(Path::new("swimlane"))).unwrap();
        let (code, err) = scheduled(&shell, &["--env".as_ref(), file.as_os_str()]);
        assert_eq!(code, Some(0), "{shell:?}: {err}");
        assert!(
            err.contains("no test run") && err.contains("next re-check due"),
            "{shell:?}: {err}"
        );
        assert_eq!(
            std::fs::read_to_string(history).unwrap(),
            before,
            "{shell:?}"
        );
        let report: Value =
            serde_json::from_str(&std::fs::read_to_string(state.join("report.json")).unwrap())
                .unwrap();
        assert_eq!(report["verdict"], "pass", "{shell:?}");
        assert_eq!(report["sequential"][0]["outcome"], "pass", "{report}");
    }
}

/// With `IOPSCHECK_RECHECK_EVERY`, the decision's settings given in `IOPSCHECK_RUN_ARGS` are
/// the report's too: the verdict the check writes is the one its run decided by. Near the
/// threshold, six runs end the sequence at a budget of 6 runs (inconclusive, nothing tested)
/// where the default budget of 30 would leave it undecided.
#[test]
fn the_decisions_settings_in_run_args_are_the_reports_too() {
    let sched = Sched::new();
    let (tmp, data, history, state) = (&sched.tmp, &sched.data, &sched.history, &sched.state);
    // About Swimlane's 3000 IOPS (11.72 MB/s), ±8%.
    let figures = [11.0, 12.6, 11.9, 12.4, 11.2, 11.8];
    write_history_of(history, "node-a", data.to_str().unwrap(), &figures);
    let before = std::fs::read_to_string(history).unwrap();
    // The case is not vacuous: at the default settings the sequence goes on.
    let out = iopscheck()
        .args([
            "report",
            "--until-decided",
            "--format",
            "json",
            "--host",
            "node-a",
        ])
        .arg("--history")
        .arg(history)
        .output()
        .unwrap();
    let at_defaults: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        at_defaults["sequential"][0]["outcome"], "undecided",
        "{at_defaults}"
    );

    let file = tmp.path().join("iopscheck.env");
    std::fs::write(
        &file,
        sched.env_file(
            "IOPSCHECK_HOST=node-a\nIOPSCHECK_RUN_ARGS=--engine posixaio --alpha 0.01 --beta=0.02 --max-runs 6 --max-days=5\nIOPSCHECK_RECHECK_EVERY=2d\n",
        ),
    )
    .unwrap();
    for shell in shells() {
        let _ = std::fs::remove_file(state.join("report.json"));
        let (code, err) = scheduled(&shell, &["--env".as_ref(), file.as_os_str()]);
        // The run judged the sequence ended at its budget of 6 and tested nothing ...
        assert_eq!(code, Some(3), "{shell:?}: {err}");
        assert!(err.contains("no test run"), "{shell:?}: {err}");
        assert_eq!(std::fs::read_to_string(history).unwrap(), before);
        // ... and the report says the same, at the same settings.
        let report: Value =
            serde_json::from_str(&std::fs::read_to_string(state.join("report.json")).unwrap())
                .unwrap();
        let q = &report["sequential"][0];
        assert_eq!(q["outcome"], "budget", "{shell:?}: {report}");
        assert_eq!(
            (
                q["alpha"].as_f64(),
                q["beta"].as_f64(),
                q["max_runs"].as_u64(),
                q["max_days"].as_u64()
            ),
            (Some(0.01), Some(0.02), Some(6), Some(5)),
            "{shell:?}: {q}"
        );
        assert_eq!(report["verdict"], "inconclusive", "{shell:?}");
    }
}

#[test]
fn an_env_file_others_could_change_is_refused_before_it_names_a_program_to_run() {
    use std::os::unix::fs::PermissionsExt;
    let sched = Sched::new();
    let tmp = sched.tmp.path();
    let mode = |p: &Path, m: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    };
    // The program the env file would have run, as root under systemd and cron.
    let mark = tmp.join("ran");
    let evil = tmp.join("evil.sh");
    std::fs::write(
        &evil,
        format!("#!/bin/sh\necho \"$@\" >> {}\n", mark.display()),
    )
    .unwrap();
    mode(&evil, 0o755);
    let settings = format!(
        "IOPSCHECK_DIR={}\nIOPSCHECK_BIN={}\nIOPSCHECK_STATE_DIR={}\n",
        sched.data.display(),
        evil.display(),
        sched.state.display()
    );
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let place = |dir: &str, dir_mode: u32, file_mode: u32| -> PathBuf {
        let d = tmp.join(dir);
        std::fs::create_dir_all(&d).unwrap();
        let f = d.join("iopscheck.env");
        std::fs::write(&f, &settings).unwrap();
        mode(&f, file_mode);
        mode(&d, dir_mode);
        f
    };
    // (env file, what the refusal says)
    let mut refused = vec![
        (
            place("open", 0o755, 0o666),
            "it is writable by its group or others (-rw-rw-rw-)".to_string(),
        ),
        (
            place("group", 0o755, 0o664),
            "it is writable by its group or others (-rw-rw-r--)".into(),
        ),
        (
            place("shared", 0o777, 0o644),
            format!(
                "directory {} is writable by others (drwxrwxrwx)",
                tmp.join("shared").display()
            ),
        ),
    ];
    // A link from a sound directory to a file in an open one: the file read is judged.
    let sound = tmp.join("sound");
    std::fs::create_dir(&sound).unwrap();
    let link = sound.join("iopscheck.env");
    std::os::unix::fs::symlink(tmp.join("shared/iopscheck.env"), &link).unwrap();
    refused.push((
        link,
        format!(
            "directory {} is writable by others (drwxrwxrwx)",
            tmp.join("shared").display()
        ),
    ));
    if root {
        // Owned by another user (nobody), the file or its directory.
        let theirs = place("theirs", 0o755, 0o644);
        std::os::unix::fs::chown(&theirs, Some(65534), None).unwrap();
        refused.push((theirs, "it is owned by uid 65534".into()));
        let their_dir = place("their-dir", 0o755, 0o644);
        std::os::unix::fs::chown(tmp.join("their-dir"), Some(65534), None).unwrap();
        refused.push((
            their_dir,
            format!(
                "directory {} is owned by uid 65534",
                tmp.join("their-dir").display()
            ),
        ));
    } else {
        eprintln!("skipped: files owned by another user need root to make");
    }
    for shell in shells() {
        for (file, why) in &refused {
            let (code, err) = scheduled(&shell, &["--env".as_ref(), file.as_os_str()]);
            assert_eq!(code, Some(2), "{shell:?} {}: {err}", file.display());
            assert!(
                err.contains(&format!("{}: refusing the env file: {why}", file.display())),
                "{shell:?}: {err}"
            );
            assert!(err.contains("nothing was run"), "{err}");
            assert!(
                !mark.exists(),
                "{shell:?} {}: its program ran",
                file.display()
            );
        }
        // Root's file, 0644, in root's directories (a sticky /tmp on the way): read and run.
        let sound = place("ok", 0o755, 0o644);
        let (code, err) = scheduled(&shell, &["--env".as_ref(), sound.as_os_str()]);
        assert_eq!(code, Some(0), "{shell:?}: {err}");
        assert!(
            std::fs::read_to_string(&mark).unwrap().starts_with("run "),
            "{shell:?}"
        );
        std::fs::remove_file(&mark).unwrap();
    }
}

#[test]
fn an_empty_setting_in_the_env_file_is_one_not_set() {
    use std::os::unix::fs::PermissionsExt;
    let sched = Sched::new();
    let tmp = sched.tmp.path();
    // A stand-in for iopscheck that says which of its own settings it was given.
    let log = tmp.join("seen");
    let bin = tmp.join("iopscheck-stub.sh");
    let keys = [
        "IOPSCHECK_HISTORY",
        "IOPSCHECK_HOST",
        "IOPSCHECK_LOCK_FILE",
        "IOPSCHECK_FLUSH_WAIT",
        "IOPSCHECK_REMOVAL_NOTE_AFTER",
        "IOPSCHECK_FIO",
    ];
    let said: Vec<String> = keys.iter().map(|k| format!("{k}=${{{k}-unset}}")).collect();
    std::fs::write(
        &bin,
        format!(
            "#!/bin/sh\necho \"$1 {}\" >> {}\nexit 3\n",
            said.join(" "),
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut text = format!(
        "IOPSCHECK_DIR={}\nIOPSCHECK_BIN={}\nIOPSCHECK_STATE_DIR={}\nIOPSCHECK_POLICY=\n",
        sched.data.display(),
        bin.display(),
        sched.state.display()
    );
    for k in keys {
        text.push_str(&format!("{k}=\n"));
    }
    let file = tmp.join("iopscheck.env");
    std::fs::write(&file, text).unwrap();
    for shell in shells() {
        let (code, err) = scheduled(&shell, &["--env".as_ref(), file.as_os_str()]);
        assert_eq!(code, Some(3), "{shell:?}: {err}");
        let seen = std::fs::read_to_string(&log).unwrap();
        let lines: Vec<&str> = seen.lines().collect();
        assert_eq!(lines.len(), 2, "{shell:?}: a run and a report: {seen}");
        for l in &lines {
            assert!(l.starts_with("run ") || l.starts_with("report "), "{l}");
            for k in keys {
                assert!(
                    l.contains(&format!("{k}=unset")),
                    "{shell:?}: {k} given empty to iopscheck: {l}"
                );
            }
        }
        std::fs::remove_file(&log).unwrap();
    }
}
