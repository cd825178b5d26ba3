//! Evidence a vendor can verify: a bundle's manifest (every member's SHA-256, the tool's version
//! and commit, each history line's SHA-256, the chain's head and the lines left out of it), its
//! optional signature, and its check, which says exactly what was altered, with line numbers.
//! The history's own chain, record to record, is `crate::chain`.
//!
//! The signature is OpenSSH's (SSHSIG, `ssh-keygen -Y sign`), of `manifest.json`'s bytes, with
//! an Ed25519 key, in the namespace [`NAMESPACE`]: a vendor can check it with `ssh-keygen -Y
//! verify` without iopscheck, and the manifest covers every other file by its hash.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::chain::{GENESIS, LeftOut};

/// The manifest's name in a bundle.
pub const MANIFEST: &str = "manifest.json";

/// The history member whose lines the manifest lists.
pub const HISTORY: &str = "history.jsonl";

/// The signature of the manifest in a signed bundle (`bundle --sign`).
pub const SIGNATURE: &str = "manifest.json.sig";

/// The SSHSIG namespace of a bundle's signature (`ssh-keygen -Y verify -n`).
pub const NAMESPACE: &str = "iopscheck-bundle";

/// Past this many lines the manifest keeps the chain's head only (a million lines would make
/// a 70 MB manifest): an alteration is still caught, its line no longer named.
pub const MAX_LISTED_LINES: usize = 200_000;

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A writer that hashes what passes through it (a member copied from a file).
#[derive(Default)]
pub struct Sha256Writer(Sha256);

impl Sha256Writer {
    pub fn finish(self) -> String {
        hex(&self.0.finalize())
    }
}

impl std::io::Write for Sha256Writer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FileEntry {
    pub sha256: String,
    pub bytes: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HistoryEntry {
    pub lines: usize,
    /// Each line's SHA-256 (without its newline), in order; absent past
    /// [`MAX_LISTED_LINES`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_sha256: Option<Vec<String>>,
    /// The SHA-256 of the last line (`crate::chain::GENESIS` for none): the link the history's
    /// next record would carry.
    pub chain_head: String,
    /// The source history's lines left out before a line (other hosts', lines that are no
    /// record), so that the line's link can be checked: at most [`MAX_LISTED_LINES`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<LeftOut>,
    /// Past this line, the lines left out are no longer listed (their links are not checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_out_listed_to: Option<usize>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    pub schema_version: u32,
    pub tool: serde_json::Value,
    pub generated: String,
    pub host: String,
    /// Every other member of the bundle, by its name inside the bundle's directory.
    pub files: BTreeMap<String, FileEntry>,
    pub history: HistoryEntry,
}

/// What the manifest says of a history: its lines' hashes and the chain's head, read line by
/// line.
#[derive(Default)]
pub struct HistoryDigest {
    lines: usize,
    hashes: Vec<String>,
    head: String,
    whole: Sha256,
    bytes: u64,
}

impl HistoryDigest {
    pub fn new() -> HistoryDigest {
        HistoryDigest {
            head: GENESIS.to_string(),
            ..Default::default()
        }
    }

    /// One line, newline included if it has one.
    pub fn line(&mut self, raw: &[u8]) {
        self.whole.update(raw);
        self.bytes += raw.len() as u64;
        let line = raw.strip_suffix(b"\n").unwrap_or(raw);
        self.lines += 1;
        self.head = sha256_hex(line);
        if self.hashes.len() < MAX_LISTED_LINES {
            self.hashes.push(self.head.clone());
        }
    }

