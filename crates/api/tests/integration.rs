//! drydock-api's integration tests in one binary: one link instead of one per file.

mod common;
mod conversion_roundtrip;
mod crd_compat;
mod sample_manifest;
mod structural;
