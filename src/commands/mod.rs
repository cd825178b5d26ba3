//! One module per command; `crate::app` dispatches to them.

pub mod bundle;
pub mod compare;
pub mod fio_runner;
pub mod fleet;
mod fleet_input;
pub mod import;
pub mod lock;
pub mod policy;
pub mod report;
pub mod run;
pub mod run_devices;
pub mod signals;
mod sustained;
pub mod verify;
