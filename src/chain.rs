//! The history's hash chain (docs/contract.md, "The chain"): each record written since the
//! chain began carries `chain: { seq, prev }`, `prev` being the SHA-256 (hex) of the line before
//! it, its exact bytes without the newline (64 zeros for a file's first line), and `seq` its
//! place in the chain (1 for the first chained record, after an empty file or lines that carry
//! no chain). A line edited, dropped, moved or put in between breaks a link, unless every line
//! after it is rewritten too; the last line is vouched for by the chain's head (the SHA-256 of
//! the last line), which a bundle's manifest names and its signature covers.
//!
//! [`next`] is what `history::append` calls under its lock: it reads the file's last line only,
//! from its end, whatever the file's size. [`check`] reads a history (or a bundle's) through
//! twice at most, holding one line and the breaks it found, and says what was altered, by line.

use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;
use std::os::unix::fs::FileExt;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// `prev` of a file's first line.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// What a record says of the line before it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chain {
    /// The record's place in its chain, from 1.
    pub seq: u64,
    /// SHA-256 (hex) of the line before this one, without its newline; [`GENESIS`] for a
    /// file's first line.
    pub prev: String,
}

/// The longest line whose JSON is read for its chain (longer lines are hashed, not read).
/// (The history reads no longer line as a record: `history::MAX_LINE`, checked equal there.)
pub(crate) const MAX_READ: usize = 1 << 20;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The `chain` of a line, if it is a JSON object that has one; `Err` when it is no JSON object
/// (blank, torn, not JSON).
fn chain_of(line: &[u8]) -> Result<Option<Chain>, ()> {
    #[derive(Deserialize)]
    struct Probe {
        #[serde(default)]
        chain: Option<Chain>,
    }
    serde_json::from_slice::<Probe>(line)
        .map(|p| p.chain)
        .map_err(|_| ())
}

/// The link the next line appended to `f` (of `len` bytes) takes: read from the file's last
/// line alone, found from its end. A last line without a newline (torn by a crash) is the
/// line before, as `append` closes it with a newline first.
pub fn next(f: &std::fs::File, len: u64) -> std::io::Result<Chain> {
    if len == 0 {
        return Ok(Chain {
            seq: 1,
            prev: GENESIS.into(),
        });
    }
    let mut last = [0u8; 1];
    f.read_exact_at(&mut last, len - 1)?;
    let end = if last[0] == b'\n' { len - 1 } else { len };
    // the last line's start: after the newline before it
    let mut start = 0;
    let mut pos = end;
    let mut buf = vec![0u8; 1 << 16];
    'back: while pos > 0 {
        let n = (buf.len() as u64).min(pos) as usize;
        f.read_exact_at(&mut buf[..n], pos - n as u64)?;
        if let Some(i) = memchr::memrchr(b'\n', &buf[..n]) {
            start = pos - n as u64 + i as u64 + 1;
            break 'back;
        }
        pos -= n as u64;
    }
    // hashed as it is read forward; its JSON kept while it is short enough to be a record
    let mut h = Sha256::new();
    let mut kept = Vec::new();
    let mut at = start;
    let mut first = true;
    while at < end {
        let n = (buf.len() as u64).min(end - at) as usize;
        f.read_exact_at(&mut buf[..n], at)?;
        let mut part = &buf[..n];
        if first && start == 0 {
            part = part.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(part);
        }
        first = false;
        h.update(part);
        if kept.len() + part.len() <= MAX_READ {
            kept.extend_from_slice(part);
        } else {
            kept.clear();
            kept.shrink_to_fit();
        }
        at += n as u64;
    }
    let seq = match chain_of(&kept) {
        Ok(Some(c)) if end - start <= MAX_READ as u64 => c.seq + 1,
        _ => 1,
    };
    Ok(Chain {
        seq,
        prev: hex(&h.finalize()),
    })
}

/// The SHA-256 (hex) of a line, its bytes without the newline.
pub fn line_hash(line: &[u8]) -> String {
    hex(&Sha256::digest(line))
}

