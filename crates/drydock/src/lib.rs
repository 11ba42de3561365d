//! The drydock binary's building blocks: a running instance (API server, controllers and
//! provider in one process), kubeconfig files, and benchmarks.

pub mod bench;
pub mod commands;
pub mod instance;
pub mod kubeconfig;
pub mod logging;
pub mod runtime_config;
