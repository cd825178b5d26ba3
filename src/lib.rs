//! iopscheck: checks, with evidence kept over days, whether a machine's storage meets a
//! vendor's published minimum. See design.md for the data flow:
//! policy → job → engine → measurement → record → history → evaluation → report.

pub(crate) mod app;
pub(crate) mod bundle_input;
pub(crate) mod chain;
pub(crate) mod cli;
pub(crate) mod commands;
pub(crate) mod completions;
pub(crate) mod config;
pub(crate) mod deviation;
pub(crate) mod disk_class;
pub(crate) mod engine;
pub(crate) mod error;
pub(crate) mod evaluate;
pub(crate) mod evidence;
pub(crate) mod exit;
pub(crate) mod fio;
pub(crate) mod fleet;
pub(crate) mod history;
pub(crate) mod hold;
pub(crate) mod job;
pub(crate) mod machine;
pub(crate) mod manpage;
pub(crate) mod measure;
pub(crate) mod metrics;
pub(crate) mod numbers;
pub(crate) mod out;
pub(crate) mod policy;
pub(crate) mod printable;
pub(crate) mod record;
pub(crate) mod report;
pub(crate) mod run_index;
pub(crate) mod select;
pub(crate) mod shortest;
pub(crate) mod suggest;
pub(crate) mod syscalls;
pub(crate) mod terminal;
pub(crate) mod testfile;
pub(crate) mod trust;
pub(crate) mod units;
pub(crate) mod version;

pub use app::main;

/// What the integration tests (tests/), the fuzz properties and the simulation study
/// (bench/sequential.rs) use of the library, and nothing else: every other item is the crate's
/// own, so rustc reports what nothing uses. Laid out as the modules are, so a test names
/// `iopscheck::testing::policy::resolve` for `crate::policy::resolve`; a test that needs more
/// adds it here.
#[doc(hidden)]
pub mod testing {
    pub mod cli {
        pub use crate::cli::Cli;
    }
    pub mod evaluate {
        pub use crate::evaluate::{
            Evaluation, Group, Options, Scope, Stats, Verdict, Warning, evaluate_left_out,
        };
        pub mod sequential {
            pub use crate::evaluate::sequential::{Floor, Outcome, Settings, first_end};
        }
    }
    pub mod evidence {
        pub use crate::evidence::digest_history;
    }
    pub mod fio {
        pub use crate::fio::{FioFormat, FioOutput, ParseError, parse};
    }
    pub mod history {
        pub use crate::history::{Record, Source, Target, append, read_from};
    }
    pub mod machine {
        pub use crate::machine::{hostname, target_of};
    }
    pub mod measure {
        pub use crate::measure::{BwBasis, DirectionStats, DiskStat, Series};
        pub mod disk {
            pub use crate::measure::disk::disks_under;
        }
    }
    pub mod metrics {
        pub use crate::metrics::{from_measurement, iops_formula};
    }
    pub mod policy {
        pub use crate::policy::{BUILTIN, Level, Op, Policy, Rule, builtin_yaml, parse, resolve};
    }
    pub mod record {
        pub use crate::record::RunInfo;
    }
    pub mod report {
        pub use crate::report::{Format, OutputFile, Style, render, verdict_context, write_file};
    }
    pub mod numbers {
        pub use crate::numbers::{fmt_precise, fmt_value};
    }
    pub mod run_index {
        pub use crate::run_index::Records;
    }
    pub mod testfile {
        pub use crate::testfile::{TestFiles, stale_files};
    }
    pub mod units {
        pub use crate::units::num2str;
    }
}