/// Lines left out of a bundle's history before one of its lines (other hosts' records, lines
/// that are no record), as the manifest lists them: the line after them was chained to the
/// last of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeftOut {
    /// The bundle's line they were before.
    pub before_line: usize,
    pub lines: usize,
    /// SHA-256 of the last of them; none when it was too long to be read.
    pub last_sha256: Option<String>,
    /// The `chain.prev` of the first of them, when it has one: the hash of the line before
    /// them (the bundle's line `before_line - 1`), as the history had it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_prev: Option<String>,
    /// Links among them that did not hold when the bundle was made.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub broken_links: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Every line of `reader`, its number, its SHA-256 and its bytes (none past [`MAX_READ`]),
/// holding at most [`MAX_READ`] bytes of a line. A UTF-8 byte order mark is not part of the
/// first line (as `history::for_each_line` reads it).
fn each_line(
    mut reader: impl BufRead,
    mut each: impl FnMut(usize, [u8; 32], Option<&[u8]>),
) -> std::io::Result<()> {
    let mut n = 0;
    let mut h = Sha256::new();
    let mut line: Vec<u8> = Vec::new();
    let mut too_long = false;
    let mut started = false;
    loop {
        let buf = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            if started {
                n += 1;
                let d: [u8; 32] = h.finalize().into();
                each(n, d, (!too_long).then_some(&line[..]));
            }
            return Ok(());
        }
        let newline = memchr::memchr(b'\n', buf);
        let mut part = &buf[..newline.unwrap_or(buf.len())];
        let consumed = newline.map_or(buf.len(), |i| i + 1);
        if n == 0 && !started {
            part = part.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(part);
        }
        h.update(part);
        if !too_long {
            if line.len() + part.len() <= MAX_READ {
                line.extend_from_slice(part);
            } else {
                too_long = true;
                line.clear();
            }
        }
        started = true;
        reader.consume(consumed);
        if newline.is_some() {
            n += 1;
            let d: [u8; 32] = std::mem::take(&mut h).finalize().into();
            each(n, d, (!too_long).then_some(&line[..]));
            line.clear();
            too_long = false;
            started = false;
        }
    }
}

/// What [`check`] found.
#[derive(Debug, Default)]
pub struct Report {
    pub lines: usize,
    /// Each alteration, in words, by line, in line order.
    pub altered: Vec<String>,
    /// The records before the chain began, which carry none (first, last line).
    pub unchained: Option<(usize, usize)>,
    /// The first chained line, and its record's timestamp.
    pub chained_from: Option<(usize, String)>,
    /// SHA-256 of the last line ([`GENESIS`] for no line).
    pub head: String,
    pub notes: Vec<String>,
}

/// A line whose link does not hold.
struct Break {
    line: usize,
    hash: String,
    chain: Chain,
    /// The chain of the line before, when it is chained and was before it in the history.
    before: Option<Chain>,
}

