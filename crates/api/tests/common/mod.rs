//! Helpers shared by the integration tests: reference data lives next to the tests.

#![allow(dead_code)]

use std::path::PathBuf;

use serde_json::Value;

pub fn data_dir(sub: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests").join(sub)
}

/// Upstream's CRDs (Cluster API v1.9) as the facts the tests compare, keyed by
/// `metadata.name`, sorted. `scripts/crd-facts.py` derives the file from upstream's CRD
/// files: structure, types, enums, required fields, defaults, names, printer columns and
/// subresources, without descriptions.
pub fn upstream_crds() -> Vec<(String, Value)> {
    upstream_crds_at("crds-v1.9.json")
}

/// Facts of another upstream release (`crds-v1.14.json`: v1.14, every served version).
pub fn upstream_crds_at(file: &str) -> Vec<(String, Value)> {
    let text = std::fs::read_to_string(data_dir("upstream").join(file)).unwrap();
    let crds: Vec<Value> = serde_json::from_str(&text).unwrap();
    let mut out: Vec<(String, Value)> =
        crds.into_iter().map(|crd| (crd["metadata"]["name"].as_str().unwrap().to_string(), crd)).collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// drydock's generated CRDs as JSON, keyed by `metadata.name`.
pub fn our_crds() -> Vec<(String, Value)> {
    drydock_api::capi::crds()
        .into_iter()
        .map(|c| {
            let v = serde_json::to_value(&c).unwrap();
            (v["metadata"]["name"].as_str().unwrap().to_string(), v)
        })
        .collect()
}

/// The sample manifest's documents as JSON.
pub fn sample_docs() -> Vec<Value> {
    let text = std::fs::read_to_string(data_dir("data").join("cluster-in-memory.yaml")).unwrap();
    serde_saphyr::from_multiple(&text).unwrap()
}
