//! Re-splitting text that lost its line breaks (copied from a web page or a ticket): cut
//! before each of fio's markers.

use super::TextLine;
use super::markers::{NAMED, host_tag, starts_marker};

/// Splits into lines and re-splits lines that hold several of fio's lines (text copied from a
/// web page or a ticket). Returns whether anything was re-split.
pub(super) fn split_lines(physical: &[(String, usize)]) -> (Vec<TextLine<'_>>, bool) {
    let mut out = Vec::new();
    let mut resplit = false;
    for (raw, no) in physical {
        let raw = raw.as_str();
        let no = *no;
        let points = split_points(raw);
        if points.is_empty() {
            out.push(TextLine { text: raw, no });
            continue;
        }
        // ETA lines glued together (no newline between `Jobs:` updates) are not worth a note.
        resplit |= points.iter().any(|&p| !raw[p..].starts_with("Jobs: "));
        let mut from = 0;
        for p in points {
            out.push(TextLine {
                text: &raw[from..p],
                no,
            });
            from = p;
        }
        out.push(TextLine {
            text: &raw[from..],
            no,
        });
    }
    (out, resplit)
}

/// Where a line holding several fio lines should be cut (byte offsets, ascending, none at the
/// line's start). A well-formed line holds one marker at most, at its start, so it is never
/// cut; a lone `name: (groupid=…` marker after other text is not cut either (the name may
/// contain spaces).
pub(super) fn split_points(line: &str) -> Vec<usize> {
    let mut start = line.len() - line.trim_start().len();
    // a client/server host tag belongs to the line it starts
    if let Some((_, rest)) = host_tag(line.trim()) {
        start = line.len() - line.trim_start().len() + (line.trim().len() - rest.len());
    }
    if line.len() - start < 8 {
        return Vec::new();
    }
    let mut plain = Vec::new();
    let mut named = Vec::new();
    let bytes = line.as_bytes();
    for (i, _) in line.char_indices() {
        if i > 0 && !bytes[i - 1].is_ascii_whitespace() {
            continue;
        }
        if bytes[i].is_ascii_whitespace() {
            continue;
        }
        if starts_marker(&line[i..]) {
            plain.push(i);
        }
    }
    for pat in NAMED {
        let mut from = 0;
        while let Some(off) = line[from..].find(pat) {
            let at = from + off;
            // the name is the token before the marker (a bounded look back keeps a
            // pathological line linear)
            let mut s = at;
            while s > 0 && at - s < 512 && !bytes[s - 1].is_ascii_whitespace() {
                s -= 1;
            }
            // `All clients: (groupid=…`: the name has a space
            if pat == ": (groupid=" && line[..s].ends_with("All ") {
                s -= 4;
            }
            if s == 0 || bytes[s - 1].is_ascii_whitespace() {
                named.push(s);
            }
            from = at + pat.len();
        }
    }
    let mut all: Vec<usize> = plain.iter().chain(named.iter()).copied().collect();
    all.sort_unstable();
    all.dedup();
    let inner: Vec<usize> = all.iter().copied().filter(|&p| p > start).collect();
    let plain_inner = plain.iter().any(|&p| p > start);
    if all.len() >= 2 || plain_inner {
        inner
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_formed_lines_are_never_cut() {
        for l in [
            "random-write: (groupid=0, jobs=1): err= 0: pid=19150: Mon Nov 30 08:12:48 2026",
            "my job: (groupid=0, jobs=1): err= 0: pid=19150: Mon Nov 30 08:12:48 2026",
            "  write: IOPS=69.5k, BW=272MiB/s (285MB/s)(1408MiB/5185msec); 0 zone resets",
            "  read : io=29854MB, bw=254727KB/s, iops=63647, runt=120014msec",
            "  cpu          : usr=9.14%, sys=22.01%, ctx=720818, majf=0, minf=24",
            "  WRITE: bw=272MiB/s (285MB/s), 272MiB/s-272MiB/s (285MB/s-285MB/s), io=1408MiB (1476MB), run=5185-5185msec",
            "Jobs: 1 (f=1): [w(1)][60.0%][w=256MiB/s][w=65.5k IOPS][eta 00m:02s]",
            "     issued rwts: total=0,360410,0,0 short=0,0,0,0 dropped=0,0,0,0",
            "    clat percentiles (nsec):",
            "  vda: ios=2/101699, merge=0/204, ticks=0/107533, in_queue=108729, util=68.51%",
        ] {
            assert!(split_points(l).is_empty(), "{l}");
        }
    }

    #[test]
    fn joined_lines_are_cut_before_each_marker() {
        let l = "[eta 00m:00s] random-write: (groupid=0, jobs=1): err= 0: pid=1: Mon Nov 30 08:12:48 2026   write: IOPS=69.5k, BW=272MiB/s (285MB/s)(1408MiB/5185msec) clat (nsec): min=1, max=2, avg=1, stdev=0";
        let parts: Vec<&str> = {
            let p = split_points(l);
            let mut v = Vec::new();
            let mut from = 0;
            for x in p {
                v.push(l[from..x].trim());
                from = x;
            }
            v.push(l[from..].trim());
            v
        };
        assert_eq!(parts.len(), 4, "{parts:?}");
        assert!(parts[1].starts_with("random-write: (groupid="));
        assert!(parts[2].starts_with("write: IOPS="));
        assert!(parts[3].starts_with("clat (nsec)"));
    }
}
