//! An iopscheck bundle (`iopscheck bundle`'s .tar.gz) read as an input: `report --history`,
//! `import` and `fleet` open it directly, as its own report did: its history, its policy, its
//! host, at the time it was made. Nothing is extracted to disk by the names inside the
//! archive: the history goes to an unnamed temporary file, the small members to memory.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use chrono::{DateTime, Utc};
use serde_json::Value;

/// What a bundle holds that judging needs.
pub struct Opened {
    /// Its history.jsonl, in an unnamed temporary file, at its start.
    pub history: std::fs::File,
    /// Its policy.yaml.
    pub policy_yaml: Option<String>,
    /// Its report.json (the report it was made with).
    pub report: Option<Value>,
    /// Its context.json.
    pub context: Option<Value>,
}

impl Opened {
    /// The host its records are of.
    pub fn host(&self) -> Option<String> {
        [&self.report, &self.context]
            .into_iter()
            .flatten()
            .find_map(|v| {
                v.get("group")
                    .and_then(|g| g.get("host"))
                    .or_else(|| v.get("host"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
    }

    /// When its report was made: the moment its verdict is reproduced at.
    pub fn generated(&self) -> Option<DateTime<Utc>> {
        [&self.report, &self.context]
            .into_iter()
            .flatten()
            .find_map(|v| v.get("generated").and_then(Value::as_str))
            .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
            .map(|t| t.with_timezone(&Utc))
    }

    /// Its policy, parsed (named after the bundle in messages).
    pub fn policy(&self, bundle: &Path) -> anyhow::Result<Option<crate::policy::Policy>> {
        match &self.policy_yaml {
            Some(y) => Ok(Some(crate::policy::parse(
                y,
                &format!("{}:policy.yaml", bundle.display()),
            )?)),
            None => Ok(None),
        }
    }
}

/// Whether the file is gzip (a bundle, or nothing iopscheck reads as a history).
pub fn is_gzip(path: &Path) -> bool {
    let mut magic = [0u8; 2];
    // a FIFO or a device is never opened here: the history's own checks refuse them
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
        && std::fs::File::open(path)
            .and_then(|mut f| f.read_exact(&mut magic))
            .is_ok()
        && magic == [0x1f, 0x8b]
}

/// The largest small member (policy, report, context) read into memory.
const SMALL_MEMBER: u64 = 16 << 20;

/// How far a bundle may decompress, its members in all: [`RATIO`] times its size, at least
/// [`FLOOR`], at most [`CEILING`]. iopscheck's own bundles compress a history 3 to 20 times;
/// gzip at its best (a gzip bomb: a file of zeros) about 1000 times, which turned a 3 MB
/// bundle into a 3 GB temporary file.
pub const RATIO: u64 = 100;
/// See [`RATIO`]: a small bundle may always hold this much.
pub const FLOOR: u64 = 16 << 20;
/// See [`RATIO`]: no bundle holds more than this, however large.
pub const CEILING: u64 = 4 << 30;

/// The most the bundle `f` (of `size` bytes) may decompress to.
pub fn cap_of(size: u64) -> u64 {
    size.saturating_mul(RATIO).clamp(FLOOR, CEILING)
}

/// A reader of a bundle's decompressed bytes that fails once they pass `cap`, and says so in
/// `over` (the tar reader may wrap the error).
pub struct Capped<R> {
    inner: R,
    left: u64,
    pub over: std::rc::Rc<std::cell::Cell<bool>>,
}

impl<R> Capped<R> {
    pub fn new(inner: R, cap: u64) -> Capped<R> {
        Capped {
            inner,
            left: cap,
            over: Default::default(),
        }
    }
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            // One byte more tells a stream that ends at the cap from one that goes on.
            let mut one = [0u8; 1];
            if self.inner.read(&mut one)? == 0 {
                return Ok(0);
            }
            self.over.set(true);
            return Err(std::io::Error::other("decompresses past its bound"));
        }
        let n = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let got = self.inner.read(&mut buf[..n])?;
        self.left -= got as u64;
        Ok(got)
    }
}

/// Why a tar entry of a bundle is not one `bundle` writes: anything but a regular file or a
/// directory (a link named `history.jsonl` would pass over the real one, unchecked, and take
/// its place when `tar xzf` extracts the bundle).
pub fn odd_entry(t: tar::EntryType) -> Option<&'static str> {
    if t.is_file() || t.is_dir() {
        None
    } else if t.is_symlink() {
        Some("a symbolic link")
    } else if t.is_hard_link() {
        Some("a hard link")
    } else {
        Some("not a regular file")
    }
}

/// What follows a bundle's tar archive in its decompressed stream, read to its end (within
/// the stream's cap): only the zeros that pad the archive to its record size may. A second
/// gzip member (which gzip and `tar xzf` read, as `MultiGzDecoder` does) carrying entries after
/// the end, or bytes that are not gzip, are an error.
pub fn check_tail(mut rest: impl Read) -> std::io::Result<()> {
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = rest.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        if buf[..n].iter().any(|&b| b != 0) {
            return Err(std::io::Error::other(
                "something follows the archive's end (a second gzip member or entries after the end): gzip and tar xzf read it, so it could replace what was checked",
            ));
        }
    }
}