/// Checks the chain of a history read by `open` (called once, or twice when a link is broken,
/// to find which lines the broken links point to; what is held is one line and the suspect
/// lines' hashes). `left_out`: for a bundle's history, the lines its manifest says were left
/// out, by the line they were before; past `unlisted_after`, the manifest lists no more of
/// them, and links there are not checked.
pub fn check<R: BufRead>(
    open: impl Fn() -> std::io::Result<R>,
    left_out: &[LeftOut],
    unlisted_after: Option<usize>,
) -> std::io::Result<Report> {
    let gaps: BTreeMap<usize, &LeftOut> = left_out.iter().map(|g| (g.before_line, g)).collect();
    let mut r = Report {
        head: GENESIS.into(),
        ..Report::default()
    };
    let mut breaks: Vec<Break> = Vec::new();
    let mut altered: Vec<(usize, String)> = Vec::new();
    // records without a chain after the chain began, with their hashes
    let mut unchained_after: Vec<(usize, String)> = Vec::new();
    let mut not_records: Vec<usize> = Vec::new();
    let mut prev: Option<([u8; 32], Option<Chain>)> = None;
    let mut unchecked = 0usize;
    each_line(open()?, |n, hash, bytes| {
        let parsed = bytes.map(chain_of).unwrap_or(Err(()));
        let gap = gaps.get(&n);
        if let Some(g) = gap {
            let before = prev
                .as_ref()
                .map_or_else(|| GENESIS.to_string(), |(h, _)| hex(h));
            across(n, false, g, &before, &mut altered);
        }
        let (expected, before) = match (gap, &prev) {
            (Some(g), _) => (g.last_sha256.clone(), None),
            (None, None) => (Some(GENESIS.to_string()), None),
            (None, Some((h, c))) => (Some(hex(h)), c.clone()),
        };
        match &parsed {
            Ok(Some(c)) => {
                if r.chained_from.is_none() {
                    let ts = bytes
                        .and_then(|b| serde_json::from_slice::<serde_json::Value>(b).ok())
                        .and_then(|v| v.get("timestamp")?.as_str().map(String::from))
                        .unwrap_or_default();
                    r.chained_from = Some((n, ts));
                }
                match expected {
                    _ if unlisted_after.is_some_and(|u| n > u) => unchecked += 1,
                    None => unchecked += 1,
                    Some(e) if e == c.prev => {
                        // the link holds; its number follows the line before's
                        let want = before.as_ref().map_or(1, |b| b.seq + 1);
                        if gap.is_none() && c.seq != want {
                            altered.push((
                                n,
                                format!(
                                    "line {n} altered: its record number is {}, after {}",
                                    c.seq,
                                    want - 1
                                ),
                            ));
                        }
                    }
                    Some(_) => breaks.push(Break {
                        line: n,
                        hash: hex(&hash),
                        chain: c.clone(),
                        before,
                    }),
                }
            }
            Ok(None) => {
                if r.chained_from.is_some() {
                    unchained_after.push((n, hex(&hash)));
                } else {
                    r.unchained = Some((r.unchained.map_or(n, |u| u.0), n));
                }
            }
            Err(()) => {
                if r.chained_from.is_some() {
                    not_records.push(n);
                }
            }
        }
        r.lines = n;
        prev = Some((hash, parsed.ok().flatten()));
    })?;
    r.head = prev.map_or_else(|| GENESIS.to_string(), |(h, _)| hex(&h));
    if let Some(g) = gaps.get(&(r.lines + 1)) {
        across(r.lines + 1, true, g, &r.head, &mut altered);
    }
    if unchecked > 0 {
        r.notes.push(format!(
            "{unchecked} line(s) follow lines left out of the bundle that its manifest does not list: their links were not checked"
        ));
    }
    if !not_records.is_empty() {
        r.notes.push(format!(
            "line(s) {} are no record (torn by a crash?); the chain goes on across them",
            list(&not_records)
        ));
    }
    if !breaks.is_empty() || !unchained_after.is_empty() {
        explain(open, &breaks, &unchained_after, &gaps, &mut altered)?;
    }
    altered.sort_by_key(|(n, _)| *n);
    let mut seen = BTreeSet::new();
    r.altered = altered
        .into_iter()
        .map(|(_, a)| a)
        .filter(|a| seen.insert(a.clone()))
        .collect();
    Ok(r)
}

/// The links across lines left out of a bundle before its line `n` (`at_end`: after its last
/// line): the first of them was chained to the line before them (`before`, its hash), and
/// the links among them held when the bundle was made.
fn across(n: usize, at_end: bool, g: &LeftOut, before: &str, altered: &mut Vec<(usize, String)>) {
    let place = if at_end {
        format!("after line {}", n - 1)
    } else {
        format!("before line {n}")
    };
    if g.broken_links > 0 {
        altered.push((
            n,
            format!(
                "the {} line{} left out of the bundle {place} were altered before it was made: {} link{} among them did not hold (lines there edited, deleted or moved)",
                g.lines,
                if g.lines == 1 { "" } else { "s" },
                g.broken_links,
                if g.broken_links == 1 { "" } else { "s" }
            ),
        ));
    } else if let Some(fp) = &g.first_prev
        && fp != before
    {
        altered.push(if n == 1 {
            (
                1,
                format!(
                    "line(s) deleted before the history's first line (the lines left out {place} were chained to others)"
                ),
            )
        } else {
            (
                n - 1,
                format!(
                    "line {} edited, or lines after it deleted, before the bundle was made (the history's next line, left out of the bundle, was chained to other content)",
                    n - 1
                ),
            )
        });
    }
}

