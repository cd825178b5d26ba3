//! The module map stays a map (issue #28 item 5): no two top-level modules of src/ import each
//! other, no file holds more than 700 lines of code before its tests, and no function runs
//! over 150 lines. Read from the source, so `cargo test` (and CI with it) fails on a new cycle
//! or a new giant. What is allowed today is listed below, each with its reason; an entry that
//! no longer applies fails the test too, so the lists only shrink.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Two-way imports between top-level modules still to be broken (the pair in name order).
const ALLOWED_CYCLES: &[(&str, &str)] = &[];

/// Files over the size limit, with the reason each stays big.
const ALLOWED_BIG_FILES: &[(&str, &str)] = &[];

/// Functions over the length limit, by `path::name`, with the reason they stay long.
const ALLOWED_LONG_FNS: &[(&str, &str)] = &[
    (
        "engine/timed.rs::run",
        "the engine's hot loop: one body the compiler sees whole",
    ),
    (
        "fio/text/state.rs::dispatch",
        "the text reader's state machine, one arm per line kind",
    ),
];

/// Lines of code (not blank, not comment) a file may hold before its `#[cfg(test)]` items.
const MAX_FILE_LINES: usize = 700;
/// Lines a function may span, from its `fn` line to its closing brace.
const MAX_FN_LINES: usize = 150;

/// A source file with its comments and the contents of its string and char literals blanked
/// (each replaced by spaces, newlines kept, so line numbers and braces of code stay true),
/// and its `#[cfg(test)]` items cut out the same way.
struct Source {
    path: String,
    code: String,
    /// The names of `mod x;` declarations under `#[cfg(test)]`: whole files of tests.
    test_mods: Vec<String>,
}

fn blank_comments_and_literals(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = text[i..].find('\n').map_or(b.len(), |e| i + e);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                let mut j = i;
                while j < b.len() {
                    if b[j..].starts_with(b"/*") {
                        depth += 1;
                        j += 2;
                    } else if b[j..].starts_with(b"*/") {
                        depth -= 1;
                        j += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        j += 1;
                    }
                }
                blank(&mut out, i, j);
                i = j;
            }
            b'r' if (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
                && (i == 0 || !is_ident(b[i - 1])) =>
            {
                // a raw string r"…" or r#"…"#
                let mut j = i + 1;
                let mut hashes = 0;
                while b.get(j) == Some(&b'#') {
                    hashes += 1;
                    j += 1;
                }
                if b.get(j) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close: Vec<u8> = std::iter::once(b'"')
                    .chain(std::iter::repeat_n(b'#', hashes))
                    .collect();
                let start = j + 1;
                let end = b[start..]
                    .windows(close.len())
                    .position(|w| w == close.as_slice())
                    .map_or(b.len(), |p| start + p);
                blank(&mut out, start, end);
                i = end + close.len();
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                blank(&mut out, i + 1, j.min(b.len()));
                i = j + 1;
            }
            b'\'' => {
                // a char literal ('x', '\n', '\u{7f}', '{'), or a lifetime ('a), left alone
                if b.get(i + 1) == Some(&b'\\') {
                    let end = b[i + 2..]
                        .iter()
                        .position(|&c| c == b'\'')
                        .map_or(b.len(), |p| i + 2 + p);
                    blank(&mut out, i + 1, end);
                    i = end + 1;
                } else if b.get(i + 2) == Some(&b'\'') {
                    blank(&mut out, i + 1, i + 2);
                    i += 3;
                } else {
                    // a multi-byte char literal: up to 4 bytes then '
                    let lit = (i + 2..(i + 6).min(b.len())).find(|&j| b[j] == b'\'');
                    match lit {
                        Some(j) if !b[i + 1].is_ascii() => {
                            blank(&mut out, i + 1, j);
                            i = j + 1;
                        }
                        _ => i += 1,
                    }
                }
            }
            _ => i += 1,
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The index just past the brace that closes the one opened at `open`.
fn matching_brace(b: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (j, &c) in b.iter().enumerate().skip(open) {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
    }
    b.len()
}

/// Blanks each item under a `#[cfg(test)]` attribute (up to its `;` or its closing brace),
/// recording the names of test modules declared as files.
fn cut_test_items(code: &str, test_mods: &mut Vec<String>) -> String {
    let mut out = code.as_bytes().to_vec();
    let b = code.as_bytes();
    let mut from = 0;
    while let Some(p) = code[from..].find("#[cfg(test)]") {
        let start = from + p;
        let after = start + "#[cfg(test)]".len();
        let semi = code[after..].find(';').map(|e| after + e);
        let brace = code[after..].find('{').map(|e| after + e);
        let end = match (semi, brace) {
            (Some(s), Some(o)) if s < o => s + 1,
            (_, Some(o)) => matching_brace(b, o),
            (Some(s), None) => s + 1,
            (None, None) => b.len(),
        };
        let item = &code[after..end];
        let words: Vec<&str> = item.split_whitespace().collect();
        if item.trim_end().ends_with(';')
            && let Some(i) = words.iter().position(|w| *w == "mod")
        {
            test_mods.push(words[i + 1].trim_end_matches(';').to_string());
        }
        for c in &mut out[start..end] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
        from = end;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Every source file of src/ that is not a file of tests, read and blanked.
fn sources() -> Vec<Source> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rs_files(&src, &mut files);
    let mut all: Vec<Source> = files
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            let mut test_mods = Vec::new();
            let code = cut_test_items(&blank_comments_and_literals(&text), &mut test_mods);
            let path = p.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
            Source {
                path,
                code,
                test_mods,
            }
        })
        .collect();
    // the files that `#[cfg(test)] mod x;` declares hold tests only
    let mut test_files = BTreeSet::new();
    for s in &all {
        let dir = match Path::new(&s.path).file_name().unwrap().to_str().unwrap() {
            "mod.rs" | "lib.rs" | "main.rs" => Path::new(&s.path).parent().unwrap().to_path_buf(),
            f => Path::new(&s.path)
                .parent()
                .unwrap()
                .join(f.trim_end_matches(".rs")),
        };
        for m in &s.test_mods {
            test_files.insert(dir.join(format!("{m}.rs")).to_string_lossy().into_owned());
            test_files.insert(dir.join(m).join("mod.rs").to_string_lossy().into_owned());
        }
    }
    all.retain(|s| !test_files.contains(&s.path));
    all
}

