//! Helpers shared by the integration tests: reference data lives next to the tests.

#![allow(dead_code)]

use std::path::PathBuf;

use serde_json::Value;

pub fn data_dir(sub: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests").join(sub)
}

/// Upstream CRDs as JSON, keyed by `metadata.name`, sorted.
pub fn upstream_crds() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(data_dir("upstream-crds")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let crd: Value = serde_saphyr::from_str(&text).unwrap();
        let name = crd["metadata"]["name"].as_str().unwrap().to_string();
        out.push((name, crd));
    }
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
