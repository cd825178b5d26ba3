//! What a paste went through before it reached us, undone: a raw mail's quoted-printable or
//! base64 parts, HTML entities from a copied web page, markdown code fences and inline code.
//! Each step that changed the text is said in a note, so that a reader knows the figures were
//! decoded, not read as typed. Quote marks (`> `) are handled by [`super::unquote`].

use super::note::{MailEncoding, Note};

/// The text with what the medium did undone, and a note for each step that changed it.
pub(super) fn unwrap(text: String) -> (String, Vec<Note>) {
    let mut notes = Vec::new();
    let text = match mime_parts(&text) {
        Some((decoded, parts)) => {
            notes.push(Note::MailParts(parts));
            decoded
        }
        None => match bare_quoted_printable(&text) {
            Some(d) => {
                notes.push(Note::QuotedPrintable);
                d
            }
            None => text,
        },
    };
    let text = match html_entities(&text) {
        Some(d) => {
            notes.push(Note::HtmlEntities);
            d
        }
        None => text,
    };
    let text = markdown(text);
    (text, notes)
}

/// The header block of a mail part: its lines up to the first blank one, when they look like
/// headers (`Name: value`, continuation lines indented).
fn header_value<'a>(headers: &[&'a str], name: &str) -> Option<&'a str> {
    headers.iter().find_map(|h| {
        let (k, v) = h.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then_some(v.trim())
    })
}

fn looks_like_header(l: &str) -> bool {
    match l.split_once(':') {
        Some((k, _)) => {
            !k.is_empty()
                && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                && k.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        }
        None => l.starts_with([' ', '\t']),
    }
}

/// A mail (or one of its parts pasted with its headers) whose body is quoted-printable or
/// base64: every such part decoded in place, other lines kept. None when there is none.
fn mime_parts(text: &str) -> Option<(String, Vec<MailEncoding>)> {
    if !text.lines().any(|l| {
        l.split_once(':').is_some_and(|(k, v)| {
            k.trim().eq_ignore_ascii_case("content-transfer-encoding") && {
                let v = v.trim().to_ascii_lowercase();
                v == "quoted-printable" || v == "base64"
            }
        })
    }) {
        return None;
    }
    let lines: Vec<&str> = text.split('\n').map(|l| l.trim_end_matches('\r')).collect();
    let mut out = String::with_capacity(text.len());
    let mut kinds: Vec<MailEncoding> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        // a header block: consecutive header lines, one of them the encoding
        let start = i;
        let mut j = i;
        while j < lines.len() && !lines[j].is_empty() && looks_like_header(lines[j]) {
            j += 1;
        }
        let headers = &lines[start..j];
        let encoding = header_value(headers, "content-transfer-encoding")
            .map(str::to_ascii_lowercase)
            .filter(|e| e == "quoted-printable" || e == "base64");
        if j > start
            && j < lines.len()
            && lines[j].is_empty()
            && let Some(enc) = encoding
        {
            // the body: up to the next MIME boundary (`--…`) or the end
            let mut k = j + 1;
            while k < lines.len() && !lines[k].starts_with("--") {
                k += 1;
            }
            let body = lines[j + 1..k].join("\n");
            let bytes = if enc == "base64" {
                base64(&body)
            } else {
                Some(quoted_printable(&body))
            };
            match bytes {
                Some(b) => {
                    out.push_str(&String::from_utf8_lossy(&b));
                    out.push('\n');
                    let kind = if enc == "base64" {
                        MailEncoding::Base64
                    } else {
                        MailEncoding::QuotedPrintable
                    };
                    if !kinds.contains(&kind) {
                        kinds.push(kind);
                    }
                }
                None => {
                    out.push_str(&body);
                    out.push('\n');
                }
            }
            i = k;
            continue;
        }
        if j == start {
            j = start + 1;
        }
        for l in &lines[start..j] {
            out.push_str(l);
            out.push('\n');
        }
        i = j;
    }
    if kinds.is_empty() {
        return None;
    }
    Some((out, kinds))
}

/// Quoted-printable without its headers (a mail body pasted as it was sent): several `=3D`
/// and soft line breaks (`=` at a line's end).
fn bare_quoted_printable(text: &str) -> Option<String> {
    let escaped = text.matches("=3D").count();
    let soft = text
        .lines()
        .filter(|l| l.trim_end_matches('\r').ends_with('='))
        .count();
    (escaped >= 2 && soft >= 1).then(|| String::from_utf8_lossy(&quoted_printable(text)).into())
}

