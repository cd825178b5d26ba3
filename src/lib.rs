//! iopscheck: checks, with evidence kept over days, whether a machine's storage meets a
//! vendor's published minimum. See design.md for the data flow:
//! policy → job → engine → measurement → record → history → evaluation → report.

pub mod app;
pub mod chain;
pub mod cli;
pub mod commands;
pub mod completions;
pub mod config;
pub mod deviation;
pub mod disk_class;
pub mod engine;
pub mod error;
pub mod evaluate;
pub mod evidence;
pub mod exit;
pub mod fio;
pub mod fleet;
pub mod history;
pub mod job;
pub mod machine;
pub mod manpage;
pub mod measure;
pub mod metrics;
pub mod numbers;
pub mod out;
pub mod policy;
pub mod printable;
pub mod record;
pub mod report;
pub mod run_index;
pub mod select;
pub mod shortest;
pub mod suggest;
pub mod syscalls;
pub mod terminal;
pub mod testfile;
pub mod trust;
pub mod units;
pub mod version;
