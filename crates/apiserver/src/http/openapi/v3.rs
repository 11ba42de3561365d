//! OpenAPI 3.0 documents, one per served group-version, as kube-apiserver serves them at
//! `/openapi/v3/api/v1` and `/openapi/v3/apis/<group>/<version>`.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::{kinds, meta, names, paths};
use crate::registry::Registry;

/// The key of a group-version in the `/openapi/v3` index: `api/v1` or `apis/<g>/<v>`.
pub fn index_key(group: &str, version: &str) -> String {
    if group.is_empty() { format!("api/{version}") } else { format!("apis/{group}/{version}") }
}

/// The paths and schemas of one group-version's document.
struct Parts {
    paths: Map<String, Value>,
    schemas: Map<String, Value>,
}

/// Every served group-version's document, keyed by [`index_key`].
pub fn documents(reg: &Registry) -> BTreeMap<String, Value> {
    let shared = meta::schemas();
    let mut docs: BTreeMap<String, Parts> = BTreeMap::new();
    for r in reg.all() {
        let def = &r.def;
        let Parts { paths, schemas } = docs
            .entry(index_key(&def.group, &def.version))
            .or_insert_with(|| Parts { paths: Map::new(), schemas: shared.clone() });
        paths::Resource::new(def).add_paths(paths);
        let kind_name = names::definition(&def.group, &def.version, &def.kind);
        if schemas.contains_key(&kind_name) {
            continue;
        }
        let (kind, hoisted) = kinds::kind_schema(def);
        for (name, schema) in hoisted {
            schemas.entry(name).or_insert(schema);
        }
        schemas.insert(kind_name, kind);
        schemas
            .insert(names::definition(&def.group, &def.version, &format!("{}List", def.kind)), kinds::list_schema(def));
    }
    docs.into_iter().map(|(key, parts)| (key, document(parts.paths, parts.schemas))).collect()
}

fn document(paths: Map<String, Value>, schemas: Map<String, Value>) -> Value {
    json!({
        "openapi": "3.0.0",
        "info": {"title": "drydock", "version": env!("CARGO_PKG_VERSION")},
        "paths": paths,
        "components": {"schemas": schemas},
    })
}