    /// The file's entry and the history's, with the lines left out before its lines.
    pub fn finish(
        self,
        left_out: Vec<LeftOut>,
        left_out_listed_to: Option<usize>,
    ) -> (FileEntry, HistoryEntry) {
        let listed = self.lines <= MAX_LISTED_LINES;
        (
            FileEntry {
                sha256: hex(&self.whole.finalize()),
                bytes: self.bytes,
            },
            HistoryEntry {
                lines: self.lines,
                line_sha256: listed.then_some(self.hashes),
                chain_head: self.head,
                left_out,
                left_out_listed_to,
            },
        )
    }
}

/// The digest of a whole history held in memory.
pub fn digest_history(bytes: &[u8]) -> (FileEntry, HistoryEntry) {
    let mut d = HistoryDigest::new();
    for l in bytes.split_inclusive(|&b| b == b'\n') {
        d.line(l);
    }
    d.finish(Vec::new(), None)
}

/// The manifest's `tool`: name, version and the commit it was built from.
pub fn tool() -> serde_json::Value {
    let (version, commit) = crate::version::parts();
    serde_json::json!({ "name": "iopscheck", "version": version, "commit": commit })
}

/// What a check found: each alteration in words, the first most important.
#[derive(Debug, Default)]
pub struct Findings {
    pub altered: Vec<String>,
    pub notes: Vec<String>,
    /// The bundle's history's chain, when it has a history.
    pub chain: Option<crate::chain::Report>,
    /// The key that signed the manifest, when it is signed and the signature holds.
    pub signed_by: Option<String>,
}

/// The most of a manifest `verify` holds: iopscheck's own list at most 200,000 lines' hashes
/// (15 MB) and as many runs of lines left out (about 50 MB).
pub const MAX_MANIFEST: u64 = 128 << 20;

/// The most of a signature `verify` holds: an SSHSIG of an Ed25519 key is under 1 KiB.
pub const MAX_SIGNATURE: u64 = 64 << 10;

/// A bundle's members as `verify` reads them, one at a time and never whole: each one's
/// SHA-256 and size, by its name inside the bundle's directory; the manifest and its signature
/// held (to [`MAX_MANIFEST`] and [`MAX_SIGNATURE`]); the history spooled to an unnamed
/// temporary file, read through again to be checked line by line.
#[derive(Default)]
pub struct Members {
    pub files: BTreeMap<String, FileEntry>,
    manifest: Vec<u8>,
    signature: Vec<u8>,
    history: Option<std::fs::File>,
    /// Why the history's temporary file could not be made or written (no fault of the bundle).
    pub spool_error: Option<String>,
}

impl Members {
    /// Reads the member `name` through to its end: hashed, counted, and held or spooled as
    /// checking needs. A member already read is read through, then refused.
    pub fn add(&mut self, name: &str, mut r: impl std::io::Read) -> std::io::Result<()> {
        use std::io::Write as _;
        let twice = self.files.contains_key(name);
        let cap = match name {
            MANIFEST => MAX_MANIFEST,
            SIGNATURE => MAX_SIGNATURE,
            _ => 0,
        };
        let mut held = Vec::new();
        let mut spool = match name {
            HISTORY if !twice => Some(tempfile::tempfile().map_err(|e| self.spool_failed(e))?),
            _ => None,
        };
        let (mut hash, mut bytes) = (Sha256::new(), 0u64);
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = match r.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let chunk = &buf[..n];
            hash.update(chunk);
            bytes += n as u64;
            if twice {
                continue;
            }
            if bytes <= cap {
                held.extend_from_slice(chunk);
            } else if !held.is_empty() {
                // past its cap: its size says so, its bytes are not kept
                held = Vec::new();
            }
            if let Some(s) = &mut spool {
                s.write_all(chunk).map_err(|e| self.spool_failed(e))?;
            }
        }
        if twice {
            return Err(std::io::Error::other(format!("{name} is in it twice")));
        }
        match name {
            MANIFEST => self.manifest = held,
            SIGNATURE => self.signature = held,
            _ => {}
        }
        if spool.is_some() {
            self.history = spool;
        }
        let sha256 = hex(&hash.finalize());
        self.files
            .insert(name.to_string(), FileEntry { sha256, bytes });
        Ok(())
    }

    fn spool_failed(&mut self, e: std::io::Error) -> std::io::Error {
        let why = format!("a temporary file for its {HISTORY}: {e}");
        self.spool_error = Some(why.clone());
        std::io::Error::other(why)
    }

    /// The members of a bundle held whole (tests).
    #[cfg(test)]
    pub fn of(members: &BTreeMap<String, Vec<u8>>) -> std::io::Result<Members> {
        let mut m = Members::default();
        for (name, b) in members {
            m.add(name, &b[..])?;
        }
        Ok(m)
    }

