//! `iopscheck bundle`: one .tar.gz for support. It holds this host's history lines verbatim,
//! the policy, the report over the window as JSON and HTML, the host's and the target's
//! context and the tool's version, so a support engineer can run `iopscheck report` on it
//! elsewhere and see what the node saw. Nothing secret goes in: no environment, no other
//! hosts' records. The bundle is never written over an existing file, and never half-written.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use chrono::{DateTime, FixedOffset, Local, Utc};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::app::{Ctx, VERSION, exit, usage};
use crate::cli::BundleArgs;
use crate::evaluate::{self, Evaluation, Options, Scope};
use crate::history;
use crate::policy;
use crate::report::{self, Format, Style};
use crate::runs::Records;
use crate::select::{self, Filter, Grouping};
use crate::system;

/// Directories whose mounts and devices the context describes, at most.
const MAX_TARGETS: usize = 8;

pub fn run(args: BundleArgs, ctx: &Ctx) -> anyhow::Result<u8> {
    let loaded = policy::resolve(&args.policy)?;
    let now = Utc::now();
    let host = match &args.host {
        Some(h) => system::check_name(h)
            .map_err(|e| usage(format!("--host: {e}")))?
            .to_string(),
        None => system::host_from(None)
            .map_err(usage)?
            .unwrap_or_else(system::hostname),
    };
    let since = match &args.since {
        Some(s) => s.start(now),
        None => select::window_start(now, loaded.policy.evidence.window.0),
    };
    let stamp = now
        .with_timezone(&Local)
        .format("%Y%m%dT%H%M%S")
        .to_string();
    let base = format!("iopscheck-bundle-{}-{stamp}", safe_name(&host));
    let dest = match &args.output {
        Some(p) if p.as_os_str() == "-" => {
            if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
                return Err(usage(
                    "bundle: -o -: standard output is a terminal; redirect it to a file or a pipe",
                ));
            }
            None
        }
        Some(p) => Some(p.clone()),
        None => Some(PathBuf::from(format!("{base}.tar.gz"))),
    };
    if let Some(p) = &dest {
        check_destination(p)?;
    }

    // The raw fio outputs, read before anything is written: one that cannot be read is an
    // error naming it.
    let mut raw: Vec<(String, Vec<u8>)> = Vec::new();
    for p in &args.outputs {
        let shown = p.display();
        let meta = std::fs::metadata(p).map_err(|e| usage(format!("bundle: {shown}: {e}")))?;
        if !meta.is_file() {
            return Err(usage(format!("bundle: {shown}: not a regular file")));
        }
        if meta.len() > crate::fio::MAX_INPUT as u64 {
            return Err(usage(format!(
                "bundle: {shown}: larger than {} bytes; fio outputs are far smaller",
                crate::fio::MAX_INPUT
            )));
        }
        let bytes = std::fs::read(p).map_err(|e| usage(format!("bundle: {shown}: {e}")))?;
        let base = p
            .file_name()
            .map(|n| safe_name(&n.to_string_lossy()))
            .unwrap_or_else(|| "output".into());
        let mut name = format!("fio/{base}");
        let mut k = 1;
        while raw.iter().any(|(n, _)| *n == name) {
            k += 1;
            name = format!("fio/{k}-{base}");
        }
        raw.push((name, bytes));
    }

    let history_path = crate::app::history_path(&args.history.history);
    history::check_for_reading(&history_path)?;
    let dir = args.dir.as_ref().map(|d| {
        std::fs::canonicalize(d)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| d.display().to_string())
    });
    let filter = Filter {
        host: Some(host.clone()),
        dir: dir.clone(),
        engine: None,
        policy: loaded.policy.name.clone(),
        since,
    };
    // The history is streamed: this host's lines go to an unnamed temporary file (the tar's
    // member, copied in after), and only the window's records of the policy are parsed in full.
    let cannot_read = |e: std::io::Error| {
        anyhow::Error::new(e).context(format!("history {}: cannot read", history_path.display()))
    };
    // An unnamed temporary file (O_TMPFILE), or a named one removed at once where the
    // temporary directory's filesystem has none: gone when the process ends, whatever happens.
    let mut spool = tempfile::tempfile()
        .map_err(|e| anyhow::Error::new(e).context("bundle: temporary file"))?;
    // In the same pass, of each run in the window, what judging needs; the reports' whole
    // records are read again from the spool by their offsets (lines are numbered as the
    // spool's, as the bundle's history.jsonl has them).
    let mut grouping = Grouping::new(&filter);
    let mut window_runs = 0;
    let mut scanner = history::RunScanner::new(
        &history_path,
        history::MAX_LINE,
        Some(since),
        |h: &history::RecordHead| filter.keeps_head(h),
        |r| {
            window_runs += 1;
            grouping.add(r)
        },
    );
    let kept = match history::open_for_reading(&history_path)? {
        Some(f) => keep_host_lines(
            std::io::BufReader::with_capacity(1 << 16, f),
            &host,
            &mut std::io::BufWriter::new(&mut spool),
            |n, offset, line| scanner.line(n, offset, history::Line::Text(line)),
        )
        .map_err(cannot_read)?,
        None => Kept::default(),
    };
    let skipped = scanner.finish();
    spool.seek(SeekFrom::Start(0)).map_err(cannot_read)?;
    let records = Records::file(spool.try_clone().map_err(cannot_read)?, &history_path);
    let mut evs = grouping.evaluate(&loaded.policy, now, false);
    // The group of the latest run first: that is the one the node's schedule feeds.
    evs.sort_by_key(|e| std::cmp::Reverse(e.runs.iter().map(|r| r.timestamp).max()));
    if evs.is_empty() {
        let mut opts = Options::new(Scope::Report, now);
        opts.no_runs = Some(format!(
            "no runs of policy {} on host {host}{} in {} since {}",
            loaded.policy.name,
            dir.as_ref().map(|d| format!(" in {d}")).unwrap_or_default(),
            history_path.display(),
            since.with_timezone(&Local).format("%Y-%m-%d %H:%M")
        ));
        evs.push(evaluate::evaluate(&[], &loaded.policy, &opts));
    }

    let targets: Vec<String> = match &dir {
        Some(d) => vec![d.clone()],
        None => target_dirs(&kept.dirs),
    };
    let context = context(
        &host,
        &targets,
        &history_path,
        &kept,
        &skipped,
        &loaded,
        now,
    );

    let mut members: Vec<(String, Member)> = Vec::new();
    members.push((
        "README.txt".into(),
        readme(
            &host,
            &base,
            &history_path,
            &kept,
            &evs,
            &loaded,
            since,
            now,
        )
        .into_bytes()
        .into(),
    ));
    members.push(("history.jsonl".into(), Member::File(&spool, kept.bytes)));
    members.push((
        "policy.yaml".into(),
        loaded.yaml.clone().into_bytes().into(),
    ));
    for (name, bytes) in raw {
        members.push((name, bytes.into()));
    }
    for (i, ev) in evs.iter().enumerate() {
        let name = if i == 0 {
            "report".to_string()
        } else {
            format!("reports/{}", group_slug(i, ev))
        };
        members.push((
            format!("{name}.json"),
            rendered(Format::Json, ev, &records)?,
        ));
        members.push((
            format!("{name}.html"),
            rendered(Format::Html, ev, &records)?,
        ));
    }
    members.push((
        "context.json".into(),
        serde_json::to_vec_pretty(&context)?
            .into_iter()
            .chain(*b"\n")
            .collect::<Vec<u8>>()
            .into(),
    ));
    members.push((
        "version.txt".into(),
        format!(
            "iopscheck {VERSION}\n{}-{}\n",
            std::env::consts::ARCH,
            std::env::consts::OS
        )
        .into_bytes()
        .into(),
    ));

    // The manifest, last: every member's SHA-256, the history's lines and their chain.
    let manifest = manifest(&host, now, &members)
        .map_err(|e| anyhow::Error::new(e).context("bundle: reading the history back"))?;
    members.push((
        crate::evidence::MANIFEST.into(),
        serde_json::to_vec_pretty(&manifest)?
            .into_iter()
            .chain(*b"\n")
            .collect::<Vec<u8>>()
            .into(),
    ));

    let mut size = 0u64;
    match &dest {
        None => {
            // Not through out::stdout: a bundle cut short is no bundle, and says so (exit 2).
            let mut out = Counted(std::io::stdout().lock(), 0);
            archive(&base, &mut members, now, &mut out)
                .and_then(|()| out.flush())
                .map_err(|e| {
                    anyhow::anyhow!(
                        "bundle -o -: the bundle could not be written to stdout ({e}); what was written is incomplete and unusable"
                    )
                })?;
            size = out.1;
        }
        Some(p) => {
            publish(p, |f| {
                let mut out = Counted(std::io::BufWriter::with_capacity(1 << 16, f), 0);
                archive(&base, &mut members, now, &mut out)?;
                out.flush()?;
                size = out.1;
                Ok(())
            })
            .map_err(|e| match e {
                Published::Exists => usage(format!(
                    "bundle: {} already exists; remove it or choose another name with -o",
                    p.display()
                )),
                Published::Io(e) => {
                    anyhow::Error::new(e).context(format!("bundle: cannot write {}", p.display()))
                }
            })?;
            writeln!(crate::out::stdout(), "{}", p.display())?;
        }
    }
    ctx.note(format!(
        "bundle{}: {} run{} of {host} in the window ({} of the history's lines), policy {}, verdict {}, {} KiB",
        dest.as_ref()
            .map(|p| format!(" {}", p.display()))
            .unwrap_or_default(),
        window_runs,
        if window_runs == 1 { "" } else { "s" },
        kept.kept,
        loaded.policy.name,
        evs[0].verdict,
        size.div_ceil(1024)
    ));
    Ok(exit::PASS)
}

