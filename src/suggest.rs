//! Did-you-mean: the closest of a set of words to a misspelt one, for subcommands, policy
//! names and flag values.

/// Edit distance (insertions, deletions, substitutions, adjacent transpositions).
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, v) in d[0].iter_mut().enumerate() {
        *v = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// The candidate `word` most likely meant: one that contains it or starts with it (`aio` →
/// `posixaio`, `uring` → `io_uring`), else the nearest by edit distance within a third of its
/// length (at least 1, at most 3). None when nothing is close.
pub fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let w = word.to_ascii_lowercase();
    if w.is_empty() {
        return None;
    }
    let mut best: Option<(usize, &str)> = None;
    for &c in candidates {
        let lc = c.to_ascii_lowercase();
        if lc == w {
            continue;
        }
        let d = distance(&w, &lc);
        // A fragment of the name (3 letters or more) is as close as it gets.
        let d = if w.len() >= 3 && lc.contains(&w) {
            0
        } else {
            d
        };
        if best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    let (d, c) = best?;
    let limit = (w.chars().count() / 3).clamp(1, 3);
    (d <= limit).then_some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misspellings_find_what_was_meant_and_nonsense_finds_nothing() {
        let subs = ["run", "import", "report", "policy", "fleet", "bundle"];
        assert_eq!(closest("rn", &subs), Some("run"));
        assert_eq!(closest("imprt", &subs), Some("import"));
        assert_eq!(closest("reprot", &subs), Some("report"));
        assert_eq!(closest("xyzzy", &subs), None);
        let engines = ["auto", "posixaio", "io_uring", "psync", "libaio", "fio"];
        assert_eq!(closest("aio", &engines), Some("posixaio"));
        assert_eq!(closest("uring", &engines), Some("io_uring"));
        assert_eq!(closest("libiao", &engines), Some("libaio"));
        assert_eq!(closest("swimlan", &["swimlane", "other"]), Some("swimlane"));
    }
}
