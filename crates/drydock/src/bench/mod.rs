//! Benchmarks: `drydock bench apiserver` measures the API server alone.

pub mod apiserver;
pub mod stats;
