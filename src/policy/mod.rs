//! Policies: what to run (a job) and how to judge it (rules, evidence), with the vendor's
//! publication they encode. Built-in policies are embedded from `policies/`.
//!
//! - `schema.rs`: what a policy file may say (a new key goes here);
//! - `load.rs`: resolving a name or a path, reading the file safely, YAML with error locations
//!   (the only door through which YAML enters);
//! - `check.rs`: what a valid policy is beyond its types (a new rule about policies goes here);
//! - `builtin.rs`: the policies shipped inside the binary;
//! - `diff.rs`: how one policy departs from another (`policy diff`).

mod builtin;
mod check;
pub mod devices;
mod diff;
mod load;
mod schema;

pub use builtin::{BUILTIN, builtin_yaml};
pub use check::check_runs;
pub use diff::diff;
pub use load::{Loaded, Origin, SYSTEM_POLICY_DIR, load_file, names, parse, resolve};
pub use schema::{
    Aggregate, FleetRule, Level, Op, Per, Policy, Publication, Rule, Sustained, TestOrigin,
};
