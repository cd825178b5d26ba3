//! Loading a policy: resolving `--policy NAME|FILE`, reading the file safely, and parsing
//! YAML with error locations (`file:line:column: key.path: what was expected`). The only door
//! through which YAML enters.

use std::fmt;
use std::path::{Path, PathBuf};

use super::builtin::builtin_yaml;
use super::check::check;
use super::schema::Policy;

/// Where local policies live, looked up by name after the built-in ones.
pub const SYSTEM_POLICY_DIR: &str = "/etc/iopscheck/policies";
/// Policy files are small; anything larger is not a policy.
const MAX_POLICY_BYTES: usize = 256 * 1024;

/// A policy that could not be loaded: where, and what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error(
        "no policy named '{0}'{1}: `iopscheck policy list` shows the built-in and local ones; give a path to load a file"
    )]
    UnknownName(String, String),
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: larger than {max} bytes; a policy is a short YAML file", max = MAX_POLICY_BYTES)]
    TooLarge { path: String },
    #[error("{path}:{line}:{column}: {msg}")]
    Syntax {
        path: String,
        line: u64,
        column: u64,
        msg: String,
    },
    #[error("{path}: {msg}")]
    Invalid { path: String, msg: String },
    #[error(
        "{path}: refusing, as root, a policy file owned by another user or that other users can write (mode {mode:o}); fix its owner and permissions"
    )]
    Unsafe { path: String, mode: u32 },
    #[error("{path}: is {kind}, not a policy file; a policy is a short YAML file")]
    NotRegular { path: String, kind: &'static str },
    #[error(
        "{path}: refusing, as root, a policy another user could change or replace: {why}; the policy decides PASS or FAIL, so as root it must be owned by root with nothing on its path writable by others"
    )]
    Untrusted { path: String, why: String },
}

/// A loaded policy and where it came from.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub policy: Policy,
    pub origin: Origin,
    pub yaml: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    BuiltIn,
    File(PathBuf),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::BuiltIn => f.write_str("built-in"),
            Origin::File(p) => write!(f, "{}", p.display()),
        }
    }
}

/// Resolves `--policy NAME|FILE`: a path (anything with a `/` or a `.yaml`/`.yml` ending, or
/// an existing file) is loaded; otherwise a built-in name; otherwise
/// `/etc/iopscheck/policies/NAME.yaml`.
pub fn resolve(spec: &str) -> Result<Loaded, PolicyError> {
    resolve_in(spec, Path::new(SYSTEM_POLICY_DIR))
}

pub fn resolve_in(spec: &str, system_dir: &Path) -> Result<Loaded, PolicyError> {
    let looks_like_path = spec.contains('/') || spec.ends_with(".yaml") || spec.ends_with(".yml");
    if looks_like_path || (Path::new(spec).is_file() && builtin_yaml(spec).is_none()) {
        return load_file(Path::new(spec));
    }
    if let Some(yaml) = builtin_yaml(spec) {
        let policy = parse(yaml, &format!("<built-in {spec}>"))?;
        return Ok(Loaded {
            policy,
            origin: Origin::BuiltIn,
            yaml: yaml.to_string(),
        });
    }
    for ext in ["yaml", "yml"] {
        let p = system_dir.join(format!("{spec}.{ext}"));
        // Whatever is there is read as any policy file is (a FIFO refused, not skipped).
        if std::fs::symlink_metadata(&p).is_ok() {
            return load_file(&p);
        }
    }
    let names = names(system_dir);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let hint = crate::suggest::closest(spec, &names)
        .map(|n| format!(" (did you mean '{n}'?)"))
        .unwrap_or_default();
    Err(PolicyError::UnknownName(spec.to_string(), hint))
}

