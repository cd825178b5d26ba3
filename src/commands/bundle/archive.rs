//! The bundle's members, its manifest and the gzip-compressed tar they are written as.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Seek, SeekFrom, Write};

use chrono::{DateTime, Utc};

use crate::evaluate::Evaluation;
use crate::report::{self, Format, Style};
use crate::run_index::Records;

/// A member of the bundle: bytes made here, or a spooled file (the history, a report) copied
/// in as it is read.
pub(super) enum Member<'a> {
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
pub(super) struct Counted<W: Write>(pub(super) W, pub(super) u64);

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
pub(super) fn rendered(
    f: Format,
    ev: &Evaluation,
    records: &Records,
) -> anyhow::Result<Member<'static>> {
    let file = tempfile::tempfile()
        .map_err(|e| anyhow::Error::new(e).context("bundle: temporary file"))?;
    let mut out = Counted(std::io::BufWriter::with_capacity(1 << 16, &file), 0);
    report::render(f, ev, records, &Style::default(), &mut out)?;
    out.flush()?;
    let size = out.1;
    drop(out);
    Ok(Member::Spooled(file, size))
}

/// The bundle's manifest of `members` (the history read back from its spool).
pub(super) fn manifest(
    host: &str,
    now: DateTime<Utc>,
    members: &[(String, Member<'_>)],
    kept: &super::Kept,
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
                let (file, h) = d.finish(kept.left_out.clone(), kept.left_out_listed_to);
                files.insert(name.clone(), file);
                history = Some(h);
            }
        }
    }
    Ok(Manifest {
        schema_version: 1,
        tool: crate::evidence::tool(),
        generated: now.to_rfc3339(),
        host: host.to_string(),
        files,
        history: history.unwrap_or_else(|| HistoryDigest::new().finish(Vec::new(), None).1),
    })
}

/// The members as a gzip-compressed tar under one top directory, owned by root, mode 0644,
/// written to `out` as they are made.
pub(super) fn archive(
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
