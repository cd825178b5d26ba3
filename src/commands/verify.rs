//! `iopscheck verify BUNDLE|HISTORY`: whether a bundle is as it was made (every member against
//! its manifest, the history line by line and its chain), saying exactly what was altered,
//! with line numbers. Exit 0: verified; 1: altered, or cannot be verified; 2: bad usage.

use std::collections::BTreeMap;
use std::io::{Read, Write};

use crate::app::{Ctx, exit, usage};
use crate::cli::VerifyArgs;
use crate::evidence;

/// The most a bundle's members may hold in all, read into memory to be checked.
const MAX_BUNDLE: u64 = 4 << 30;

pub fn run(args: VerifyArgs, _ctx: &Ctx) -> anyhow::Result<u8> {
    let p = &args.file;
    let shown = p.display();
    let meta = std::fs::metadata(p).map_err(|e| usage(format!("verify: {shown}: {e}")))?;
    if !meta.is_file() {
        return Err(usage(format!("verify: {shown}: not a regular file")));
    }
    let mut out = crate::out::stdout();
    if !super::bundle_input::is_gzip(p) {
        // A history: its records carry no hash chain yet.
        writeln!(
            out,
            "UNVERIFIABLE {shown}: a history whose records carry no hash chain; its records stay readable, but whether a line was edited, dropped or moved cannot be told. A bundle of it (iopscheck bundle) can be verified."
        )?;
        return Ok(exit::FAIL);
    }
    let members = match read_members(p) {
        Ok(m) => m,
        Err(e) => {
            writeln!(
                out,
                "ALTERED {shown}: the archive cannot be read whole ({e})"
            )?;
            return Ok(exit::FAIL);
        }
    };
    let f = evidence::check_bundle(&members);
    if f.altered.is_empty() {
        let lines = members
            .get(evidence::HISTORY)
            .map(|h| h.split_inclusive(|&b| b == b'\n').count())
            .unwrap_or(0);
        let (_, h) = evidence::digest_history(
            members
                .get(evidence::HISTORY)
                .map(Vec::as_slice)
                .unwrap_or_default(),
        );
        writeln!(
            out,
            "VERIFIED {shown}: {} files and {lines} history lines as its manifest lists them (chain head {}); {}",
            members.len() - 1,
            h.chain_head,
            f.notes.join("; ")
        )?;
        return Ok(exit::PASS);
    }
    writeln!(out, "ALTERED {shown}:")?;
    for a in &f.altered {
        writeln!(out, "  - {a}")?;
    }
    for n in &f.notes {
        writeln!(out, "  ({n})")?;
    }
    Ok(exit::FAIL)
}

/// Every regular member, by its name inside the bundle's directory.
fn read_members(p: &std::path::Path) -> std::io::Result<BTreeMap<String, Vec<u8>>> {
    let f = std::fs::File::open(p)?;
    let gz = flate2::read::GzDecoder::new(std::io::BufReader::new(f));
    let mut archive = tar::Archive::new(gz);
    let mut out = BTreeMap::new();
    let mut total = 0u64;
    for entry in archive.entries()? {
        let mut e = entry?;
        if !e.header().entry_type().is_file() {
            continue;
        }
        let name = {
            let path = e.path()?;
            let mut c = path.components();
            c.next();
            c.as_path().to_string_lossy().into_owned()
        };
        let mut data = Vec::new();
        (&mut e).take(MAX_BUNDLE - total).read_to_end(&mut data)?;
        total += data.len() as u64;
        if out.insert(name.clone(), data).is_some() {
            return Err(std::io::Error::other(format!("{name} is in it twice")));
        }
    }
    Ok(out)
}
