//! `iopscheck bundle`: one .tar.gz for support. It holds this host's history lines verbatim,
//! the policy, the report over the window as JSON and HTML, the host's and the target's
//! context and the tool's version, so a support engineer can run `iopscheck report` on it
//! elsewhere and see what the node saw. Nothing secret goes in: no environment, no other
//! hosts' records. The bundle is never written over an existing file, and never half-written.
//!
//! Here the command's steps; [`lines`] copies this host's history lines, [`context`] describes
//! the host and its targets, [`readme`] writes README.txt, [`archive`] the members, manifest
//! and tar, [`publish`] puts the file in place.

mod archive;
mod context;
mod lines;
mod publish;
mod readme;

use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Local, Utc};

use crate::config::bundle::{Destination, check_destination};
use crate::config::{BundleConfig, Ctx};
use crate::error::usage;
use crate::evaluate::{self, Evaluation, Options, Scope};
use crate::exit::Exit;
use crate::history;
use crate::policy;
use crate::run_index::Records;
use crate::select::{Filter, Grouping};
use crate::version::VERSION;

use crate::report::Format;
use archive::{Counted, Member, archive, manifest, rendered};
use lines::{Kept, keep_host_lines, target_dirs};
use publish::{Published, publish};
use readme::{group_slug, readme, safe_name};

pub fn run(cfg: BundleConfig, ctx: &Ctx) -> anyhow::Result<u8> {
    let BundleConfig {
        policy: loaded,
        now,
        host,
        since,
        output,
        sign,
        fio_outputs,
        history: history_path,
        dir,
    } = cfg;
    let stamp = now
        .with_timezone(&Local)
        .format("%Y%m%dT%H%M%S")
        .to_string();
    let base = format!("iopscheck-bundle-{}-{stamp}", safe_name(&host));
    let dest = match output {
        Destination::Stdout => None,
        Destination::File(p) => Some(p),
        Destination::Default => {
            let p = PathBuf::from(format!("{base}.tar.gz"));
            check_destination(&p)?;
            Some(p)
        }
    };
    // The raw fio outputs, read before anything is written: one that cannot be read is an
    // error naming it.
    let raw = read_outputs(&fio_outputs)?;
    history::check_for_reading(&history_path)?;
    // The signing key, read once every cheaper argument is checked and before anything is
    // written: one that cannot sign is an error.
    let signer = sign
        .map(|p| {
            crate::evidence::signing_key(&p)
                .map_err(|e| usage(format!("--sign {}: {e}", p.display())))
                .map(|k| (p, k))
        })
        .transpose()?;
    let filter = Filter {
        host: Some(host.clone()),
        dir: dir.clone(),
        engine: None,
        policy: loaded.policy.name.clone(),
        since,
    };
    let Scanned {
        spool,
        kept,
        skipped,
        records,
        mut evs,
        window_runs,
    } = scan(&history_path, &host, &filter, &loaded, now)?;
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
    let context = context::context(
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
    members.extend(reports(&evs, &records)?);
    members.push(("context.json".into(), json_member(&context)?));
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

    // The manifest, last: every member's SHA-256, the history's lines and their chain; then
    // its signature, which so covers every file.
    let signed = signed_manifest(&host, now, &members, &kept, signer.as_ref())?;
    members.extend(signed);

    let size = write_out(dest.as_deref(), &base, &mut members, now)?;
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
    Ok(Exit::Pass.code())
}

/// Each evaluation as JSON and HTML reports: report.* for the first (the latest run's
/// group), reports/N-ENGINE-DIR.* for the others.
fn reports(
    evs: &[Evaluation],
    records: &Records,
) -> anyhow::Result<Vec<(String, Member<'static>)>> {
    let mut members = Vec::new();
    for (i, ev) in evs.iter().enumerate() {
        let name = if i == 0 {
            "report".to_string()
        } else {
            format!("reports/{}", group_slug(i, ev))
        };
        members.push((format!("{name}.json"), rendered(Format::Json, ev, records)?));
        members.push((format!("{name}.html"), rendered(Format::Html, ev, records)?));
    }
    Ok(members)
}

/// A value as pretty JSON with a final newline, as a member.
fn json_member(v: &impl serde::Serialize) -> anyhow::Result<Member<'static>> {
    let mut b = serde_json::to_vec_pretty(v)?;
    b.push(b'\n');
    Ok(b.into())
}

