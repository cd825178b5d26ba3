//! `iopscheck verify BUNDLE|HISTORY`: whether a bundle is as it was made (every member against
//! its manifest, the history line by line, its chain record to record, its signature) or a
//! history's chain holds, saying exactly what was altered, with line numbers. Exit 0: verified;
//! 1: altered, or (in part) unverifiable; 2: bad usage.

use std::io::Write;
use std::path::Path;

use crate::chain;
use crate::config::{Ctx, VerifyConfig};
use crate::error::usage;
use crate::evidence;
use crate::exit::Exit;

pub fn run(cfg: VerifyConfig, _ctx: &Ctx) -> anyhow::Result<u8> {
    let p = &cfg.file;
    let shown = p.display();
    let key = cfg.key;
    let mut out = crate::out::stdout();
    if !cfg.bundle {
        return history(p, &mut out);
    }
    let members = match read_members(p)? {
        Ok(m) => m,
        Err(e) => {
            writeln!(
                out,
                "ALTERED {shown}: the archive cannot be read whole ({e})"
            )?;
            return Ok(Exit::Fail.code());
        }
    };
    let f = evidence::check_bundle(&members, key.as_ref());
    if !f.altered.is_empty() {
        writeln!(out, "ALTERED {shown}:")?;
        for a in &f.altered {
            writeln!(out, "  - {a}")?;
        }
        for n in &f.notes {
            writeln!(out, "  ({n})")?;
        }
        return Ok(Exit::Fail.code());
    }
    let r = f.chain.unwrap_or_default();
    // (without --key, a note names the signer, as a key not checked)
    let signed = f
        .signed_by
        .as_ref()
        .filter(|_| key.is_some())
        .map(|k| format!(", signed by {k} (--key's)"))
        .unwrap_or_default();
    let what = format!(
        "{} files and {} history lines as its manifest lists them{signed}",
        members.files.len() - 1 - usize::from(f.signed_by.is_some()),
        r.lines
    );
    let verified = unverifiable(&r).is_none();
    match unverifiable(&r) {
        None => writeln!(
            out,
            "VERIFIED {shown}: {what}; each history line chained to the one before (chain head {}); {}",
            r.head,
            f.notes.join("; ")
        )?,
        Some(why) => writeln!(
            out,
            "UNVERIFIABLE {shown}: {what}, but {why}; {}",
            f.notes.join("; ")
        )?,
    }
    Ok(if verified {
        Exit::Pass.code()
    } else {
        Exit::Fail.code()
    })
}

/// What of a history whose links all hold cannot be vouched for: the records before its chain
/// began.
fn unverifiable(r: &chain::Report) -> Option<String> {
    match (&r.chained_from, r.unchained) {
        (None, Some(_)) | (None, None) if r.lines > 0 => Some(format!(
            "its {} line{} carry no hash chain (written before iopscheck chained its records): they stay readable, but whether a line was edited, dropped or moved cannot be told",
            r.lines,
            if r.lines == 1 { "" } else { "s" }
        )),
        (Some((from, since)), Some((a, b))) => Some(format!(
            "{} {} no hash chain (written before iopscheck chained its records) and cannot be vouched for; {} {} chained and intact{}",
            lines(a, b),
            if a == b { "carries" } else { "carry" },
            lines(*from, r.lines),
            if *from == r.lines { "is" } else { "are" },
            if since.is_empty() {
                String::new()
            } else {
                format!(" (since {since})")
            }
        )),
        _ => None,
    }
}

/// "line 3" or "lines 1–2".
fn lines(a: usize, b: usize) -> String {
    if a == b {
        format!("line {a}")
    } else {
        format!("lines {a}–{b}")
    }
}

/// `verify HISTORY`: its chain, read through (twice when a link is broken).
fn history(p: &Path, out: &mut impl Write) -> anyhow::Result<u8> {
    let shown = p.display();
    let open = || {
        crate::history::open_for_reading(p)
            .map_err(std::io::Error::other)?
            .map(|f| std::io::BufReader::with_capacity(1 << 16, f))
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))
    };
    let r = chain::check(open, &[], None).map_err(|e| usage(format!("verify: {shown}: {e}")))?;
    if !r.altered.is_empty() {
        writeln!(out, "ALTERED {shown}:")?;
        for a in &r.altered {
            writeln!(out, "  - {a}")?;
        }
        for n in &r.notes {
            writeln!(out, "  ({n})")?;
        }
        return Ok(Exit::Fail.code());
    }
    let notes: String = r.notes.iter().map(|n| format!("; {n}")).collect();
    match unverifiable(&r) {
        Some(why) => {
            writeln!(out, "UNVERIFIABLE {shown}: {why}{notes}")?;
            Ok(Exit::Fail.code())
        }
        None => {
            writeln!(
                out,
                "VERIFIED {shown}: {} line{}, each chained to the one before; chain head {} (the last line's SHA-256: the last line is vouched for by it alone, so compare it with a head you hold, such as a bundle's manifest){notes}",
                r.lines,
                if r.lines == 1 { "" } else { "s" },
                r.head
            )?;
            Ok(Exit::Pass.code())
        }
    }
}

/// Every regular member, read through one at a time ([`evidence::Members`]: hashed, the
/// manifest and signature held, the history spooled to an unnamed temporary file, never a
/// member held whole); an archive that cannot be read whole is the inner error (the bundle is
/// altered). Its members in all are held to [`crate::bundle_input::cap_of`] its size: past it
/// (a gzip bomb, which costs time, not memory), the outer error, exit 2, naming the bundle and
/// the member.
fn read_members(p: &Path) -> anyhow::Result<std::io::Result<evidence::Members>> {
    use crate::bundle_input::{capped_archive, check_tail, odd_entry, too_large};
    let f = match std::fs::File::open(p) {
        Ok(f) => f,
        Err(e) => return Ok(Err(e)),
    };
    let (mut archive, over, size) = capped_archive(f);
    let mut last = "first member".to_string();
    let mut out = evidence::Members::default();
    let read = (|| -> std::io::Result<()> {
        for entry in archive.entries()? {
            let e = entry?;
            let name = {
                let path = e.path()?;
                let mut c = path.components();
                c.next();
                c.as_path().to_string_lossy().into_owned()
            };
            // A link is never vouched for by the manifest, and takes a member's place when
            // the bundle is extracted.
            if let Some(what) = odd_entry(e.header().entry_type()) {
                return Err(std::io::Error::other(format!(
                    "its entry {name} is {what}, which no bundle holds"
                )));
            }
            if !e.header().entry_type().is_file() {
                continue;
            }
            last.clone_from(&name);
            out.add(&name, e)?;
        }
        Ok(())
    })();
    let read = read.and_then(|()| check_tail(archive.into_inner()));
    if over.get() {
        return Err(crate::error::usage(too_large(p, &last, size).to_string()));
    }
    if let Some(why) = &out.spool_error {
        return Err(anyhow::anyhow!("verify: {}: {why}", p.display()));
    }
    Ok(read.map(|()| out))
}