/// The error for a bundle that decompresses past [`cap_of`] its size, while `member` was read.
pub fn too_large(path: &Path, member: &str, size: u64) -> anyhow::Error {
    anyhow::anyhow!(
        "{}: its {member} decompresses to more than {} MiB ({RATIO} times the bundle's {size} bytes, at least {} MiB, at most {} GiB): refused, as a gzip bomb would be; a bundle iopscheck made compresses its history 3 to 20 times",
        path.display(),
        cap_of(size) >> 20,
        FLOOR >> 20,
        CEILING >> 30
    )
}

/// A bundle's members, read through every gzip member of its file.
pub type Members =
    tar::Archive<Capped<flate2::read::MultiGzDecoder<std::io::BufReader<std::fs::File>>>>;

/// A bundle's file as a tar archive whose decompressed bytes are capped at [`cap_of`] its
/// size; the flag the cap sets when reached, and the file's size.
pub fn capped_archive(f: std::fs::File) -> (Members, std::rc::Rc<std::cell::Cell<bool>>, u64) {
    let size = f.metadata().map(|m| m.len()).unwrap_or(0);
    let gz = Capped::new(
        flate2::read::MultiGzDecoder::new(std::io::BufReader::new(f)),
        cap_of(size),
    );
    let over = gz.over.clone();
    (tar::Archive::new(gz), over, size)
}

/// Opens a bundle. Errors name the file and what is wrong with it.
pub fn open(path: &Path) -> anyhow::Result<Opened> {
    let shown = path.display();
    let not_bundle = |why: String| anyhow::anyhow!("{shown}: not an iopscheck bundle: {why}");
    let f = std::fs::File::open(path).map_err(|e| anyhow::anyhow!("{shown}: {e}"))?;
    let (mut archive, over, size) = capped_archive(f);
    let mut last = "first member".to_string();
    let mut history: Option<std::fs::File> = None;
    let mut seen = std::collections::BTreeSet::new();
    let (mut policy_yaml, mut report, mut context) = (None, None, None);
    let entries = archive
        .entries()
        .map_err(|e| not_bundle(format!("not a tar.gz ({e})")))?;
    for entry in entries {
        if over.get() {
            return Err(too_large(path, &last, size));
        }
        let mut e = match entry {
            Ok(e) => e,
            Err(_) if over.get() => return Err(too_large(path, &last, size)),
            Err(e) => return Err(not_bundle(format!("a damaged archive ({e})"))),
        };
        let name = e
            .path()
            .map(|p| {
                // members are under the bundle's own directory
                let mut c = p.components();
                c.next();
                c.as_path().to_string_lossy().into_owned()
            })
            .unwrap_or_default();
        if let Some(what) = odd_entry(e.header().entry_type()) {
            return Err(not_bundle(format!(
                "its entry {name} is {what}; a bundle holds only files and directories"
            )));
        }
        if !e.header().entry_type().is_file() {
            continue;
        }
        if !seen.insert(name.clone()) {
            return Err(not_bundle(format!("its {name} is in it twice")));
        }
        last.clone_from(&name);
        match name.as_str() {
            "history.jsonl" => {
                let mut t = tempfile::tempfile()
                    .map_err(|e| anyhow::anyhow!("{shown}: temporary file: {e}"))?;
                std::io::copy(&mut e, &mut t).map_err(|e| {
                    if over.get() {
                        too_large(path, "history.jsonl", size)
                    } else {
                        not_bundle(format!("its history.jsonl cannot be read ({e})"))
                    }
                })?;
                t.seek(SeekFrom::Start(0))?;
                history = Some(t);
            }
            "policy.yaml" | "report.json" | "context.json" => {
                let mut text = String::new();
                (&mut e)
                    .take(SMALL_MEMBER)
                    .read_to_string(&mut text)
                    .map_err(|e| {
                        if over.get() {
                            too_large(path, &name, size)
                        } else {
                            not_bundle(format!("its {name} cannot be read ({e})"))
                        }
                    })?;
                match name.as_str() {
                    "policy.yaml" => policy_yaml = Some(text),
                    "report.json" => report = serde_json::from_str(&text).ok(),
                    _ => context = serde_json::from_str(&text).ok(),
                }
            }
            _ => {}
        }
    }
    let tail = check_tail(archive.into_inner());
    if over.get() {
        return Err(too_large(path, &last, size));
    }
    tail.map_err(|e| not_bundle(e.to_string()))?;
    let history = history.ok_or_else(|| not_bundle("it has no history.jsonl".into()))?;
    Ok(Opened {
        history,
        policy_yaml,
        report,
        context,
    })
}