    /// The history's spool, from its start.
    fn history(&self) -> Option<impl Fn() -> std::io::Result<std::io::BufReader<std::fs::File>>> {
        use std::io::Seek as _;
        self.history.as_ref().map(|f| {
            move || {
                let mut f = f.try_clone()?;
                f.seek(std::io::SeekFrom::Start(0))?;
                Ok(std::io::BufReader::with_capacity(1 << 16, f))
            }
        })
    }
}

/// Each line's SHA-256 (without its newline), in order, as [`digest_history`] splits them,
/// holding no line, however long.
fn each_line_hash(
    mut r: impl std::io::BufRead,
    mut each: impl FnMut([u8; 32]),
) -> std::io::Result<()> {
    let mut h = Sha256::new();
    let mut open = false;
    loop {
        let buf = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            if open {
                each(h.finalize().into());
            }
            return Ok(());
        }
        let newline = memchr::memchr(b'\n', buf);
        h.update(&buf[..newline.unwrap_or(buf.len())]);
        let used = newline.map_or(buf.len(), |i| i + 1);
        r.consume(used);
        open = newline.is_none();
        if newline.is_some() {
            each(std::mem::take(&mut h).finalize().into());
        }
    }
}

/// Checks a bundle's members against its manifest, its history's chain, and its signature:
/// with `key`, the bundle must be signed by that key.
pub fn check_bundle(members: &Members, key: Option<&ssh_key::PublicKey>) -> Findings {
    let mut f = Findings::default();
    let held = members.files.get(MANIFEST);
    let manifest = match held {
        None => {
            f.altered.push(format!(
                "no {MANIFEST}: the bundle cannot be verified (made by an iopscheck without manifests, or its manifest was removed)"
            ));
            None
        }
        Some(e) if e.bytes > MAX_MANIFEST => {
            f.altered.push(format!(
                "{MANIFEST} is not a manifest: it is {} bytes, more than any manifest iopscheck writes (at most {} MiB)",
                e.bytes,
                MAX_MANIFEST >> 20
            ));
            None
        }
        Some(_) => match serde_json::from_slice::<Manifest>(&members.manifest) {
            Ok(m) => Some(m),
            Err(e) => {
                f.altered.push(format!("{MANIFEST} is not a manifest: {e}"));
                None
            }
        },
    };
    match held {
        Some(e) if e.bytes <= MAX_MANIFEST => {
            let sig = members.files.get(SIGNATURE).map(|s| {
                if s.bytes > MAX_SIGNATURE {
                    Err(s.bytes)
                } else {
                    Ok(&members.signature[..])
                }
            });
            check_signature(&members.manifest, sig, key, &mut f);
        }
        Some(_) => {}
        None if key.is_some() => f.altered.push(format!(
            "--key: the bundle has no {MANIFEST}, so nothing a signature could cover"
        )),
        None => {}
    }
    if let Some(manifest) = &manifest {
        check_files(members, manifest, &mut f);
    }
    // the history's own chain, record to record, across the lines the manifest says were
    // left out
    if let Some(open) = members.history() {
        let (left_out, listed_to) = manifest
            .as_ref()
            .map(|m| (m.history.left_out.as_slice(), m.history.left_out_listed_to))
            .unwrap_or_default();
        match crate::chain::check(open, left_out, listed_to) {
            Ok(r) => {
                f.altered
                    .extend(r.altered.iter().map(|a| format!("{HISTORY}: {a}")));
                f.notes
                    .extend(r.notes.iter().map(|a| format!("{HISTORY}: {a}")));
                f.chain = Some(r);
            }
            Err(e) => f.altered.push(format!("{HISTORY}: cannot be read ({e})")),
        }
    }
    f
}