/// The manifest of `members` as a member, and with a signer, its signature beside it.
fn signed_manifest(
    host: &str,
    now: DateTime<Utc>,
    members: &[(String, Member<'_>)],
    kept: &Kept,
    signer: Option<&(PathBuf, ssh_key::PrivateKey)>,
) -> anyhow::Result<Vec<(String, Member<'static>)>> {
    let manifest = manifest(host, now, members, kept)
        .map_err(|e| anyhow::Error::new(e).context("bundle: reading the history back"))?;
    let mut bytes = serde_json::to_vec_pretty(&manifest)?;
    bytes.push(b'\n');
    let mut out = Vec::new();
    if let Some((path, key)) = signer {
        let sig = crate::evidence::sign(key, &bytes)
            .map_err(|e| usage(format!("--sign {}: {e}", path.display())))?;
        out.push((crate::evidence::SIGNATURE.into(), sig.into()));
    }
    out.insert(0, (crate::evidence::MANIFEST.into(), bytes.into()));
    Ok(out)
}

/// The fio outputs given on the command line, each with its name in the bundle (`fio/NAME`).
fn read_outputs(outputs: &[PathBuf]) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut raw: Vec<(String, Vec<u8>)> = Vec::new();
    let reader = crate::trust::invoker();
    // Whoever asks may bundle only what they could read themselves: the bundle is readable
    // by all and goes to the vendor (the rule `policy check` quotes a file by).
    let unreadable = |shown: &std::path::Display, u: crate::trust::Untrusted| {
        usage(format!(
            "bundle: {shown}: refusing to pack it: {u}; a bundle is readable by everyone and sent on, so it holds only what its maker could read: give the fio output itself, or a copy of it"
        ))
    };
    for p in outputs {
        let shown = p.display();
        crate::trust::readable_by(p, reader).map_err(|u| unreadable(&shown, u))?;
        let meta = std::fs::metadata(p).map_err(|e| usage(format!("bundle: {shown}: {e}")))?;
        if !meta.is_file() {
            return Err(usage(format!("bundle: {shown}: not a regular file")));
        }
        let too_large = || {
            usage(format!(
                "bundle: {shown}: larger than {} bytes; fio outputs are far smaller",
                crate::fio::MAX_INPUT
            ))
        };
        if meta.len() > crate::fio::MAX_INPUT as u64 {
            return Err(too_large());
        }
        // judged again on what was opened: the name may lead elsewhere since
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
            .open(p)
            .map_err(|e| usage(format!("bundle: {shown}: {e}")))?;
        let opened = f
            .metadata()
            .map_err(|e| usage(format!("bundle: {shown}: {e}")))?;
        if !opened.is_file() {
            return Err(usage(format!("bundle: {shown}: not a regular file")));
        }
        crate::trust::readable_file(p, &opened, reader).map_err(|u| unreadable(&shown, u))?;
        let mut bytes = Vec::new();
        f.take(crate::fio::MAX_INPUT as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| usage(format!("bundle: {shown}: {e}")))?;
        if bytes.len() > crate::fio::MAX_INPUT {
            return Err(too_large());
        }
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
    Ok(raw)
}

/// What one pass over the history gives: this host's lines in a spool, the window's runs
/// judged, and the records the reports read again by offset.
struct Scanned {
    spool: std::fs::File,
    kept: Kept,
    skipped: Vec<history::Skipped>,
    records: Records,
    /// One per group, the group of the latest run first.
    evs: Vec<Evaluation>,
    window_runs: usize,
}

fn scan(
    history_path: &Path,
    host: &str,
    filter: &Filter,
    loaded: &policy::Loaded,
    now: DateTime<Utc>,
) -> anyhow::Result<Scanned> {
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
    // Each run holds only the figures judging reads; the others are read again from the spool.
    let mut grouping = Grouping::new(filter);
    let held = crate::evaluate::held_metrics(&loaded.policy);
    let mut window_runs = 0;
    let moved = grouping.moved();
    let mut scanner = history::RunScanner::new(
        history_path,
        history::MAX_LINE,
        Some(filter.since),
        |h: &history::RecordHead| filter.keeps_head(h),
        |r| {
            window_runs += 1;
            grouping.add(r.holding(held))
        },
    );
    scanner.moved = Some(moved);
    let kept = match history::open_for_reading(history_path)? {
        Some(f) => keep_host_lines(
            std::io::BufReader::with_capacity(1 << 16, f),
            host,
            &mut std::io::BufWriter::new(&mut spool),
            |n, offset, line| scanner.line(n, offset, history::Line::Text(line)),
        )
        .map_err(cannot_read)?,
        None => Kept::default(),
    };
    let skipped = scanner.finish();
    spool.seek(SeekFrom::Start(0)).map_err(cannot_read)?;
    let records = Records::file(spool.try_clone().map_err(cannot_read)?, history_path);
    let mut evs = grouping
        .evaluate_in(&loaded.policy, now, false, None, &records)
        .map_err(cannot_read)?;
    // The group of the latest run first: that is the one the node's schedule feeds.
    evs.sort_by_key(|e| std::cmp::Reverse(e.runs.iter().map(|r| r.timestamp).max()));
    Ok(Scanned {
        spool,
        kept,
        skipped,
        records,
        evs,
        window_runs,
    })
}

/// Writes the bundle to `dest` (standard output when `None`); its size in bytes.
fn write_out(
    dest: Option<&Path>,
    base: &str,
    members: &mut [(String, Member<'_>)],
    now: DateTime<Utc>,
) -> anyhow::Result<u64> {
    let mut size = 0u64;
    match dest {
        None => {
            // Not through out::stdout: a bundle cut short is no bundle, and says so (exit 2).
            let mut out = Counted(std::io::stdout().lock(), 0);
            archive(base, members, now, &mut out)
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
                archive(base, members, now, &mut out)?;
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
    Ok(size)
}