/// Says what each broken link means, from a second pass that finds the lines the links point
/// to and the lines the suspects are copies of.
fn explain<R: BufRead>(
    open: impl Fn() -> std::io::Result<R>,
    breaks: &[Break],
    unchained_after: &[(usize, String)],
    gaps: &BTreeMap<usize, &LeftOut>,
    altered: &mut Vec<(usize, String)>,
) -> std::io::Result<()> {
    // the hashes looked for: where the links point, and the suspects' own
    let mut found: BTreeMap<String, Vec<usize>> = breaks
        .iter()
        .map(|b| b.chain.prev.clone())
        .chain(breaks.iter().map(|b| b.hash.clone()))
        .chain(unchained_after.iter().map(|(_, h)| h.clone()))
        .map(|h| (h, Vec::new()))
        .collect();
    each_line(open()?, |n, hash, _| {
        if let Some(v) = found.get_mut(&hex(&hash))
            && v.len() < 16
        {
            v.push(n);
        }
    })?;
    let copy_of =
        |n: usize, h: &str| -> Option<usize> { found.get(h)?.iter().copied().find(|&m| m < n) };
    // what each suspect line was found to be, for the lines between a break and its target
    let mut kind: BTreeMap<usize, &'static str> = BTreeMap::new();
    for (n, h) in unchained_after {
        let n = *n;
        kind.insert(n, "inserted");
        altered.push((
            n,
            match copy_of(n, h) {
                Some(m) => format!("line {n} inserted (a copy of line {m})"),
                None => format!(
                    "line {n} inserted: a record without a chain hash after chained ones (or written by an iopscheck older than the chain)"
                ),
            },
        ));
    }
    let mut breaks: Vec<&Break> = breaks.iter().collect();
    breaks.sort_by_key(|b| b.line);
    for b in breaks {
        let n = b.line;
        if let Some(m) = copy_of(n, &b.hash) {
            kind.insert(n, "inserted");
            altered.push((n, format!("line {n} inserted (a copy of line {m})")));
            continue;
        }
        let target = if b.chain.prev == GENESIS {
            Some(0)
        } else {
            found
                .get(&b.chain.prev)
                .and_then(|v| v.iter().copied().find(|&j| j != n))
        };
        altered.extend(classify(b, target, &mut kind, gaps.contains_key(&n)));
    }
    Ok(())
}

/// What a broken link at `b` means, given the line its link names (`target`: 0 for the
/// history's start) and what the lines before it were found to be (`kind`, which this adds
/// to): the finding, by the line it is about.
fn classify(
    b: &Break,
    target: Option<usize>,
    kind: &mut BTreeMap<usize, &'static str>,
    after_gap: bool,
) -> Option<(usize, String)> {
    let n = b.line;
    let out_of_order = b.before.as_ref().is_some_and(|p| b.chain.seq <= p.seq);
    let moved = |kind: &mut BTreeMap<usize, &'static str>, what: String| {
        kind.insert(n, "reordered");
        Some((n, what))
    };
    match target {
        Some(0) if b.before.is_some() => moved(
            kind,
            format!("line {n} out of order: it was the history's first line"),
        ),
        Some(0) => {
            let first = (1..n).find(|m| !kind.contains_key(m));
            for m in 1..n {
                kind.entry(m).or_insert("inserted");
            }
            first.map(|f| {
                (
                    f,
                    format!(
                        "line(s) {} inserted before the history's first line (now line {n})",
                        range(f, n - 1)
                    ),
                )
            })
        }
        Some(j) if j > n || out_of_order => moved(
            kind,
            format!("line {n} out of order: it was after line {j}"),
        ),
        Some(j) if j + 1 < n => {
            if (j + 1..n).any(|m| kind.get(&m) == Some(&"reordered")) {
                moved(
                    kind,
                    format!("line {n} out of order: it was after line {j}"),
                )
            } else if (j + 1..n).all(|m| kind.get(&m) == Some(&"inserted")) {
                // said already, line by line
                None
            } else {
                for m in j + 1..n {
                    kind.entry(m).or_insert("inserted");
                }
                Some((
                    j + 1,
                    format!(
                        "line(s) {} inserted between line {j} and line {n}",
                        range(j + 1, n - 1)
                    ),
                ))
            }
        }
        Some(j) => Some((n, format!("line {n} altered: its link names line {j}"))),
        None if n == 1 => Some((
            1,
            "line(s) deleted before line 1 (it was chained to a line that is not in the file)"
                .to_string(),
        )),
        None if after_gap => Some((
            n,
            format!(
                "line {n}: the lines left out of the bundle before it are not those it was chained to (deleted or edited before the bundle was made)"
            ),
        )),
        None => match &b.before {
            Some(p) if b.chain.seq == p.seq + 1 => Some((
                n - 1,
                format!(
                    "line {} edited (line {n} was chained to other content)",
                    n - 1
                ),
            )),
            Some(p) if b.chain.seq > p.seq + 1 => {
                let k = b.chain.seq - p.seq - 1;
                Some((
                    n,
                    format!(
                        "{k} line{} deleted between line {} and line {n}",
                        if k == 1 { "" } else { "s" },
                        n - 1
                    ),
                ))
            }
            Some(p) => moved(
                kind,
                format!(
                    "line {n} out of order: record {} after record {}",
                    b.chain.seq, p.seq
                ),
            ),
            None => Some((
                n - 1,
                format!(
                    "line {} edited, or lines deleted after it (line {n} was chained to other content)",
                    n - 1
                ),
            )),
        },
    }
}