/// Every member against the manifest's list, and the history's head.
fn check_files(members: &Members, manifest: &Manifest, f: &mut Findings) {
    f.notes.push(format!(
        "made {} for host {} by {}",
        manifest.generated,
        manifest.host,
        manifest
            .tool
            .get("version")
            .and_then(|v| v.as_str())
            .map(|v| {
                let commit = manifest.tool.get("commit").and_then(|c| c.as_str());
                format!(
                    "iopscheck {v}{}",
                    commit.map(|c| format!(" (commit {c})")).unwrap_or_default()
                )
            })
            .unwrap_or_else(|| "an unnamed tool".into())
    ));
    for (name, want) in &manifest.files {
        match members.files.get(name) {
            None => f
                .altered
                .push(format!("{name}: missing (the manifest lists it)")),
            Some(got) if got.sha256 != want.sha256 => {
                if let (HISTORY, Some(open)) = (name.as_str(), members.history()) {
                    let read =
                        open().and_then(|r| history_findings(r, &manifest.history, &open, f));
                    if let Err(e) = read {
                        f.altered.push(format!("{HISTORY}: cannot be read ({e})"));
                    }
                } else {
                    f.altered.push(format!(
                        "{name}: altered (SHA-256 {}, the manifest says {})",
                        got.sha256, want.sha256
                    ));
                }
            }
            Some(_) => {}
        }
    }
    for name in members.files.keys() {
        if name != MANIFEST && name != SIGNATURE && !manifest.files.contains_key(name) {
            f.altered
                .push(format!("{name}: added (the manifest does not list it)"));
        }
    }
    if let Some(open) = members.history()
        && !f.altered.iter().any(|a| a.starts_with(HISTORY))
    {
        let mut head = GENESIS.to_string();
        let read = open().and_then(|r| each_line_hash(r, |h| head = hex(&h)));
        if let Err(e) = read {
            f.altered.push(format!("{HISTORY}: cannot be read ({e})"));
        } else if head != manifest.history.chain_head {
            f.altered.push(format!(
                "{HISTORY}: its chain head (the last line's SHA-256) is {}, the manifest says {}",
                head, manifest.history.chain_head
            ));
        }
    }
}

/// The signature of the manifest: present when `key` asks for one, of these bytes, in the
/// bundle's namespace, and by `key`.
fn check_signature(
    manifest: &[u8],
    sig: Option<Result<&[u8], u64>>,
    key: Option<&ssh_key::PublicKey>,
    f: &mut Findings,
) {
    let sig = match sig {
        Some(Ok(s)) => Some(s),
        Some(Err(bytes)) => {
            f.altered.push(format!(
                "{SIGNATURE}: not an SSH signature (it is {bytes} bytes; an SSH signature is under {} KiB)",
                MAX_SIGNATURE >> 10
            ));
            return;
        }
        None => None,
    };
    let Some(sig) = sig else {
        if let Some(k) = key {
            f.altered.push(format!(
                "not signed: no {SIGNATURE}, and --key asks for a signature by {}",
                fingerprint(k.key_data())
            ));
        }
        return;
    };
    let parsed = std::str::from_utf8(sig)
        .map_err(|e| e.to_string())
        .and_then(|t| ssh_key::SshSig::from_pem(t.trim()).map_err(|e| e.to_string()));
    let sig = match parsed {
        Ok(s) => s,
        Err(e) => {
            f.altered
                .push(format!("{SIGNATURE}: not an SSH signature ({e})"));
            return;
        }
    };
    let by = fingerprint(sig.public_key());
    if sig.namespace() != NAMESPACE {
        f.altered.push(format!(
            "{SIGNATURE}: made for namespace {:?}, not {NAMESPACE:?}",
            sig.namespace()
        ));
        return;
    }
    if let Some(k) = key
        && k.key_data() != sig.public_key()
    {
        f.altered.push(format!(
            "{SIGNATURE}: signed by another key ({by}), not --key's ({})",
            fingerprint(k.key_data())
        ));
        return;
    }
    let public = ssh_key::PublicKey::new(sig.public_key().clone(), "");
    match public.verify(NAMESPACE, manifest, &sig) {
        Ok(()) => {
            f.signed_by = Some(by.clone());
            if key.is_none() {
                f.notes.push(format!(
                    "signed by {by}, a key not checked: pass --key with the key you expect"
                ));
            }
        }
        Err(_) => f.altered.push(format!(
            "{SIGNATURE}: not a signature of this {MANIFEST} (the manifest was replaced or edited after it was signed)"
        )),
    }
}

