//! The drydock binary's building blocks: a running instance (API server, controllers and
//! provider in one process), the controllers on their own, kubeconfig files, and benchmarks.

pub mod api_faults;
pub mod bench;
pub mod commands;
pub mod controllers;
pub mod instance;
pub mod kubeconfig;
pub mod leader;
pub mod logging;
pub mod runtime_config;
pub mod store_args;
