//! What customers paste, read through the binary: a real fio output from the shared fixtures,
//! transformed here the way the medium transforms it (markdown, a web page's HTML entities, a
//! mail's quoted-printable and base64 parts, a chat's reflow down to 40 columns, `grep write`,
//! a command line in front, kubestr's JSON), must give the runs the output itself gives, or a
//! refusal that names the line, what is missing and what to ask for.

mod common;

use common::{Env, fixture};
use serde_json::Value;

const TEXT: &str = "fio-3.33-posixaio-randwrite.txt";
const MULTI: &str = "fio-3.25-text-8groups-seq-rand-read-write.txt";
const TERSE: &str = "fio-3.33-terse.txt";
const JSON: &str = "fio-3.33-io_uring-randwrite.json";

fn read(name: &str) -> String {
    std::fs::read_to_string(fixture(name)).unwrap()
}

/// `import FILE --format json` of `content` written to `name` in the env.
fn import(env: &Env, name: &str, content: &[u8], extra: &[&str]) -> (Option<i32>, Value, String) {
    let p = env.tmp.path().join(name);
    std::fs::write(&p, content).unwrap();
    let mut args = vec![p.to_str().unwrap()];
    args.extend_from_slice(extra);
    env.import_json(&args)
}

/// What a run is, whatever the paste: its job and its figures.
fn runs(v: &Value) -> Vec<(Value, Value)> {
    v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["job"].clone(), r["metrics"].clone()))
        .collect()
}

/// The runs of the fixture imported as it is.
fn original(env: &Env, name: &str, extra: &[&str]) -> (Value, Vec<(Value, Value)>) {
    let (code, v, err) = import(env, &format!("orig-{name}"), read(name).as_bytes(), extra);
    assert!(matches!(code, Some(0 | 1 | 3)), "{name}: {err}");
    let r = runs(&v);
    // a fixture whose jobs may have run beside each other gives none, each listed as not
    // counted: the paste must list as many
    assert!(
        !r.is_empty() || left_out(&v) > 0,
        "{name}: the fixture itself gives runs"
    );
    (v, r)
}

/// How many blocks are listed as not counted.
fn left_out(v: &Value) -> u64 {
    v["not_counted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["runs"].as_u64().unwrap_or(1))
        .sum()
}

fn same_as_original(name: &str, shaped: &str, content: &[u8], extra: &[&str]) -> Value {
    let env = Env::new();
    let (orig, want) = original(&env, name, extra);
    let (code, v, err) = import(&env, shaped, content, extra);
    assert!(
        matches!(code, Some(0 | 1 | 3)),
        "{shaped}: exit {code:?}: {err}"
    );
    assert_eq!(runs(&v), want, "{shaped}: the same runs as {name}");
    if want.is_empty() {
        assert_eq!(
            left_out(&v),
            left_out(&orig),
            "{shaped}: as many left out as {name}"
        );
    }
    assert_eq!(v["verdict"], orig["verdict"], "{shaped}");
    assert_eq!(v["deviations"], orig["deviations"], "{shaped}");
    v
}

fn warnings(v: &Value) -> String {
    v["warnings"].to_string()
}

#[test]
fn a_fenced_markdown_block_with_a_language_tag_is_read() {
    for tag in ["", "text", "console"] {
        let md = format!(
            "Hi, here is the result:\n\n```{tag}\n{}```\n\nThanks!\n",
            read(TEXT)
        );
        same_as_original(TEXT, "ticket.md", md.as_bytes(), &[]);
    }
    let md = format!("Output:\n```json\n{}```\n", read(JSON));
    same_as_original(JSON, "ticket-json.md", md.as_bytes(), &[]);
}

#[test]
fn a_terse_line_in_inline_code_is_read() {
    let terse = read(TERSE);
    let line = terse.lines().find(|l| l.starts_with("3;")).unwrap();
    let md = format!("My result was `{line}` on the new disk.\n");
    same_as_original(TERSE, "inline.md", md.as_bytes(), &[]);
}

#[test]
fn a_markdown_blockquote_is_read() {
    let quoted: String = read(TEXT).lines().map(|l| format!("> {l}\n")).collect();
    let md = format!("The customer wrote:\n\n{quoted}");
    same_as_original(TEXT, "quote.md", md.as_bytes(), &[]);
}

/// What a web page does to text it shows, undone by the copy-paste only in part.
fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
        .replace('(', "&#40;")
}