/// A key's SHA-256 fingerprint, as `ssh-keygen -l` prints it.
pub fn fingerprint(k: &ssh_key::public::KeyData) -> String {
    k.fingerprint(ssh_key::HashAlg::Sha256).to_string()
}

/// The Ed25519 private key of `--sign PATH`, or why not.
pub fn signing_key(path: &Path) -> Result<ssh_key::PrivateKey, String> {
    let (text, mode) = read_key(path)?;
    // A private key others can read is no longer the owner's alone: ssh-keygen refuses it
    // ("UNPROTECTED PRIVATE KEY FILE"), for every user, and so does iopscheck.
    if text.contains("PRIVATE KEY") && mode & 0o077 != 0 {
        return Err(format!(
            "an unprotected private key: its permissions ({:04o}) let users other than its owner at it, so it is not the signer's alone (ssh-keygen refuses it too); chmod 600 it, or make a new key if others may have read it",
            mode & 0o7777
        ));
    }
    let key = ssh_key::PrivateKey::from_openssh(text.trim()).map_err(|e| {
        if text.trim_start().starts_with("ssh-") || text.trim_start().starts_with("ecdsa-") {
            "a public key: --sign takes the private key (the file without .pub)".to_string()
        } else if matches!(e, ssh_key::Error::AlgorithmUnknown | ssh_key::Error::AlgorithmUnsupported { .. }) {
            ONLY_ED25519.to_string()
        } else if text.contains("BEGIN OPENSSH PRIVATE KEY") {
            format!("not a readable OpenSSH private key ({e})")
        } else {
            format!(
                "not an OpenSSH private key ({e}); make one with ssh-keygen -t ed25519 -N '' -f FILE"
            )
        }
    })?;
    if key.is_encrypted() {
        return Err(format!(
            "the key is encrypted (it has a passphrase); iopscheck signs with unencrypted Ed25519 keys only: use one made with ssh-keygen -t ed25519 -N '', or sign {MANIFEST} yourself with ssh-keygen -Y sign -n {NAMESPACE}"
        ));
    }
    if key.algorithm() != ssh_key::Algorithm::Ed25519 {
        return Err(format!("an {} key: {ONLY_ED25519}", key.algorithm()));
    }
    Ok(key)
}

/// The most a key file may hold: an OpenSSH key is a few hundred bytes, an RSA one a few KiB.
const MAX_KEY_BYTES: u64 = 64 << 10;

/// The text of a key file: a regular file only (a FIFO would block the read for ever, a device
/// be read without end), checked before it is opened and again on the descriptor, opened
/// O_NONBLOCK so that a FIFO put there meanwhile cannot hang it; at most [`MAX_KEY_BYTES`].
/// As root, the key's path is judged as the history's ([`crate::trust`]). With its mode.
fn read_key(path: &Path) -> Result<(String, u32), String> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let not_regular = |m: &std::fs::Metadata| {
        let kind = crate::syscalls::file_kind(m);
        format!("is {kind}, not a key file: give the file ssh-keygen wrote")
    };
    let m = std::fs::metadata(path).map_err(|e| format!("cannot read it ({e})"))?;
    if !m.is_file() {
        return Err(not_regular(&m));
    }
    // As root a key decides what a bundle proves: its path is judged as the history's is.
    crate::trust::check_read(path).map_err(|u| {
        format!(
            "refusing it as root: other users can write there ({u}), so they could put their own key in its place; keep the key where only root can write, owned by root"
        )
    })?;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| format!("cannot read it ({e})"))?;
    let m = f.metadata().map_err(|e| format!("cannot read it ({e})"))?;
    if !m.is_file() {
        return Err(not_regular(&m));
    }
    let mut bytes = Vec::new();
    f.take(MAX_KEY_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it ({e})"))?;
    if bytes.len() as u64 > MAX_KEY_BYTES {
        return Err(format!(
            "larger than any OpenSSH key (over {} KiB): give the key file ssh-keygen wrote",
            MAX_KEY_BYTES >> 10
        ));
    }
    let text =
        String::from_utf8(bytes).map_err(|_| "not an OpenSSH key (it is not text)".to_string())?;
    use std::os::unix::fs::MetadataExt as _;
    Ok((text, m.mode()))
}

