//! One fio output read, in bounded memory, and its digest.

use anyhow::Context as _;
use std::io::Read;
use std::path::Path;

use chrono::{DateTime, FixedOffset, Local};

use crate::fio::{self};

/// One fio output (a file or stdin), read in bounded memory.
pub(super) struct FioFile {
    pub(super) name: String,
    pub(super) bytes: Vec<u8>,
    pub(super) modified: Option<DateTime<FixedOffset>>,
}

pub(super) fn read_input(path: &Path) -> anyhow::Result<FioFile> {
    let limit = fio::MAX_INPUT as u64;
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .take(limit + 1)
            .read_to_end(&mut bytes)
            .context("stdin")?;
        if bytes.len() as u64 > limit {
            return Err(
                anyhow::Error::new(fio::ParseError::TooLarge(fio::MAX_INPUT)).context("stdin"),
            );
        }
        return Ok(FioFile {
            name: "-".into(),
            bytes,
            modified: None,
        });
    }
    let shown = path.display().to_string();
    let meta = std::fs::metadata(path).with_context(|| shown.clone())?;
    if !meta.is_file() {
        return Err(anyhow::anyhow!("{shown}: not a regular file"));
    }
    if meta.len() > limit {
        return Err(anyhow::Error::new(fio::ParseError::TooLarge(fio::MAX_INPUT)).context(shown));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(limit + 1).read_to_end(&mut bytes))
        .with_context(|| shown.clone())?;
    let modified = meta
        .modified()
        .ok()
        .map(|t| DateTime::<Local>::from(t).fixed_offset());
    Ok(FioFile {
        name: shown,
        bytes,
        modified,
    })
}

/// FNV-1a, 64 bits: enough to recognise the same output imported twice.
pub(super) fn digest(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("fnv1a64:{h:016x}:{}", bytes.len())
}
