//! Benchmarks: `drydock bench` provisions a fleet; `drydock bench apiserver` measures the API server alone;
//! `drydock bench compare` runs the fleet bench of this build and another alternately.

pub mod apiserver;
pub mod compare;
pub mod fleet;
pub mod stats;