const ONLY_ED25519: &str =
    "not an Ed25519 key; iopscheck signs with Ed25519 keys only (ssh-keygen -t ed25519)";

/// The Ed25519 public key of `--key PATH` (an OpenSSH `.pub` line), or why not.
pub fn public_key(path: &Path) -> Result<ssh_key::PublicKey, String> {
    let (text, _) = read_key(path)?;
    if text.contains("PRIVATE KEY") {
        return Err("a private key: --key takes the public key (the .pub file)".into());
    }
    let kind = text.split_whitespace().next().unwrap_or_default();
    let key = ssh_key::PublicKey::from_openssh(text.trim()).map_err(|e| match e {
        ssh_key::Error::AlgorithmUnknown | ssh_key::Error::AlgorithmUnsupported { .. } => {
            format!("an {kind} key; iopscheck checks Ed25519 signatures only")
        }
        e => format!(
            "not an OpenSSH public key ({e}); give the .pub file, one line: ssh-ed25519 AAAA…"
        ),
    })?;
    if key.algorithm() != ssh_key::Algorithm::Ed25519 {
        return Err(format!(
            "an {} key; iopscheck checks Ed25519 signatures only",
            key.algorithm()
        ));
    }
    Ok(key)
}

/// The signature of a manifest's bytes, armored as `ssh-keygen -Y sign` writes it.
pub fn sign(key: &ssh_key::PrivateKey, manifest: &[u8]) -> Result<Vec<u8>, String> {
    key.sign(NAMESPACE, ssh_key::HashAlg::Sha512, manifest)
        .and_then(|s| s.to_pem(ssh_key::LineEnding::LF))
        .map(String::into_bytes)
        .map_err(|e| e.to_string())
}

/// The most items of a history's alteration said (a line altered, moved or missing); past
/// them, how many more.
const MAX_SHOWN: usize = 10_000;