#[test]
fn html_entities_from_a_web_page_are_decoded_and_said() {
    let v = same_as_original(TEXT, "page.txt", html_escape(&read(TEXT)).as_bytes(), &[]);
    assert!(warnings(&v).contains("HTML entities"), "{}", warnings(&v));
    let v = same_as_original(JSON, "page.json", html_escape(&read(JSON)).as_bytes(), &[]);
    assert!(warnings(&v).contains("HTML entities"), "{}", warnings(&v));
}

/// RFC 2045 quoted-printable as a mail client writes it: `=` and non-ASCII bytes escaped, soft
/// line breaks before 76 columns.
fn quoted_printable(s: &[u8]) -> String {
    let mut out = String::new();
    for line in s.split(|&b| b == b'\n') {
        let mut cur = String::new();
        for &b in line {
            let piece = if b == b'=' || !(b == b'\t' || (32..127).contains(&b)) {
                format!("={b:02X}")
            } else {
                (b as char).to_string()
            };
            if cur.len() + piece.len() > 75 {
                out.push_str(&cur);
                out.push_str("=\n");
                cur.clear();
            }
            cur.push_str(&piece);
        }
        out.push_str(&cur);
        out.push('\n');
    }
    out
}

fn base64(s: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for (i, c) in s.chunks(3).enumerate() {
        if i > 0 && i % 19 == 0 {
            out.push('\n');
        }
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for k in 0..4 {
            if k <= c.len() {
                out.push(A[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out.push('\n');
    out
}

#[test]
fn a_quoted_printable_mail_is_decoded_and_said() {
    let body = read(TEXT);
    let qp = quoted_printable(body.as_bytes());
    assert!(
        qp.contains("=3D") && qp.contains("=\n"),
        "the mail really is encoded"
    );
    let mail = format!(
        "From: customer@example.com\nSubject: fio results\nMIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\n{qp}"
    );
    let v = same_as_original(TEXT, "mail.eml", mail.as_bytes(), &[]);
    assert!(
        warnings(&v).contains("quoted-printable"),
        "{}",
        warnings(&v)
    );
    // the body alone, pasted from the raw mail
    let v = same_as_original(TEXT, "body.txt", qp.as_bytes(), &[]);
    assert!(
        warnings(&v).contains("quoted-printable"),
        "{}",
        warnings(&v)
    );
}

#[test]
fn a_base64_attachment_is_decoded_and_said() {
    for name in [TEXT, JSON] {
        let b64 = base64(read(name).as_bytes());
        let mail = format!(
            "From: customer@example.com\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"b1\"\n\n--b1\nContent-Type: text/plain\n\nPlease see the attachment.\n--b1\nContent-Type: text/plain; name=\"fio.out\"\nContent-Transfer-Encoding: base64\nContent-Disposition: attachment; filename=\"fio.out\"\n\n{b64}--b1--\n"
        );
        let v = same_as_original(name, "attached.eml", mail.as_bytes(), &[]);
        assert!(warnings(&v).contains("base64"), "{}", warnings(&v));
    }
}

/// `fold -s -w WIDTH`: lines broken at the last space before the width, or at the width where
/// a word is longer.
fn reflow(text: &str, width: usize) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let mut rest: Vec<char> = line.chars().collect();
        while rest.len() > width {
            let cut = rest[..width]
                .iter()
                .rposition(|&c| c == ' ')
                .map(|p| p + 1)
                .filter(|&p| p > 0)
                .unwrap_or(width);
            out.extend(&rest[..cut]);
            out.push('\n');
            rest.drain(..cut);
        }
        out.extend(&rest);
        out.push('\n');
    }
    out
}

#[test]
fn text_reflowed_down_to_40_columns_keeps_every_jobs_shape_and_count() {
    // every text output of the shared fixtures (terse lines have no spaces to wrap at)
    let mut names: Vec<String> = std::fs::read_dir(fixture(""))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".txt") && !n.contains("terse"))
        .collect();
    names.sort();
    assert!(
        names.iter().any(|n| n == MULTI) && names.len() >= 10,
        "{names:?}"
    );
    for name in &names {
        let name = name.as_str();
        let widths: &[usize] = if name == MULTI || name == TEXT {
            &[40, 48, 60, 72]
        } else {
            &[40, 60]
        };
        for &width in widths {
            let folded = reflow(&read(name), width);
            assert!(
                folded.lines().all(|l| l.chars().count() <= width),
                "the reflow is real"
            );
            same_as_original(name, &format!("w{width}-{name}"), folded.as_bytes(), &[]);
        }
    }
}

#[test]
fn result_lines_alone_are_refused_naming_what_to_ask_for_and_read_with_assume_job() {
    let env = Env::new();
    let lines: String = read(TEXT)
        .lines()
        .filter(|l| l.trim_start().starts_with("write:"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(lines.lines().count(), 1);
    let (code, _, err) = {
        let p = env.tmp.path().join("grep.txt");
        std::fs::write(&p, &lines).unwrap();
        let out = env
            .cmd()
            .args(["import", p.to_str().unwrap()])
            .output()
            .unwrap();
        (
            out.status.code(),
            (),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    assert_eq!(code, Some(2), "{err}");
    for what in [
        "line 1",
        "job block",
        "ask the customer for fio's whole output",
    ] {
        assert!(err.contains(what), "{what}: {err}");
    }

    let (_, orig) = original(&env, TEXT, &[]);
    let (code, v, err) = import(
        &env,
        "grep.txt",
        lines.as_bytes(),
        &["--assume-job", "swimlane"],
    );
    assert!(
        matches!(code, Some(1 | 3)),
        "never a pass on this fixture: {err}"
    );
    let r = runs(&v);
    assert_eq!(r.len(), 1);
    for k in ["write_iops", "write_bw_bytes", "write_bw_mb_s"] {
        assert_eq!(r[0].1[k], orig[0].1[k], "{k}");
    }
    let w = warnings(&v);
    assert!(w.contains("job shape assumed by the user"), "{w}");
    assert!(w.contains("result line alone"), "{w}");

    // the same line pasted twice is one run
    let twice = format!("{lines}{lines}");
    let (_, v, _) = import(
        &env,
        "twice.txt",
        twice.as_bytes(),
        &["--assume-job", "swimlane"],
    );
    assert_eq!(runs(&v).len(), 1, "{v}");
    assert!(
        v["not_counted"].to_string().contains("same fio run"),
        "{}",
        v["not_counted"]
    );
}

#[test]
fn a_pasted_command_line_states_the_job_and_a_contradiction_is_named() {
    let env = Env::new();
    let text = read(TEXT);
    // what the output does not state (the end fsync) comes from the command line
    let (_, plain, _) = import(&env, "plain.txt", text.as_bytes(), &[]);
    assert!(
        plain["caveats"]
            .to_string()
            .contains("end fsync not stated")
    );
    let cmd = "$ fio --name=random-write --rw=randwrite --bs=4k --ioengine=posixaio --iodepth=1 --end_fsync=1\n";
    let (_, v, _) = import(&env, "cmd.txt", format!("{cmd}{text}").as_bytes(), &[]);
    assert!(
        !v["caveats"].to_string().contains("end fsync not stated"),
        "{}",
        v["caveats"]
    );
    assert_eq!(v["runs"][0]["job"]["end_fsync"], true);
    assert!(
        warnings(&v).contains("command line at line 1"),
        "{}",
        warnings(&v)
    );
    assert_eq!(runs(&v)[0].1, runs(&plain)[0].1, "the same figures");

    // a command line the output contradicts: what the output states wins, and it is named
    let other = "$ fio --name=random-write --rw=randwrite --bs=4k --ioengine=libaio --iodepth=32 --end_fsync=1\n";
    let (code, v, _) = import(&env, "other.txt", format!("{other}{text}").as_bytes(), &[]);
    assert_eq!(code, Some(3));
    assert_eq!(v["runs"][0]["job"]["iodepth"], 1);
    let d = v["differences"].to_string();
    assert!(d.contains("iodepth") && d.contains("command line"), "{d}");
}

/// kubestr's `-o json`: fio's report inside `result`, re-serialised with Go's `omitempty`
/// (zeros and empty objects dropped), the job file in `fioConfig`.
fn kubestr_json(report: &Value) -> Value {
    fn omit_empty(v: &Value) -> Option<Value> {
        match v {
            Value::Object(m) => {
                let kept: serde_json::Map<String, Value> = m
                    .iter()
                    .filter_map(|(k, v)| omit_empty(v).map(|v| (k.clone(), v)))
                    .collect();
                (!kept.is_empty()).then_some(Value::Object(kept))
            }
            Value::Number(n) if n.as_f64() == Some(0.0) => None,
            Value::String(s) if s.is_empty() => None,
            other => Some(other.clone()),
        }
    }
    let mut config = String::from("[global]\n");
    for (k, v) in report["global options"].as_object().into_iter().flatten() {
        config.push_str(&format!("{k}={}\n", v.as_str().unwrap()));
    }
    for j in report["jobs"].as_array().unwrap() {
        config.push_str(&format!("[{}]\n", j["jobname"].as_str().unwrap()));
        for (k, v) in j["job options"].as_object().into_iter().flatten() {
            config.push_str(&format!("{k}={}\n", v.as_str().unwrap()));
        }
    }
    serde_json::json!({
        "size": "4Gi",
        "storageClass": { "metadata": { "name": "standard" }, "provisioner": "pd.csi.storage.gke.io" },
        "fioConfig": config,
        "result": omit_empty(report).unwrap(),
    })
}

#[test]
fn kubestr_json_is_read_and_its_text_summary_refused_naming_what_to_ask_for() {
    let report: Value = serde_json::from_str(&read(JSON)).unwrap();
    let k = serde_json::to_vec_pretty(&kubestr_json(&report)).unwrap();
    let v = same_as_original(JSON, "kubestr.json", &k, &[]);
    assert!(warnings(&v).contains("kubestr"), "{}", warnings(&v));

    // the text summary kubestr prints without -o json, from the same report
    let j = &report["jobs"][0];
    let w = &j["write"];
    let summary = format!(
        "FIO version - {}\nGlobal options - ioengine={} verify= direct={} gtod_reduce=\n\nJobName: {}\n  blocksize={} filesize={} iodepth={} rw={}\nwrite:\n  IOPS={:.6} BW(KiB/s)={}\n  iops: min={} max={} avg={:.6}\n  bw(KiB/s): min={} max={} avg={:.6}\n",
        report["fio version"].as_str().unwrap(),
        report["global options"]["ioengine"].as_str().unwrap_or(""),
        report["global options"]["direct"].as_str().unwrap_or(""),
        j["jobname"].as_str().unwrap(),
        j["job options"]["bs"].as_str().unwrap_or(""),
        j["job options"]["size"].as_str().unwrap_or(""),
        j["job options"]["iodepth"].as_str().unwrap_or(""),
        j["job options"]["rw"].as_str().unwrap_or(""),
        w["iops"].as_f64().unwrap(),
        w["bw"],
        w["iops_min"],
        w["iops_max"],
        w["iops_mean"].as_f64().unwrap(),
        w["bw_min"],
        w["bw_max"],
        w["bw_mean"].as_f64().unwrap(),
    );
    let env = Env::new();
    let p = env.tmp.path().join("kubestr.txt");
    std::fs::write(&p, summary).unwrap();
    let out = env
        .cmd()
        .args(["import", p.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for what in ["line 1", "kubestr's text summary", "kubestr fio -o json"] {
        assert!(err.contains(what), "{what}: {err}");
    }
}