/// The top-level module a file of src/ belongs to (`report/table.rs` → `report`), or None for
/// the crate root.
fn top_module(path: &str) -> Option<String> {
    let first = path.split('/').next().unwrap();
    match first {
        "lib.rs" | "main.rs" => None,
        f => Some(f.trim_end_matches(".rs").to_string()),
    }
}

/// The top-level modules a file's code names through `crate::` (`use crate::x`,
/// `use crate::{x, y::z}`, `crate::x::f()`).
fn crate_imports(code: &str) -> BTreeSet<String> {
    let b = code.as_bytes();
    let mut out = BTreeSet::new();
    let mut from = 0;
    while let Some(p) = code[from..].find("crate::") {
        let start = from + p;
        from = start + "crate::".len();
        if start > 0 && (is_ident(b[start - 1]) || b[start - 1] == b'$') {
            continue; // `$crate::`, `my_crate::`
        }
        let rest = &code[from..];
        if rest.starts_with('{') {
            // a group: the first path segment of each of its top-level entries
            let end = matching_brace(b, from) - 1;
            let group = &code[from + 1..end];
            let mut depth = 0;
            let mut entry_start = true;
            for (k, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => entry_start = true,
                    c if entry_start && depth == 0 && !c.is_whitespace() => {
                        entry_start = false;
                        let name: String = group[k..]
                            .chars()
                            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                            .collect();
                        if !name.is_empty() && name != "self" {
                            out.insert(name);
                        }
                    }
                    _ => {}
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

/// Pairs of top-level modules that import each other, each with one file on each side.
fn cycles(sources: &[Source]) -> BTreeMap<(String, String), (String, String)> {
    let modules: BTreeSet<String> = sources.iter().filter_map(|s| top_module(&s.path)).collect();
    // (from, to) → the first file of `from` that imports `to`
    let mut edges: BTreeMap<(String, String), String> = BTreeMap::new();
    for s in sources {
        let Some(from) = top_module(&s.path) else {
            continue;
        };
        for to in crate_imports(&s.code) {
            if to != from && modules.contains(&to) {
                edges
                    .entry((from.clone(), to))
                    .or_insert_with(|| s.path.clone());
            }
        }
    }
    let mut out = BTreeMap::new();
    for ((a, b), file_ab) in &edges {
        if a < b
            && let Some(file_ba) = edges.get(&(b.clone(), a.clone()))
        {
            out.insert((a.clone(), b.clone()), (file_ab.clone(), file_ba.clone()));
        }
    }
    out
}

/// Lines of code before a file's tests: lines with something left once comments and test
/// items are blanked.
fn code_lines(code: &str) -> usize {
    code.lines().filter(|l| !l.trim().is_empty()).count()
}

/// Each function with a body: its name, first line (1-based) and the lines it spans.
fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(p) = code[from..].find("fn ") {
        let start = from + p;
        from = start + 3;
        if start > 0 && is_ident(b[start - 1]) {
            continue;
        }
        let name: String = code[from..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        // the body's brace, unless a `;` ends a declaration without one first
        let semi = code[from..].find(';').map(|e| from + e);
        let Some(open) = code[from..].find('{').map(|e| from + e) else {
            continue;
        };
        if semi.is_some_and(|s| s < open) {
            continue;
        }
        let end = matching_brace(b, open);
        let first = code[..start].matches('\n').count() + 1;
        let last = code[..end].matches('\n').count() + 1;
        out.push((name, first, last - first + 1));
    }
    out
}

#[test]
fn no_two_top_level_modules_import_each_other() {
    let found = cycles(&sources());
    let allowed: BTreeSet<(String, String)> = ALLOWED_CYCLES
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let mut problems = Vec::new();
    for ((a, b), (fa, fb)) in &found {
        if !allowed.contains(&(a.clone(), b.clone())) {
            problems.push(format!(
                "{a} ↔ {b}: src/{fa} imports crate::{b} and src/{fb} imports crate::{a}; \
                 move what both need into a lower module"
            ));
        }
    }
    for (a, b) in &allowed {
        if !found.contains_key(&(a.clone(), b.clone())) {
            problems.push(format!(
                "{a} ↔ {b} no longer import each other: remove the pair from ALLOWED_CYCLES"
            ));
        }
    }
    assert!(problems.is_empty(), "\n{}\n", problems.join("\n"));
}

#[test]
fn no_file_holds_more_than_700_lines_of_code_before_its_tests() {
    let allowed: BTreeMap<&str, &str> = ALLOWED_BIG_FILES.iter().copied().collect();
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for s in sources() {
        let n = code_lines(&s.code);
        if n > MAX_FILE_LINES {
            seen.insert(s.path.clone());
            if !allowed.contains_key(s.path.as_str()) {
                problems.push(format!(
                    "src/{} has {n} lines of code before its tests (at most {MAX_FILE_LINES}): \
                     split it by what its parts hold",
                    s.path
                ));
            }
        }
    }
    for path in allowed.keys() {
        if !seen.contains(*path) {
            problems.push(format!(
                "src/{path} is within {MAX_FILE_LINES} lines now: remove it from ALLOWED_BIG_FILES"
            ));
        }
    }
    assert!(problems.is_empty(), "\n{}\n", problems.join("\n"));
}

#[test]
fn no_function_runs_over_150_lines() {
    let allowed: BTreeMap<&str, &str> = ALLOWED_LONG_FNS.iter().copied().collect();
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for s in sources() {
        for (name, line, len) in functions(&s.code) {
            if len > MAX_FN_LINES {
                let key = format!("{}::{name}", s.path);
                if !allowed.contains_key(key.as_str()) {
                    problems.push(format!(
                        "src/{}:{line}: fn {name} spans {len} lines (at most {MAX_FN_LINES})",
                        s.path
                    ));
                }
                seen.insert(key);
            }
        }
    }
    for key in allowed.keys() {
        if !seen.contains(*key) {
            problems.push(format!(
                "{key} is within {MAX_FN_LINES} lines now: remove it from ALLOWED_LONG_FNS"
            ));
        }
    }
    assert!(problems.is_empty(), "\n{}\n", problems.join("\n"));
}

/// The checker reads what it should: a group import, a path in code, a test module cut out,
/// a brace in a string or a char not taken for code.
#[test]
fn the_reader_sees_imports_and_bodies_as_rustc_does() {
    let text = r##"
use crate::{alpha::A, beta::{self, B}, gamma};
fn f() -> u8 { let s = "}{"; let c = '{'; let r = r#"}"#; crate::delta::g(); 1 }
// crate::comment::x
#[cfg(test)]
mod tests { use crate::epsilon; fn t() {} }
"##;
    let mut test_mods = Vec::new();
    let code = cut_test_items(&blank_comments_and_literals(text), &mut test_mods);
    let got: Vec<String> = crate_imports(&code).into_iter().collect();
    assert_eq!(got, ["alpha", "beta", "delta", "gamma"]);
    let fns = functions(&code);
    assert_eq!(fns, [("f".to_string(), 3, 1)]);
    assert_eq!(code_lines(&code), 2);
    let mut mods = Vec::new();
    cut_test_items("#[cfg(test)]\nmod tests;\n", &mut mods);
    assert_eq!(mods, ["tests"]);
}