/// Which lines of a history (read from `r`, and again from `open`) differ from the manifest's
/// list, by line number; read through twice, holding the manifest's list and a mark for each of
/// its lines, never the history.
fn history_findings(
    r: impl std::io::BufRead,
    want: &HistoryEntry,
    open: impl Fn() -> std::io::Result<std::io::BufReader<std::fs::File>>,
    f: &mut Findings,
) -> std::io::Result<()> {
    let mut got = 0usize;
    let Some(list) = &want.line_sha256 else {
        each_line_hash(r, |_| got += 1)?;
        f.altered.push(format!(
            "{HISTORY}: altered ({got} lines, the manifest says {}; the manifest lists no line hashes for a history this long)",
            want.lines
        ));
        return Ok(());
    };
    let mut at: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, h) in list.iter().enumerate() {
        at.entry(h.as_str()).or_default().push(i + 1);
    }
    // The original line each line is (the first of its hash's not yet met), if any.
    let original = |h: &[u8; 32], seen: &mut Vec<bool>| {
        at.get(hex(h).as_str()).map(|places| {
            let o = places
                .iter()
                .copied()
                .find(|&p| !seen[p - 1])
                .unwrap_or(places[0]);
            seen[o - 1] = true;
            o
        })
    };
    // First pass: which original lines are there, so that a drop is told from moves.
    let mut seen = vec![false; list.len()];
    each_line_hash(r, |h| {
        got += 1;
        original(&h, &mut seen);
    })?;
    // a dropped line moves every later one up: say the drop, not each move
    let dropped: Vec<usize> = seen
        .iter()
        .enumerate()
        .filter(|(_, s)| !**s)
        .map(|(i, _)| i + 1)
        .collect();
    let added = got + dropped.len() > list.len();
    let shifted_only = |now: usize, orig: usize| {
        !added && !dropped.is_empty() && orig == now + dropped.partition_point(|&d| d < orig)
    };
    let (mut shown, mut more) = (Vec::new(), 0usize);
    let mut say = |text: String| {
        if shown.len() < MAX_SHOWN {
            shown.push(text);
        } else {
            more += 1;
        }
    };
    // Second pass: what each line is.
    let mut seen = vec![false; list.len()];
    let mut n = 0;
    each_line_hash(open()?, |h| {
        n += 1;
        match original(&h, &mut seen) {
            Some(o) if o != n && !shifted_only(n, o) => say(format!("line {n} was line {o}")),
            Some(_) => {}
            None => say(format!("line {n} altered (it is no line of the original)")),
        }
    })?;
    for d in &dropped {
        say(format!("original line {d} missing"));
    }
    let mut text = if shown.is_empty() {
        "altered".to_string()
    } else {
        shown.join("; ")
    };
    if more > 0 {
        text.push_str(&format!(
            "; and {more} more lines altered, moved or missing"
        ));
    }
    f.altered.push(format!(
        "{HISTORY}: {text} ({got} lines, the manifest says {})",
        want.lines
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_is_sha256() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn the_head_is_the_last_lines_hash() {
        let (_, a) = digest_history(b"one\ntwo\n");
        assert_eq!(a.chain_head, sha256_hex(b"two"));
        assert_eq!(a.lines, 2);
        assert_eq!(digest_history(b"").1.chain_head, GENESIS);
    }

    #[test]
    fn lines_are_hashed_as_they_stream_as_digest_history_splits_them() {
        for text in [
            &b""[..],
            b"one",
            b"one\n",
            b"one\n\ntwo",
            b"\n\n",
            b"a\nb\n",
        ] {
            let mut got = Vec::new();
            // a reader that hands out a byte at a time: lines split across reads
            let r = std::io::BufReader::with_capacity(1, text);
            each_line_hash(r, |h| got.push(hex(&h))).unwrap();
            let (file, want) = digest_history(text);
            assert_eq!(got.len(), want.lines, "{text:?}");
            assert_eq!(Some(got.clone()), want.line_sha256, "{text:?}");
            assert_eq!(
                got.last().cloned().unwrap_or(GENESIS.into()),
                want.chain_head
            );
            let m = Members::of(&BTreeMap::from([(HISTORY.to_string(), text.to_vec())])).unwrap();
            assert_eq!(m.files[HISTORY], file, "hashed as it streams: {text:?}");
        }
    }

    #[test]
    fn a_member_is_read_through_once_and_a_manifest_past_its_cap_is_not_held() {
        let mut m = Members::default();
        m.add("report.json", &b"{}"[..]).unwrap();
        let e = m.add("report.json", &b"{}"[..]).unwrap_err();
        assert_eq!(e.to_string(), "report.json is in it twice");
        let big = std::io::repeat(b' ').take(MAX_MANIFEST + 1);
        use std::io::Read as _;
        m.add(MANIFEST, big).unwrap();
        assert!(m.manifest.is_empty(), "a manifest past its cap is not held");
        let f = check_bundle(&m, None);
        assert!(
            f.altered[0].starts_with("manifest.json is not a manifest: it is 134217729 bytes"),
            "{:?}",
            f.altered
        );
    }

    #[test]
    fn a_history_is_checked_line_by_line_from_its_spool() {
        let original = b"a\nb\nc\nd\n".to_vec();
        let (file, entry) = digest_history(&original);
        let manifest = serde_json::to_vec(&Manifest {
            schema_version: 1,
            tool: tool(),
            generated: "2026-01-01T00:00:00Z".into(),
            host: "h".into(),
            files: BTreeMap::from([(HISTORY.to_string(), file)]),
            history: entry,
        })
        .unwrap();
        let check = |history: &[u8]| {
            let m = Members::of(&BTreeMap::from([
                (MANIFEST.to_string(), manifest.clone()),
                (HISTORY.to_string(), history.to_vec()),
            ]))
            .unwrap();
            check_bundle(&m, None).altered
        };
        assert!(check(&original).iter().all(|a| !a.contains("line")));
        // a dropped line is said, not each line it moved up
        let dropped = check(b"a\nc\nd\n");
        assert_eq!(
            dropped[0],
            "history.jsonl: original line 2 missing (3 lines, the manifest says 4)"
        );
        let swapped = check(b"a\nc\nb\nX\n");
        assert_eq!(
            swapped[0],
            "history.jsonl: line 2 was line 3; line 3 was line 2; line 4 altered (it is no line of the original); original line 4 missing (4 lines, the manifest says 4)"
        );
    }
}