/// The bundle's manifest of `members` (the history read back from its spool).
fn manifest(
    host: &str,
    now: DateTime<Utc>,
    members: &[(String, Member<'_>)],
) -> std::io::Result<crate::evidence::Manifest> {
    use crate::evidence::{FileEntry, HistoryDigest, Manifest, sha256_hex};
    use std::io::{BufRead, Read};
    let mut files = BTreeMap::new();
    let mut history = None;
    for (name, m) in members {
        match m {
            Member::Bytes(b) => {
                files.insert(
                    name.clone(),
                    FileEntry {
                        sha256: sha256_hex(b),
                        bytes: b.len() as u64,
                    },
                );
            }
            // a report rendered to a spool file
            Member::Spooled(f, n) => {
                let mut f: &std::fs::File = f;
                f.seek(SeekFrom::Start(0))?;
                let mut h = crate::evidence::Sha256Writer::default();
                std::io::copy(&mut f.take(*n), &mut h)?;
                files.insert(
                    name.clone(),
                    FileEntry {
                        sha256: h.finish(),
                        bytes: *n,
                    },
                );
            }
            // the history
            Member::File(f, n) => {
                let mut f: &std::fs::File = f;
                f.seek(SeekFrom::Start(0))?;
                let mut r = std::io::BufReader::with_capacity(1 << 16, f.take(*n));
                let mut d = HistoryDigest::new();
                let mut line = Vec::new();
                while r.read_until(b'\n', &mut line)? > 0 {
                    d.line(&line);
                    line.clear();
                }
                let (file, h) = d.finish();
                files.insert(name.clone(), file);
                history = Some(h);
            }
        }
    }
    Ok(Manifest {
        schema_version: 1,
        tool: json!({ "name": "iopscheck", "version": VERSION }),
        generated: now.to_rfc3339(),
        host: host.to_string(),
        files,
        history: history.unwrap_or_else(|| HistoryDigest::new().finish().1),
    })
}

/// The host name as it may appear in a file name.
fn safe_name(s: &str) -> String {
    let s: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let s = s.trim_start_matches('.');
    if s.is_empty() {
        return "host".into();
    }
    if s.len() <= NAME_MAX {
        return s.into();
    }
    // Too long for a file name (255 bytes with the rest of it): the start of the name, and a
    // digest of the whole that keeps two long names apart.
    let mut h: u32 = 0x811c_9dc5;
    for b in s.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("{}-{h:08x}", &s[..NAME_MAX - 9])
}

/// The longest a name from the input (a host, a directory) gets in a file name of the bundle.
const NAME_MAX: usize = 64;

fn group_slug(i: usize, ev: &Evaluation) -> String {
    match &ev.group {
        Some(g) => format!("{}-{}-{}", i + 1, g.engine, safe_name(&g.dir)),
        None => format!("{}", i + 1),
    }
}

fn check_destination(p: &Path) -> anyhow::Result<()> {
    if std::fs::symlink_metadata(p).is_ok() {
        return Err(usage(format!(
            "bundle: {} already exists; remove it or choose another name with -o",
            p.display()
        )));
    }
    if let Some(dir) = crate::app::missing_dir(p) {
        return Err(usage(format!(
            "bundle: -o {}: directory {} does not exist",
            p.display(),
            dir.display()
        )));
    }
    Ok(())
}

/// This host's lines of the history, byte for byte; the others are left out and counted.
#[derive(Debug, Default)]
pub struct Kept {
    /// Bytes of the kept lines, newlines included.
    pub bytes: u64,
    pub kept: usize,
    /// Records of other hosts (imported for them with `import --record --host`).
    pub other_hosts: usize,
    /// Lines that are not JSON with a host, so whose they are cannot be told.
    pub unreadable: usize,
    /// Each directory this host's lines tested, with its latest run.
    pub dirs: BTreeMap<String, DateTime<FixedOffset>>,
}

/// The part of a line that says whose it is and where it tested.
#[derive(Deserialize)]
struct Owner<'a> {
    #[serde(borrow)]
    host: std::borrow::Cow<'a, str>,
    #[serde(default)]
    timestamp: Loose,
    #[serde(default)]
    target: Loose,
}

/// Any JSON value, of which only a string's text or an object's `dir` string is kept: what
/// `serde_json::Value` would give through `as_str` and `get("dir")`, without building the
/// value (a history of a million lines is read through this).
#[derive(Default)]
struct Loose {
    text: Option<String>,
    dir: Option<String>,
}

impl<'de> Deserialize<'de> for Loose {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Loose, D::Error> {
        use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Loose;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any value")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Loose, E> {
                Ok(Loose {
                    text: Some(v.to_string()),
                    dir: None,
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Loose, A::Error> {
                let mut dir = None;
                while let Some(k) = m.next_key::<std::borrow::Cow<'de, str>>()? {
                    if k == "dir" {
                        dir = m.next_value::<Loose>()?.text;
                    } else {
                        m.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(Loose { text: None, dir })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Loose, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Loose::default())
            }
            fn visit_bool<E>(self, _: bool) -> Result<Loose, E> {
                Ok(Loose::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<Loose, E> {
                Ok(Loose::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<Loose, E> {
                Ok(Loose::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<Loose, E> {
                Ok(Loose::default())
            }
            fn visit_unit<E>(self) -> Result<Loose, E> {
                Ok(Loose::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// Copies this host's lines from `history` to `out`, one line at a time (a line longer than
/// the history's limit is left out as unreadable), and counts the rest. Each kept line is
/// also given to `each` with its number and byte offset in `out`.
pub fn keep_host_lines(
    history: impl std::io::BufRead,
    host: &str,
    out: &mut impl Write,
    mut each: impl FnMut(usize, u64, &[u8]),
) -> std::io::Result<Kept> {
    let mut k = Kept::default();
    let mut failed = None;
    history::for_each_line(history, history::MAX_LINE, |_, line| {
        let history::Line::Text(line) = line else {
            k.unreadable += 1;
            return;
        };
        if line.iter().all(|b| b.is_ascii_whitespace()) || failed.is_some() {
            return;
        }
        match serde_json::from_slice::<Owner>(line) {
            Ok(o) if o.host == host => {
                if let Err(e) = out.write_all(line).and_then(|()| out.write_all(b"\n")) {
                    failed = Some(e);
                    return;
                }
                each(k.kept + 1, k.bytes, line);
                k.bytes += line.len() as u64 + 1;
                k.kept += 1;
                if let (Some(dir), Some(t)) = (
                    o.target.dir,
                    o.timestamp
                        .text
                        .and_then(|t| DateTime::parse_from_rfc3339(&t).ok()),
                ) {
                    match k.dirs.get_mut(&dir) {
                        Some(latest) => *latest = (*latest).max(t),
                        None => {
                            k.dirs.insert(dir, t);
                        }
                    }
                }
            }
            Ok(_) => k.other_hosts += 1,
            Err(_) => k.unreadable += 1,
        }
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    out.flush()?;
    Ok(k)
}

/// The directories this host's runs tested, latest first.
fn target_dirs(dirs: &BTreeMap<String, DateTime<FixedOffset>>) -> Vec<String> {
    let mut by_time: Vec<(&String, &DateTime<FixedOffset>)> = dirs.iter().collect();
    by_time.sort_by_key(|(_, t)| std::cmp::Reverse(**t));
    let mut dirs: Vec<String> = by_time
        .into_iter()
        .take(MAX_TARGETS)
        .map(|(d, _)| d.clone())
        .collect();
    if dirs.is_empty() {
        dirs.push(
            std::fs::canonicalize(".")
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| ".".into()),
        );
    }
    dirs
}

/// A member of the bundle: bytes made here, or a spooled file (the history, a report) copied
/// in as it is read.
enum Member<'a> {
    Bytes(Vec<u8>),
    File(&'a std::fs::File, u64),
    /// A report rendered to an unnamed temporary file: a report lists every run of the window
    /// (JSON's `runs[]` holds whole records), so it is never held in memory.
    Spooled(std::fs::File, u64),
}

impl From<Vec<u8>> for Member<'_> {
    fn from(b: Vec<u8>) -> Self {
        Member::Bytes(b)
    }
}

/// A writer that counts what passes through it.
struct Counted<W: Write>(W, u64);

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.0.write(buf)?;
        self.1 += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// `ev` rendered in format `f` to an unnamed temporary file, as a member.
fn rendered(f: Format, ev: &Evaluation, records: &Records) -> anyhow::Result<Member<'static>> {
    let file = tempfile::tempfile()
        .map_err(|e| anyhow::Error::new(e).context("bundle: temporary file"))?;
    let mut out = Counted(std::io::BufWriter::with_capacity(1 << 16, &file), 0);
    report::render(f, ev, records, &Style::default(), &mut out)?;
    out.flush()?;
    let size = out.1;
    drop(out);
    Ok(Member::Spooled(file, size))
}

/// Keys of /etc/os-release worth a support engineer's time; the rest (URLs, codenames for
/// other tools) is left out.
const OS_RELEASE_KEYS: [&str; 6] = [
    "NAME",
    "VERSION",
    "ID",
    "ID_LIKE",
    "VERSION_ID",
    "PRETTY_NAME",
];

fn os_release() -> Value {
    let text = std::fs::read_to_string("/etc/os-release")
        .or_else(|_| std::fs::read_to_string("/usr/lib/os-release"))
        .unwrap_or_default();
    let mut m = serde_json::Map::new();
    for line in text.lines() {
        if let Some((k, v)) = line.split_once('=')
            && OS_RELEASE_KEYS.contains(&k.trim())
        {
            let v = v.trim().trim_matches('"').trim_matches('\'');
            m.insert(k.trim().to_ascii_lowercase(), Value::from(v));
        }
    }
    Value::Object(m)
}

/// CPU model and the number of logical CPUs, from /proc/cpuinfo.
fn cpu() -> Value {
    let text = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = text
        .lines()
        .find(|l| l.starts_with("model name") || l.starts_with("Model") || l.starts_with("cpu\t"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string());
    let count = text.lines().filter(|l| l.starts_with("processor")).count();
    let count = if count > 0 {
        Some(count)
    } else {
        std::thread::available_parallelism().ok().map(|n| n.get())
    };
    json!({ "model": model, "count": count })
}

/// The mount, options and device under a directory: what decides its numbers.
fn target_context(dir: &str) -> Value {
    let path = Path::new(dir);
    let mount = system::mount_of(path);
    let device = mount
        .as_ref()
        .map(|m| system::device_of(m.dev))
        .unwrap_or_default();
    let space = system::fs_space(path).ok();
    json!({
        "dir": dir,
        "exists": path.is_dir(),
        "mount_point": mount.as_ref().map(|m| m.mount_point.display().to_string()),
        "filesystem": mount.as_ref().map(|m| m.fstype.clone()),
        "mount_source": mount.as_ref().map(|m| m.source.clone()),
        "mount_options": mount.as_ref().map(|m| m.options.clone()),
        "device": device.name,
        "model": device.model,
        "rotational": device.rotational,
        "scheduler": device.scheduler,
        "write_cache": device.write_cache,
        "free_bytes": space.map(|s| s.available),
        "read_only": space.map(|s| s.read_only),
    })
}

/// `fio --version`, if fio is installed (for `--engine fio`).
fn fio_version() -> Option<String> {
    let out = std::process::Command::new("fio")
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
}

fn context(
    host: &str,
    targets: &[String],
    history_path: &Path,
    kept: &Kept,
    skipped: &[history::Skipped],
    loaded: &policy::Loaded,
    now: DateTime<Utc>,
) -> Value {
    let history = json!({
        "path": history_path.display().to_string(),
        "lines_kept": kept.kept,
        "lines_of_other_hosts_left_out": kept.other_hosts,
        "unreadable_lines_left_out": kept.unreadable,
        "skipped": skipped.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
    });
    let policy = json!({ "name": loaded.policy.name, "origin": loaded.origin.to_string() });
    // The records are of another machine than this one: nothing of this machine is written
    // beside its name (its CPU, kernel or mounts would read as the records' own).
    if !is_this_machine(host) {
        return json!({
            "schema_version": 1,
            "tool": { "name": "iopscheck", "version": VERSION },
            "generated": now,
            "host": host,
            "system": format!(
                "not described: the records are of {host}, and this bundle was made on another machine; what each record states of its target is in history.jsonl"
            ),
            "history": history,
            "policy": policy,
        });
    }
    json!({
        "schema_version": 1,
        "tool": { "name": "iopscheck", "version": VERSION },
        "generated": now,
        "host": host,
        "os": os_release(),
        "kernel": system::kernel(),
        "arch": std::env::consts::ARCH,
        "cpu": cpu(),
        "memory_bytes": system::memory_bytes(),
        "targets": targets.iter().map(|d| target_context(d)).collect::<Vec<_>>(),
        "history": history,
        "policy": policy,
        "fio": fio_version(),
    })
}

/// Whether `host` names the machine this runs on (its host name, or the node
/// `IOPSCHECK_HOST` names).
fn is_this_machine(host: &str) -> bool {
    let named = system::host_from(None).ok().flatten();
    named.as_deref() == Some(host) || system::hostname() == host
}

#[allow(clippy::too_many_arguments)]
fn readme(
    host: &str,
    base: &str,
    history_path: &Path,
    kept: &Kept,
    evs: &[Evaluation],
    loaded: &policy::Loaded,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
) -> String {
    let ev = &evs[0];
    let mut reproduce = format!(
        "iopscheck report --history history.jsonl --policy policy.yaml --host {} --since {}",
        shell_word(host),
        since.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    );
    if let Some(g) = &ev.group {
        reproduce.push_str(&format!(
            " --dir {} --engine {}",
            shell_word(&g.dir),
            shell_word(&g.engine)
        ));
    }
    let mut left_out = String::new();
    if kept.other_hosts > 0 {
        left_out.push_str(&format!(
            "\n{} line(s) recording other hosts were left out: this bundle speaks for {host} only.",
            kept.other_hosts
        ));
    }
    if kept.unreadable > 0 {
        left_out.push_str(&format!(
            "\n{} line(s) that were not JSON records were left out (a torn write or another file's text).",
            kept.unreadable
        ));
    }
    if !left_out.is_empty() {
        left_out.push('\n');
    }
    let mut others = String::new();
    for (i, e) in evs.iter().enumerate().skip(1) {
        if let Some(g) = &e.group {
            others.push_str(&format!(
                "  reports/{}.json/.html  the same for {} with engine {}: {}\n",
                group_slug(i, e),
                g.dir,
                g.engine,
                e.verdict
            ));
        }
    }
    format!(
        "iopscheck support bundle for {host}
Made {made} by iopscheck {VERSION}.

Verdict: {verdict} — {reason}

Contents ({base}/):
  README.txt      this file
  history.jsonl   this host's lines of {history}, verbatim ({kept} line(s)): one JSON record per run
  policy.yaml     the policy the report judges by: {policy} ({origin})
  report.json     the report over the window (since {since_local}) in iopscheck's --format json
  report.html     the same as a self-contained page
{others}  context.json    OS, kernel, CPU, memory; each tested directory's mount, mount options and
                  device (model, rotational, I/O scheduler, write cache); the history's path
  version.txt     the iopscheck version and commit that made this bundle
  fio/            the fio outputs given to `iopscheck bundle`, byte for byte (if any)
  manifest.json   every other file's SHA-256, each history line's and their chain, the tool's
                  version and commit: `iopscheck verify` on the .tar.gz says what was altered
{left_out}
To judge the history again on another machine, from this directory:

  {reproduce}

(The window is given as a date, so the result does not move with the clock.) Every format is
there too: add --format table|json|csv|markdown|prometheus|junit|html.

The bundle holds no environment variables, no credentials and no other hosts' records.
",
        made = now.with_timezone(&Local).format("%Y-%m-%d %H:%M:%S %:z"),
        verdict = ev.verdict.as_str().to_uppercase(),
        reason = ev.reason,
        history = history_path.display(),
        kept = kept.kept,
        policy = loaded.policy.name,
        origin = loaded.origin,
        since_local = since.with_timezone(&Local).format("%Y-%m-%d %H:%M %:z"),
    )
}

/// A word as the shell reads it: quoted when it holds anything but plain characters.
fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '/' | ':' | '+'))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The members as a gzip-compressed tar under one top directory, owned by root, mode 0644,
/// written to `out` as they are made.
fn archive(
    base: &str,
    members: &mut [(String, Member<'_>)],
    now: DateTime<Utc>,
    out: &mut impl Write,
) -> std::io::Result<()> {
    // The fastest level: the history is most of a bundle, and deflating a ten-year history
    // (1.8 GB) at the default level took half of the bundle's time (8.5 s of 17 s); the fast
    // level takes under half of that, for a larger file (see bench/README.md, "A history of a million records").
    let gz = flate2::write::GzEncoder::new(out, flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    let mtime = now.timestamp().max(0) as u64;
    let mut dirs: BTreeSet<String> = BTreeSet::new();
    let mut add_dir = |tar: &mut tar::Builder<_>, path: &str| -> std::io::Result<()> {
        if dirs.insert(path.to_string()) {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(tar::EntryType::Directory);
            h.set_mode(0o755);
            h.set_size(0);
            h.set_mtime(mtime);
            h.set_uid(0);
            h.set_gid(0);
            // append_data: a path past the header's 100 bytes goes in a GNU long-name entry.
            tar.append_data(&mut h, format!("{path}/"), std::io::empty())?;
        }
        Ok(())
    };
    add_dir(&mut tar, base)?;
    for (name, data) in members.iter_mut() {
        if let Some((sub, _)) = name.rsplit_once('/') {
            add_dir(&mut tar, &format!("{base}/{sub}"))?;
        }
        let size = match data {
            Member::Bytes(b) => b.len() as u64,
            Member::File(_, n) | Member::Spooled(_, n) => *n,
        };
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Regular);
        h.set_mode(0o644);
        h.set_size(size);
        h.set_mtime(mtime);
        h.set_uid(0);
        h.set_gid(0);
        let path = format!("{base}/{name}");
        match data {
            Member::Bytes(b) => tar.append_data(&mut h, path, b.as_slice())?,
            // Exactly the bytes counted: a tar member shorter than its header is corrupt.
            Member::File(f, n) => {
                // from its start each time: publish may write the archive twice
                let mut f: &std::fs::File = f;
                f.seek(SeekFrom::Start(0))?;
                tar.append_data(&mut h, path, std::io::Read::take(f, *n))?
            }
            Member::Spooled(f, n) => {
                let mut f: &std::fs::File = f;
                f.seek(SeekFrom::Start(0))?;
                tar.append_data(&mut h, path, std::io::Read::take(f, *n))?
            }
        }
    }
    tar.into_inner()?.finish()?;
    Ok(())
}

enum Published {
    Exists,
    Io(std::io::Error),
}

/// Writes what `write` writes to `path` all at once or not at all, and never over an existing file: the
/// data goes to an unnamed temporary file (O_TMPFILE) that is linked in under its name when
/// complete, so an interruption leaves nothing behind (tempfile's `NamedTempFile` always has a
/// name, which a kill would leave behind, hence the linkat here). Where the filesystem has no
/// O_TMPFILE, a named temporary file is moved in without replacing anything
/// (`persist_noclobber`: renameat2's NOREPLACE, or a hard link).
fn publish(
    path: &Path,
    mut write: impl FnMut(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<(), Published> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;

    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let exists = |e: &std::io::Error| e.kind() == std::io::ErrorKind::AlreadyExists;

    if let Ok(mut f) = std::fs::OpenOptions::new()
        .write(true)
        .mode(0o644)
        .custom_flags(libc::O_TMPFILE)
        .open(dir)
    {
        write(&mut f).map_err(Published::Io)?;
        f.sync_all().map_err(Published::Io)?;
        let from = std::ffi::CString::new(format!("/proc/self/fd/{}", f.as_raw_fd()))
            .expect("no NUL in a number");
        let to = std::ffi::CString::new(path.as_os_str().as_bytes())
            .map_err(|e| Published::Io(std::io::Error::other(e)))?;
        // Stays unsafe here rather than in crate::sys: one call, part of this atomic publish.
        // SAFETY: both paths are NUL-terminated C strings that outlive the call.
        let rc = unsafe {
            libc::linkat(
                libc::AT_FDCWD,
                from.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            )
        };
        if rc == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if exists(&e) {
            return Err(Published::Exists);
        }
        // No /proc, say: fall back to a named temporary file.
    }
    publish_named(dir, path, write)
}

/// [`publish`] through a named temporary file in `dir`, moved in without replacing anything.
fn publish_named(
    dir: &Path,
    path: &Path,
    mut write: impl FnMut(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<(), Published> {
    use std::os::unix::fs::PermissionsExt;
    let exists = |e: &std::io::Error| e.kind() == std::io::ErrorKind::AlreadyExists;
    let name = path
        .file_name()
        .ok_or_else(|| Published::Io(std::io::Error::other("not a file name")))?;
    // Removed when dropped: an error before it is linked in leaves nothing behind.
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{}.", name.to_string_lossy()))
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(0o644))
        .tempfile_in(dir)
        .map_err(Published::Io)?;
    write(tmp.as_file_mut()).map_err(Published::Io)?;
    tmp.as_file().sync_all().map_err(Published::Io)?;
    match tmp.persist_noclobber(path) {
        Ok(_) => Ok(()),
        Err(e) if exists(&e.error) => Err(Published::Exists),
        // A filesystem without hard links: rename, having checked the name is free.
        Err(_) if std::fs::symlink_metadata(path).is_ok() => Err(Published::Exists),
        Err(e) => e
            .file
            .persist(path)
            .map(drop)
            .map_err(|e| Published::Io(e.error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_temporary_file_is_published_once_and_never_left_behind() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("b.tar.gz");
        assert!(publish_named(dir.path(), &p, |f| f.write_all(b"one")).is_ok());
        assert!(matches!(
            publish_named(dir.path(), &p, |f| f.write_all(b"two")),
            Err(Published::Exists)
        ));
        let failed = publish_named(dir.path(), &dir.path().join("c"), |_| {
            Err(std::io::Error::other("disk full"))
        });
        assert!(matches!(failed, Err(Published::Io(_))));
        assert_eq!(std::fs::read(&p).unwrap(), b"one");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["b.tar.gz"]);
    }

    #[test]
    fn only_this_hosts_lines_are_kept_verbatim() {
        let raw =
            b"{\"host\":\"a\",\"x\":1}\n{\"host\":\"b\"}\n\n{torn\n{\"host\":\"a\", \"y\" : 2}";
        let mut out = Vec::new();
        let mut seen = Vec::new();
        let k = keep_host_lines(&raw[..], "a", &mut out, |n, offset, line| {
            seen.push((n, offset, String::from_utf8(line.to_vec()).unwrap()))
        })
        .unwrap();
        // each kept line with its number and offset in what was written
        assert_eq!(
            seen,
            [
                (1, 0, "{\"host\":\"a\",\"x\":1}".to_string()),
                (2, 19, "{\"host\":\"a\", \"y\" : 2}".to_string())
            ]
        );
        assert_eq!(k.bytes, out.len() as u64);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"host\":\"a\",\"x\":1}\n{\"host\":\"a\", \"y\" : 2}\n"
        );
        assert_eq!((k.kept, k.other_hosts, k.unreadable), (2, 1, 1));
    }

    #[test]
    fn names_and_words_are_made_safe() {
        assert_eq!(safe_name("node-1.example.com"), "node-1.example.com");
        assert_eq!(safe_name("../x y"), "_x_y");
        assert_eq!(safe_name(""), "host");
        assert_eq!(shell_word("/data/x"), "/data/x");
        assert_eq!(shell_word("my dir's"), "'my dir'\\''s'");
    }

    #[test]
    fn publishing_never_replaces_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("b.tar.gz");
        publish(&p, |f| f.write_all(b"one")).ok().unwrap();
        assert!(matches!(
            publish(&p, |f| f.write_all(b"two")),
            Err(Published::Exists)
        ));
        assert_eq!(std::fs::read(&p).unwrap(), b"one");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file is left behind");
    }
}