fn range(a: usize, b: usize) -> String {
    if a == b {
        a.to_string()
    } else {
        format!("{a}–{b}")
    }
}

fn list(v: &[usize]) -> String {
    let shown: Vec<String> = v.iter().take(10).map(|n| n.to_string()).collect();
    if v.len() > 10 {
        format!("{} and {} more", shown.join(", "), v.len() - 10)
    } else {
        shown.join(", ")
    }
}

/// Reads a whole history in memory as a reader, for [`check`] (tests).
#[cfg(test)]
pub fn bytes<'a>(b: &'a [u8]) -> impl Fn() -> std::io::Result<&'a [u8]> + 'a {
    move || Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chained(lines: &[&str]) -> Vec<u8> {
        // what append writes: each line's chain from the one before
        let mut out: Vec<u8> = Vec::new();
        let mut prev = GENESIS.to_string();
        for (i, l) in lines.iter().enumerate() {
            let line = format!(
                r#"{{"x":"{l}","chain":{{"seq":{},"prev":"{prev}"}}}}"#,
                i + 1
            );
            prev = line_hash(line.as_bytes());
            out.extend_from_slice(line.as_bytes());
            out.push(b'\n');
        }
        out
    }

    fn lines(b: &[u8]) -> Vec<Vec<u8>> {
        b.split_inclusive(|&c| c == b'\n')
            .map(<[u8]>::to_vec)
            .collect()
    }

    fn findings(b: &[u8]) -> Vec<String> {
        check(bytes(b), &[], None).unwrap().altered
    }

    #[test]
    fn each_alteration_is_named_with_its_lines() {
        let good = chained(&["a", "b", "c", "d", "e", "f"]);
        let r = check(bytes(&good), &[], None).unwrap();
        assert!(r.altered.is_empty(), "{:?}", r.altered);
        assert_eq!(r.lines, 6);
        assert_eq!(
            r.head,
            line_hash(lines(&good)[5].strip_suffix(b"\n").unwrap())
        );

        let ls = lines(&good);
        let mut edited = ls.clone();
        edited[2] = String::from_utf8(edited[2].clone())
            .unwrap()
            .replace("\"c\"", "\"C\"")
            .into_bytes();
        assert_eq!(
            findings(&edited.concat()),
            ["line 3 edited (line 4 was chained to other content)"]
        );

        let mut dropped = ls.clone();
        dropped.remove(3);
        assert_eq!(
            findings(&dropped.concat()),
            ["1 line deleted between line 3 and line 4"]
        );

        let mut first_dropped = ls.clone();
        first_dropped.remove(0);
        assert!(findings(&first_dropped.concat())[0].starts_with("line(s) deleted before line 1"));

        let mut swapped = ls.clone();
        swapped.swap(1, 2);
        let f = findings(&swapped.concat());
        assert!(f.iter().all(|s| s.contains("out of order")), "{f:?}");
        assert!(f.iter().any(|s| s.starts_with("line 2 ")), "{f:?}");
        assert!(f.iter().any(|s| s.starts_with("line 3 ")), "{f:?}");

        let mut far = ls.clone();
        far.swap(0, 4);
        let f = findings(&far.concat());
        assert!(f.iter().all(|s| s.contains("out of order")), "{f:?}");

        let mut copied = ls.clone();
        copied.insert(3, ls[1].clone());
        assert_eq!(
            findings(&copied.concat()),
            ["line 4 inserted (a copy of line 2)"]
        );

        let mut unchained = ls.clone();
        unchained.insert(2, b"{\"x\":\"forged\"}\n".to_vec());
        let f = findings(&unchained.concat());
        assert!(f[0].starts_with("line 3 inserted"), "{f:?}");

        // a line that is no record between chained ones: the chain holds across it
        let mut torn = ls.clone();
        torn.truncate(3);
        torn.push(b"{\"x\":\"half\n".to_vec());
        let mut text = torn.concat();
        let next = format!(
            r#"{{"x":"g","chain":{{"seq":1,"prev":"{}"}}}}"#,
            line_hash(b"{\"x\":\"half")
        );
        text.extend_from_slice(next.as_bytes());
        let r = check(bytes(&text), &[], None).unwrap();
        assert!(r.altered.is_empty(), "{:?}", r.altered);
        assert!(
            r.notes[0].contains("line(s) 4 are no record"),
            "{:?}",
            r.notes
        );
    }

    #[test]
    fn records_before_the_chain_are_counted_and_the_chain_starts_after_them() {
        let legacy = b"{\"x\":1}\n{\"x\":2}\n".to_vec();
        let mut text = legacy.clone();
        let line = format!(
            r#"{{"timestamp":"t3","chain":{{"seq":1,"prev":"{}"}}}}"#,
            line_hash(b"{\"x\":2}")
        );
        text.extend_from_slice(line.as_bytes());
        text.push(b'\n');
        let r = check(bytes(&text), &[], None).unwrap();
        assert!(r.altered.is_empty(), "{:?}", r.altered);
        assert_eq!(r.unchained, Some((1, 2)));
        assert_eq!(r.chained_from, Some((3, "t3".to_string())));
        let r = check(bytes(&legacy), &[], None).unwrap();
        assert_eq!((r.unchained, r.chained_from), (Some((1, 2)), None));
    }

    #[test]
    fn the_next_link_is_read_from_the_last_line_alone() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("h");
        let good = chained(&["a", "b"]);
        for (text, seq, last) in [
            (good.clone(), 3, lines(&good)[1].clone()),
            (b"{\"x\":1}\n".to_vec(), 1, b"{\"x\":1}\n".to_vec()),
            (b"torn".to_vec(), 1, b"torn".to_vec()),
            (b"\n".to_vec(), 1, b"\n".to_vec()),
            (b"\xEF\xBB\xBF{}\n".to_vec(), 1, b"{}\n".to_vec()),
        ] {
            std::fs::write(&p, &text).unwrap();
            let f = std::fs::File::open(&p).unwrap();
            let c = next(&f, text.len() as u64).unwrap();
            assert_eq!(c.seq, seq);
            assert_eq!(c.prev, line_hash(last.strip_suffix(b"\n").unwrap_or(&last)));
        }
        // a last line longer than any buffer
        let long = format!("{}\n{}", "a".repeat(10), "b".repeat(200_000));
        std::fs::write(&p, &long).unwrap();
        let c = next(&std::fs::File::open(&p).unwrap(), long.len() as u64).unwrap();
        assert_eq!(c.prev, line_hash("b".repeat(200_000).as_bytes()));
        let f = std::fs::File::create(&p).unwrap();
        assert_eq!(next(&f, 0).unwrap().prev, GENESIS);
    }
}
