//! Benchmarks: `drydock bench` provisions a fleet; `drydock bench apiserver` measures the API server alone.

pub mod apiserver;
pub mod fleet;
pub mod stats;
