//! The tool's version, as `iopscheck --version` prints it and every output states it: the
//! package's version with the commit it was built from (build.rs), e.g. "0.1.0 (commit
//! 2bffeb402a49)". Records, reports in every format, the fleet's, the man page and the bundle
//! take it from here.

use serde::Serialize;

/// The version with the commit it was built from.
pub const VERSION: &str = env!("IOPSCHECK_VERSION");

/// [`VERSION`] in its two parts, for a document that states them apart (a bundle's
/// manifest): the package's version, and the commit when the build knew it.
pub fn parts() -> (&'static str, Option<&'static str>) {
    match VERSION.split_once(" (commit ") {
        Some((v, c)) => (v, Some(c.trim_end_matches(')'))),
        None => (VERSION, None),
    }
}

/// The `tool` object of every JSON document: `{ "name": "iopscheck", "version": VERSION }`.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Tool {
    pub name: &'static str,
    pub version: &'static str,
}

/// This tool, as JSON documents name it.
pub const TOOL: Tool = Tool {
    name: "iopscheck",
    version: VERSION,
};
