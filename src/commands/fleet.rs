//! `iopscheck fleet`: many nodes' results, one verdict.

use crate::app::{Ctx, usage};
use crate::cli::FleetArgs;

pub fn run(_args: FleetArgs, _ctx: &Ctx) -> anyhow::Result<u8> {
    Err(usage("fleet: not available in this build yet"))
}