/// RFC 2045 quoted-printable: `=XX` is a byte, `=` at a line's end joins the next line.
fn quoted_printable(body: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len());
    let lines: Vec<&str> = body.split('\n').collect();
    for (n, line) in lines.iter().enumerate() {
        let line = line.trim_end_matches('\r');
        let (line, soft) = match line.trim_end().strip_suffix('=') {
            Some(l) => (l, true),
            None => (line, false),
        };
        let b = line.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'='
                && i + 2 < b.len()
                && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
            {
                out.push(h * 16 + l);
                i += 3;
                continue;
            }
            out.push(b[i]);
            i += 1;
        }
        if !soft && n + 1 < lines.len() {
            out.push(b'\n');
        }
    }
    out
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// Standard base64 (RFC 4648), whitespace ignored. None when the body is not base64.
fn base64(body: &str) -> Option<Vec<u8>> {
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in body.bytes().filter(|c| !c.is_ascii_whitespace()) {
        if c == b'=' {
            break;
        }
        acc = (acc << 6) | val(c)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// `&gt;`, `&lt;`, `&amp;`, `&quot;`, `&apos;`, `&nbsp;`, `&#39;`, `&#x27;` decoded. None when
/// the text has none.
fn html_entities(text: &str) -> Option<String> {
    if !text.contains('&') {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut changed = false;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let decoded = tail.get(1..).and_then(|t| {
            let end = t.find(';').filter(|&e| e > 0 && e <= 8)?;
            let name = &t[..end];
            let c = match name {
                "gt" => '>',
                "lt" => '<',
                "amp" => '&',
                "quot" => '"',
                "apos" => '\'',
                "nbsp" => ' ',
                _ => {
                    let n = name.strip_prefix('#')?;
                    let code = match n.strip_prefix(['x', 'X']) {
                        Some(h) => u32::from_str_radix(h, 16).ok()?,
                        None => n.parse().ok()?,
                    };
                    char::from_u32(code)?
                }
            };
            Some((c, end + 2))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &tail[len..];
                changed = true;
            }
            None => {
                out.push('&');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    changed.then_some(out)
}

/// Markdown: code fence lines (```` ```text ````, `~~~`) dropped, and a line whose inline code
/// holds a fio line (a terse line, a result line between backticks) replaced by that code.
fn markdown(text: String) -> String {
    let fence = |l: &str| {
        let t = l.trim_start();
        t.starts_with("```") || t.starts_with("~~~")
    };
    let has_fence = text.lines().any(fence);
    let has_inline = text.contains('`');
    if !has_fence && !has_inline {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    for l in text.split_inclusive('\n') {
        if fence(l) {
            continue;
        }
        if l.matches('`').count() >= 2 {
            let spans: Vec<&str> = l
                .split('`')
                .skip(1)
                .step_by(2)
                .filter(|s| fio_like(s))
                .collect();
            if !spans.is_empty() {
                for s in spans {
                    out.push_str(s.trim());
                    out.push('\n');
                }
                continue;
            }
        }
        out.push_str(l);
    }
    out
}

/// Inline code that holds a line of fio's: terse (`3;fio-3.33;…`), a result line, a job
/// header.
fn fio_like(s: &str) -> bool {
    let s = s.trim();
    (s.matches(';').count() >= 20 && s.split(';').nth(1).is_some_and(|v| v.starts_with("fio-")))
        || s.contains("IOPS=")
        || s.contains("iops=")
        || s.contains(": (groupid=")
        || s.contains(": (g=")
        || fio_args(s).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_printable_is_decoded() {
        assert_eq!(
            quoted_printable("a=3Db, lo=\nng\r\nnext"),
            b"a=b, long\nnext".to_vec()
        );
    }

    #[test]
    fn base64_is_decoded() {
        assert_eq!(base64("aW9w\nc2NoZWNr").unwrap(), b"iopscheck".to_vec());
        assert_eq!(base64("aW8=").unwrap(), b"io".to_vec());
        assert!(base64("not base64!").is_none());
    }

    #[test]
    fn entities_are_decoded_and_plain_ampersands_kept() {
        assert_eq!(
            html_entities("a &gt; b &#39;x&#x27; &amp; c & d").unwrap(),
            "a > b 'x' & c & d"
        );
        assert!(html_entities("a & b").is_none());
    }

    #[test]
    fn inline_code_with_a_fio_line_is_taken_and_other_code_kept() {
        let t = "run `fio job.fio` and got `write: IOPS=1, BW=4KiB/s`\n".to_string();
        assert_eq!(markdown(t), "write: IOPS=1, BW=4KiB/s\n");
        let plain = "use `ls` here\n".to_string();
        assert_eq!(markdown(plain.clone()), plain);
    }
}

/// A fio command line pasted with its output (`$ fio --name=… --rw=randwrite … --end_fsync=1`):
/// the customer's statement of the job. Read under the same rule as the output: what the
/// output states wins, and where the two differ the difference is named.
#[derive(Debug, Clone, PartialEq)]
pub struct StatedCommand {
    /// The input's line the command begins on.
    pub line: usize,
    /// What its options say of the job (fio's defaults not filled in).
    pub shape: crate::job::JobShape,
    /// The command line holds every option of the job (no job file named): an option it does
    /// not give is fio's default. Only then are its limits (`rate_iops`…) known.
    pub complete: bool,
}

/// The fio command line in the text, when there is exactly one (several different ones: none
/// is taken, the paste does not say which ran).
pub(super) fn stated_command(text: &str) -> Result<Option<StatedCommand>, Note> {
    let mut found: Vec<(usize, Vec<String>)> = Vec::new();
    let lines: Vec<&str> = text.split('\n').collect();
    let mut i = 0;
    while i < lines.len() {
        let no = i + 1;
        let mut line = lines[i].trim_end_matches('\r').trim().to_string();
        // shell continuations
        while line.ends_with('\\') && i + 1 < lines.len() {
            line.pop();
            i += 1;
            line.push(' ');
            line.push_str(lines[i].trim_end_matches('\r').trim());
        }
        i += 1;
        if let Some(args) = fio_args(&line)
            && !found.iter().any(|(_, a)| *a == args)
        {
            found.push((no, args));
        }
    }
    match found.len() {
        0 => Ok(None),
        1 => {
            let (line, args) = found.remove(0);
            let mut opts = std::collections::HashMap::new();
            // in the order fio applies them (a kb_base reads only the sizes after it)
            let mut ranked: Vec<super::json::RankedOption> = Vec::new();
            let mut complete = true;
            for a in &args {
                match a.strip_prefix("--") {
                    Some(o) => {
                        let (k, v) = o.split_once('=').unwrap_or((o, "1"));
                        opts.insert(k.to_ascii_lowercase(), v.to_string());
                        let rank = ranked.len() as u32;
                        ranked.push((k.to_ascii_lowercase(), v.to_string(), rank));
                    }
                    // a job file: its options are not on the line
                    None => complete = false,
                }
            }
            let (mut shape, _) = super::json::shape_from_ranked(&ranked, None);
            if complete {
                // every option of the job is on the line: one it does not give is fio's
                // default (iodepth 1, numjobs 1, no end fsync)
                super::json::fill_defaults(&mut shape);
                // and no sync option it does not give: stated 0, which an output that shows
                // syncs without their option ([`crate::job::JobShape::synced`]) leaves open
                shape.fsync.get_or_insert(0);
                shape.fdatasync.get_or_insert(0);
                shape.limits = Some(crate::job::limits_of(
                    opts.iter().map(|(k, v)| (k.as_str(), v.as_str())),
                ));
            }
            Ok(Some(StatedCommand {
                line,
                shape,
                complete,
            }))
        }
        _ => Err(Note::CommandLines {
            lines: found.iter().map(|(l, _)| *l).collect(),
        }),
    }
}

/// The arguments of a fio command on a line (a shell prompt, `sudo`, a path to fio and inline
/// code marks before it allowed), when it gives at least one job option (`--rw=…`, `--bs=…`).
fn fio_args(line: &str) -> Option<Vec<String>> {
    let words = shell_words(line.trim_matches('`'));
    let at = words.iter().position(|w| {
        let base = w.rsplit('/').next().unwrap_or(w);
        base == "fio"
    })?;
    // before fio: a prompt, sudo, env settings, nothing else of substance
    if words[..at].iter().any(|w| {
        !(w.ends_with('$')
            || w.ends_with('#')
            || w.ends_with('>')
            || *w == "sudo"
            || w.contains('=')
            || w.ends_with(':'))
    }) {
        return None;
    }
    let args: Vec<String> = words[at + 1..]
        .iter()
        .take_while(|w| !matches!(w.as_str(), "|" | ">" | "2>&1" | "&&" | ";" | "|&" | ">>"))
        .cloned()
        .collect();
    let job_option = |a: &String| {
        a.strip_prefix("--")
            .and_then(|o| o.split_once('='))
            .is_some_and(|(k, _)| {
                matches!(
                    k,
                    "rw" | "readwrite" | "bs" | "blocksize" | "ioengine" | "iodepth" | "size"
                )
            })
    };
    args.iter().any(job_option).then_some(args)
}

/// Words as a POSIX shell splits them, single and double quotes honoured.
fn shell_words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut has = false;
    let mut quote: Option<char> = None;
    for c in s.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                has = true;
            }
            None if c.is_whitespace() => {
                if has || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    has = false;
                }
            }
            None => cur.push(c),
        }
    }
    if has || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// kubestr's text summary (`kubestr fio` without `-o json`): its per-job lines say IOPS and
/// KiB/s, but neither the run's length, its I/O count, the engine nor how the job ended. The
/// line it begins on, when the text is one.
pub(super) fn kubestr_summary(text: &str) -> Option<usize> {
    let mut job_line = None;
    let mut has_summary = false;
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if t.starts_with("FIO version - ") || t.starts_with("FIO test results") {
            job_line.get_or_insert(i + 1);
        }
        if t.starts_with("JobName: ") {
            job_line.get_or_insert(i + 1);
        }
        if t.starts_with("IOPS=") && t.contains("BW(KiB/s)=") {
            has_summary = true;
        }
    }
    job_line.filter(|_| has_summary)
}