/// Loads a policy file: a regular file only (a FIFO would block the read for ever, a device
/// be read whole), looked at before it is opened and again on the descriptor, opened
/// O_NONBLOCK so that a FIFO put there meanwhile cannot hang it, and at most
/// [`MAX_POLICY_BYTES`] read. As root the policy decides a verdict no other user may turn, so
/// its path is judged by the history's rule ([`crate::trust`]): the file and every directory
/// and link on the way owned by root and writable by nobody else.
pub fn load_file(path: &Path) -> Result<Loaded, PolicyError> {
    let shown = path.display().to_string();
    let io = |source| PolicyError::Io {
        path: shown.clone(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    refuse_unless_regular(&meta, &shown)?;
    if meta.len() > MAX_POLICY_BYTES as u64 {
        return Err(PolicyError::TooLarge { path: shown });
    }
    crate::trust::check_read(path).map_err(|u| PolicyError::Untrusted {
        path: shown.clone(),
        why: u.to_string(),
    })?;
    let bytes = read_regular(path, &shown)?;
    let yaml = String::from_utf8(bytes).map_err(|_| PolicyError::Invalid {
        path: shown.clone(),
        msg: "not UTF-8 text; a policy is a YAML file".into(),
    })?;
    let policy = parse(&yaml, &shown).map_err(|e| without_content(e, path, &yaml))?;
    Ok(Loaded {
        policy,
        origin: Origin::File(path.to_path_buf()),
        yaml,
    })
}

/// The bytes of the regular file at `path` (shown as `shown`), judged again on its descriptor
/// (what was looked at may have been replaced since): a regular file, and as root one nobody
/// else can write.
fn read_regular(path: &Path, shown: &str) -> Result<Vec<u8>, PolicyError> {
    use std::io::Read as _;
    use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
    let io = |source| PolicyError::Io {
        path: shown.to_string(),
        source,
    };
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
        .map_err(io)?;
    let m = f.metadata().map_err(io)?;
    refuse_unless_regular(&m, shown)?;
    let others_write = m.mode() & 0o002 != 0 || (m.mode() & 0o020 != 0 && m.gid() != 0);
    if crate::syscalls::is_root() && (m.uid() != 0 || others_write) {
        return Err(PolicyError::Unsafe {
            path: shown.to_string(),
            mode: m.mode() & 0o7777,
        });
    }
    let mut bytes = Vec::new();
    f.take(MAX_POLICY_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() > MAX_POLICY_BYTES {
        return Err(PolicyError::TooLarge {
            path: shown.to_string(),
        });
    }
    Ok(bytes)
}

/// A policy is a regular file; anything else is refused, saying what it is.
fn refuse_unless_regular(m: &std::fs::Metadata, path: &str) -> Result<(), PolicyError> {
    if m.is_file() {
        return Ok(());
    }
    let kind = crate::syscalls::file_kind(m);
    Err(PolicyError::NotRegular {
        path: path.to_string(),
        kind,
    })
}

/// The top-level keys of a policy document.
const POLICY_KEYS: [&str; 10] = [
    "name",
    "description",
    "vendor",
    "source",
    "job",
    "runs",
    "rules",
    "evidence",
    "sustained",
    "fleet",
];

/// An error about a file's content quotes that content (a key, a value) only where the file is
/// a policy document and one the user could read anyway: a regular file, not reached through a
/// symbolic link, owned by the user (who ran sudo, under sudo) or readable by their group or
/// by everyone ([`crate::trust::readable_by`]). Otherwise (`policy check` on a link to
/// /etc/shadow, as root) the error says where and why, without the content.
fn without_content(e: PolicyError, path: &Path, yaml: &str) -> PolicyError {
    let shown = path.display().to_string();
    let is_policy_document = yaml.lines().any(|l| {
        l.split_once(':')
            .is_some_and(|(k, _)| POLICY_KEYS.contains(&k) && !k.starts_with(' '))
    });
    if !is_policy_document {
        return match e {
            PolicyError::Syntax { .. } | PolicyError::Invalid { .. } => PolicyError::Invalid {
                path: shown,
                msg: format!(
                    "not a policy document: it has none of a policy's top-level keys ({}); its content is not shown",
                    POLICY_KEYS.join(", ")
                ),
            },
            other => other,
        };
    }
    // The rule `bundle FILE` packs a file by (crate::trust), and not through a link at all.
    let why = if !std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file()) {
        "its content is not shown, as the file is a symbolic link".to_string()
    } else {
        match crate::trust::readable_by(path, crate::trust::invoker()) {
            Ok(()) => return e,
            Err(u) => format!("its content is not shown, as {u}"),
        }
    };
    match e {
        PolicyError::Syntax {
            path, line, column, ..
        } => PolicyError::Syntax {
            path,
            line,
            column,
            msg: format!("does not parse as a policy here; {why}"),
        },
        PolicyError::Invalid { path, .. } => PolicyError::Invalid {
            path,
            msg: format!("not a valid policy; {why}"),
        },
        other => other,
    }
}

/// Parses and checks a policy. The only place YAML is read.
pub fn parse(yaml: &str, path: &str) -> Result<Policy, PolicyError> {
    if yaml.len() > MAX_POLICY_BYTES {
        return Err(PolicyError::TooLarge { path: path.into() });
    }
    let mut budget = serde_saphyr::Budget::default();
    // A policy has a few dozen keys; these bounds stop alias bombs and deep nesting early.
    budget.max_events = 20_000;
    budget.max_aliases = 100;
    budget.max_anchors = 100;
    budget.max_depth = 32;
    budget.max_nodes = 10_000;
    budget.max_total_scalar_bytes = MAX_POLICY_BYTES;
    budget.max_recorded_anchor_events = 10_000;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    let policy: Policy = serde_saphyr::from_str_with_options(yaml, options).map_err(|e| {
        let (line, column) = e
            .location()
            .map(|l| (l.line(), l.column()))
            .unwrap_or((0, 0));
        let mut msg = clean_message(&e.to_string());
        if let Some(key) = key_path_at(yaml, line as usize)
            && !msg.starts_with("missing field")
        {
            // An unknown key is reported at the key itself: name the mapping it is in.
            let key = if msg.starts_with("unknown field") {
                key.rsplit_once('.').map(|(p, _)| p.to_string())
            } else {
                Some(key)
            };
            if let Some(k) = key {
                msg = format!("{k}: {msg}");
            }
        }
        if msg.ends_with("given twice")
            && let Some(first) = first_given(yaml, line as usize)
        {
            msg = format!("{msg} (lines {first} and {line})");
        }
        if line == 0 {
            PolicyError::Invalid {
                path: path.into(),
                msg,
            }
        } else {
            PolicyError::Syntax {
                path: path.into(),
                line,
                column,
                msg,
            }
        }
    })?;
    check(&policy).map_err(|msg| PolicyError::Invalid {
        path: path.into(),
        msg,
    })?;
    Ok(policy)
}

/// serde-saphyr appends its own location to messages; ours goes in front instead.
fn clean_message(msg: &str) -> String {
    let mut m = msg.lines().next().unwrap_or(msg).trim();
    m = m.strip_prefix("error: ").unwrap_or(m);
    // "line 38 column 5: …"
    if let Some(rest) = m.strip_prefix("line ")
        && let Some((_, after)) = rest.split_once(": ")
    {
        m = after;
    }
    let m = match m.rfind(" at line ") {
        Some(i) => &m[..i],
        None => m,
    };
    match m {
        "invalid u32" | "invalid u64" | "invalid u8" => "expected a whole number".to_string(),
        "invalid f64" => "expected a number".to_string(),
        "invalid boolean" => "expected true or false".to_string(),
        "externally tagged enum expected scalar or mapping" => {
            "expected a single value, not a list".to_string()
        }
        "expected string scalar" => "expected a single value, not a list or a mapping".to_string(),
        other => in_policy_words(other),
    }
}

/// The YAML library's and serde's words, in the policy's: what the key expected and what it
/// was given ("expected a whole number, not a list"), never "untagged enum", "Options" or the
/// parser's own "policy" (which is no policy of ours).
fn in_policy_words(m: &str) -> String {
    // "invalid type: sequence, expected u32", "invalid value: integer `-1`, expected u8"
    for head in ["invalid type: ", "invalid value: "] {
        if let Some((given, wanted)) = m
            .strip_prefix(head)
            .and_then(|r| r.split_once(", expected "))
        {
            let wanted = match wanted {
                "u8" | "u32" | "u64" | "usize" => "a whole number",
                "i64" | "i32" => "a whole number",
                "f64" | "f32" => "a number",
                "a boolean" | "bool" => "true or false",
                "a string" | "string" => "text",
                w => w,
            };
            return format!("expected {wanted}, not {}", given_words(given));
        }
    }
    if m.starts_with("duplicate mapping key") {
        return "given twice".into();
    }
    if let Some(rest) = m.strip_prefix("non-finite float ") {
        let v = rest.split('`').nth(1).unwrap_or("");
        return format!("must be a finite number, not {v}");
    }
    if m.starts_with("data did not match any variant of untagged enum") {
        return "not a value this key takes".into();
    }
    m.to_string()
}

/// serde's name of a value given ("sequence", "floating point `4.5`", "string \"x\"") in
/// the words of YAML's author: "a list", "4.5", "\"x\"".
fn given_words(g: &str) -> String {
    match g {
        "sequence" => return "a list".into(),
        "map" => return "a mapping".into(),
        "unit value" | "null" => return "nothing (null)".into(),
        _ => {}
    }
    match g.split_once('`') {
        Some((_, v)) => v.trim_end_matches('`').to_string(),
        None => match g.strip_prefix("string ") {
            Some(v) => v.to_string(),
            None => g.to_string(),
        },
    }
}

/// The line, before `line`, where the key `path` ends that is given again on `line`: within
/// the same mapping (the same indentation, and no line less indented between them).
fn first_given(yaml: &str, line: usize) -> Option<usize> {
    let lines: Vec<&str> = yaml.lines().collect();
    let idx = line.checked_sub(1)?;
    let (indent, key, item) = key_of(lines.get(idx)?)?;
    if item {
        return None;
    }
    for j in (0..idx).rev() {
        let Some((i, k, it)) = key_of(lines[j]) else {
            continue;
        };
        if i < indent {
            return None;
        }
        if i == indent && k == key {
            return Some(j + 1);
        }
        if i == indent && it {
            // The start of this list item: its mapping begins here.
            return None;
        }
    }
    None
}

/// The indentation of a mapping key on a line (the item's when the line starts a list item
/// with `- `), the key, and whether the line starts a list item.
fn key_of(l: &str) -> Option<(usize, String, bool)> {
    let indent = l.len() - l.trim_start().len();
    let t = l.trim_start();
    let (item, t) = match t.strip_prefix("- ") {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    if t.starts_with('#') {
        return None;
    }
    let (k, _) = t.split_once(':')?;
    let k = k.trim();
    (!k.is_empty() && !k.contains(' '))
        .then(|| (indent + if item { 2 } else { 0 }, k.to_string(), item))
}

/// The dotted key path of the mapping key on a 1-based line ("job.numjobs", "rules[0].op",
/// the list item counted from 0), found from indentation: enough to tell a policy author
/// which key is wrong.
fn key_path_at(yaml: &str, line: usize) -> Option<String> {
    let lines: Vec<&str> = yaml.lines().collect();
    let idx = line.checked_sub(1)?;
    let (mut indent, key, mut item) = key_of(lines.get(idx)?)?;
    let mut path = vec![key];
    for j in (0..idx).rev() {
        if let Some((i, k, it)) = key_of(lines[j]) {
            if i < indent {
                let k = if item {
                    // The items of this list up to the line: those starting at this level.
                    let n = lines[j + 1..=idx]
                        .iter()
                        .filter_map(|l| key_of(l))
                        .filter(|(ii, _, iit)| *iit && *ii == indent)
                        .count();
                    format!("{k}[{}]", n.saturating_sub(1))
                } else {
                    k
                };
                path.push(k);
                indent = i;
                item = it;
            } else if i == indent && it && !item {
                item = true;
            }
        }
        if indent == 0 {
            break;
        }
    }
    path.reverse();
    let mut msg = path.join(".");
    msg = msg.replace(".[", "[");
    Some(msg)
}

/// Every policy name `--policy` accepts: the built-in ones, then the local ones in `dir`.
pub fn names(dir: &std::path::Path) -> Vec<String> {
    let mut out: Vec<String> = super::BUILTIN.iter().map(|(n, _)| n.to_string()).collect();
    if let Ok(entries) = std::fs::read_dir(dir) {
        let mut local: Vec<String> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")))
            .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .filter(|n| !out.contains(n))
            .collect();
        local.sort();
        local.dedup();
        out.extend(local);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{BUILTIN, Level};

    #[test]
    fn every_builtin_policy_parses_and_checks() {
        for (name, yaml) in BUILTIN {
            let p = parse(yaml, name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(&p.name, name);
        }
    }

    #[test]
    fn swimlane_holds_the_articles_job_and_rules() {
        let p = resolve("swimlane").unwrap().policy;
        assert_eq!(p.job.bs.0, 4096);
        assert_eq!(p.job.size.0, 4 << 30);
        assert_eq!(p.job.runtime.0.as_secs(), 60);
        assert_eq!(p.job.ioengine.as_str(), "posixaio");
        assert!(p.job.end_fsync && p.job.time_based);
        assert_eq!(p.runs, 3);
        let deciding: Vec<_> = p.deciding_rules().collect();
        assert_eq!(deciding.len(), 1);
        assert_eq!(deciding[0].metric, "write_iops_formula");
        assert_eq!(deciding[0].threshold, 3000.0);
        let bw = p
            .rules
            .iter()
            .find(|r| r.metric == "write_bw_mb_s")
            .unwrap();
        assert_eq!((bw.threshold, bw.level), (11.7, Level::Info));
    }

    #[test]
    fn unknown_keys_are_located_errors() {
        let yaml = builtin_yaml("swimlane")
            .unwrap()
            .replace("iodepth: 1", "iodepht: 1");
        let e = parse(&yaml, "p.yaml").unwrap_err().to_string();
        assert!(e.starts_with("p.yaml:"), "{e}");
        assert!(e.contains("iodepht"), "{e}");
        assert!(matches!(
            parse(&yaml, "p.yaml"),
            Err(PolicyError::Syntax { line, .. }) if line > 1
        ));
    }

    #[test]
    fn a_wrong_type_names_the_key_path() {
        let yaml = builtin_yaml("swimlane")
            .unwrap()
            .replace("numjobs: 1", "numjobs: many");
        let e = parse(&yaml, "p.yaml").unwrap_err().to_string();
        assert!(e.contains("job.numjobs: expected a whole number"), "{e}");
        let yaml = builtin_yaml("swimlane")
            .unwrap()
            .replacen("op: \">=\"", "op: \"=>\"", 1);
        let e = parse(&yaml, "p.yaml").unwrap_err().to_string();
        assert!(
            e.contains("rules[0].op:") && e.contains("expected one of"),
            "{e}"
        );
    }

    #[test]
    fn a_bad_size_names_the_value() {
        let yaml = builtin_yaml("swimlane")
            .unwrap()
            .replace("size: 4g", "size: 4q");
        let e = parse(&yaml, "p.yaml").unwrap_err().to_string();
        assert!(e.contains("4q"), "{e}");
    }

    #[test]
    fn an_unknown_metric_is_named() {
        let yaml = builtin_yaml("swimlane")
            .unwrap()
            .replace("metric: write_iops_formula", "metric: write_ipos");
        let e = parse(&yaml, "p.yaml").unwrap_err().to_string();
        assert!(
            e.starts_with("p.yaml:44:")
                && e.contains("rules[0].metric: unknown metric 'write_ipos'"),
            "{e}"
        );
    }

    #[test]
    fn a_yaml_alias_bomb_is_refused_quickly() {
        let mut y = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            let p = i - 1;
            y.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        let t = std::time::Instant::now();
        assert!(parse(&y, "bomb.yaml").is_err());
        assert!(t.elapsed().as_secs() < 5);
    }

    #[test]
    #[cfg_attr(not(have_root), ignore = "needs root (the rule applies to root)")]
    fn as_root_a_policy_file_others_can_write_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("open.yaml");
        std::fs::write(&p, builtin_yaml("swimlane").unwrap()).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(matches!(load_file(&p), Err(PolicyError::Untrusted { .. })));
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(load_file(&p).is_ok());
        // a directory anyone can write is refused too, unless sticky like /tmp
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(matches!(load_file(&p), Err(PolicyError::Untrusted { .. })));
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert!(load_file(&p).is_ok());
    }

    #[test]
    fn names_resolve_in_the_system_dir_after_builtins() {
        let dir = tempfile::tempdir().unwrap();
        let yaml = builtin_yaml("swimlane")
            .unwrap()
            .replace("name: swimlane", "name: local");
        std::fs::write(dir.path().join("local.yaml"), yaml).unwrap();
        let l = resolve_in("local", dir.path()).unwrap();
        assert_eq!(l.policy.name, "local");
        assert!(matches!(
            resolve_in("nope", dir.path()),
            Err(PolicyError::UnknownName(..))
        ));
        assert_eq!(
            resolve_in("swimlane", dir.path()).unwrap().origin,
            Origin::BuiltIn
        );
    }

    #[test]
    fn a_local_policy_that_is_not_a_regular_file_is_refused_not_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("piped.yaml");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid C string; mkfifo has no other preconditions.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let e = resolve_in("piped", dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("piped.yaml: is a named pipe (FIFO), not a policy file"),
            "{e}"
        );
    }

    #[test]
    fn policy_names_are_the_built_in_then_the_local_ones() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ours.yaml"), "x").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
        let names = names(dir.path());
        assert_eq!(names[0], "swimlane");
        assert_eq!(names.last().map(String::as_str), Some("ours"));
        assert!(!names.iter().any(|n| n == "notes"));
    }
}
