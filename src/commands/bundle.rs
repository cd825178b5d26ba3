//! `iopscheck bundle`: one .tar.gz for support.

use crate::app::{Ctx, usage};
use crate::cli::BundleArgs;

pub fn run(_args: BundleArgs, _ctx: &Ctx) -> anyhow::Result<u8> {
    Err(usage("bundle: not available in this build yet"))
}
