//! Property test of conversion: random objects valid for a version's schema, for every kind
//! drydock serves in several versions, come back identical from any other version
//! (v1beta1 → v1beta2 → v1beta1 and v1beta2 → v1beta1 → v1beta2; the second is also a
//! v1beta1 client writing back what it read: the stored v1beta2 object does not change).
//!
//! Objects are generated from the CRD's own `openAPIV3Schema` (types, enums, formats, bounds,
//! required fields), with a seeded generator: a failure names the kind, version and seed.

use drydock_api::conversion::NoRefVersions;
use serde_json::{Map, Value, json};

/// Cases per kind and version.
const CASES: u64 = 150;
const MAX_DEPTH: usize = 12;

/// SplitMix64: small, seeded, good enough to vary shapes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

fn bound(s: &Value, key: &str) -> Option<u64> {
    s.get(key).and_then(Value::as_u64)
}

fn string(rng: &mut Rng, s: &Value) -> Value {
    match s.get("format").and_then(Value::as_str) {
        Some("date-time") => {
            let secs = 1_700_000_000 + rng.below(100_000_000);
            let t =
                jiff::Timestamp::from_second(i64::try_from(secs).unwrap_or(0)).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
            return json!(t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string());
        }
        Some("byte") => return json!("ZHJ5ZG9jaw=="),
        _ => {}
    }
    let min = bound(s, "minLength").unwrap_or(0);
    let max = bound(s, "maxLength").unwrap_or(12).min(min + 12).max(min);
    let len = min + rng.below(max - min + 1);
    let alphabet = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let text: String = (0..len).map(|_| char::from(alphabet[rng.below(alphabet.len() as u64) as usize])).collect();
    json!(text)
}

fn integer(rng: &mut Rng, s: &Value) -> Value {
    let min = s.get("minimum").and_then(Value::as_i64).unwrap_or(-5).max(-1000);
    let max = s.get("maximum").and_then(Value::as_i64).unwrap_or(min + 1000).min(min + 100_000);
    let span = u64::try_from(max - min).unwrap_or(0) + 1;
    json!(min + i64::try_from(rng.below(span)).unwrap_or(0))
}

/// A random value valid for schema node `s`.
fn generate(rng: &mut Rng, s: &Value, depth: usize) -> Value {
    if let Some(options) = s.get("enum").and_then(Value::as_array).filter(|o| !o.is_empty()) {
        return options[rng.below(options.len() as u64) as usize].clone();
    }
    if s.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        return if rng.chance(50) { json!(rng.below(10)) } else { json!(format!("{}%", rng.below(100))) };
    }
    match s.get("type").and_then(Value::as_str) {
        Some("string") => string(rng, s),
        Some("integer") => integer(rng, s),
        Some("number") => json!(rng.below(1000)),
        Some("boolean") => json!(rng.chance(50)),
        Some("array") => {
            let min = bound(s, "minItems").unwrap_or(0);
            let max = bound(s, "maxItems").unwrap_or(3).min(3).max(min);
            let len = if depth >= MAX_DEPTH { min } else { min + rng.below(max - min + 1) };
            let items = s.get("items").cloned().unwrap_or(json!({}));
            let mut out: Vec<Value> = (0..len).map(|_| generate(rng, &items, depth + 1)).collect();
            // Sets and map-lists must not repeat a key: keep the first of each.
            let keys: Vec<String> = s
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .map(|k| k.iter().filter_map(Value::as_str).map(str::to_string).collect())
                .unwrap_or_default();
            let is_set = s.get("x-kubernetes-list-type").and_then(Value::as_str) == Some("set");
            let mut seen = Vec::new();
            out.retain(|item| {
                let id = if keys.is_empty() {
                    if !is_set {
                        return true;
                    }
                    item.clone()
                } else {
                    Value::Array(keys.iter().map(|k| item.get(k).cloned().unwrap_or(Value::Null)).collect())
                };
                if seen.contains(&id) {
                    return false;
                }
                seen.push(id);
                true
            });
            Value::Array(out)
        }
        Some("object") | None => object(rng, s, depth),
        Some(_) => Value::Null,
    }
}

fn object(rng: &mut Rng, s: &Value, depth: usize) -> Value {
    let mut out = Map::new();
    let required: Vec<&str> = s
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(props) = s.get("properties").and_then(Value::as_object) {
        for (name, child) in props {
            // A node that accepts any JSON says nothing of the shape the type wants: left out.
            let any = ["type", "properties", "additionalProperties", "items", "enum", "x-kubernetes-int-or-string"]
                .iter()
                .all(|k| child.get(k).is_none());
            let wanted = required.contains(&name.as_str()) || (!any && depth < MAX_DEPTH && rng.chance(55));
            if wanted {
                out.insert(name.clone(), generate(rng, child, depth + 1));
            }
        }
    } else if let Some(values) = s.get("additionalProperties").filter(|v| v.is_object()) {
        for i in 0..rng.below(3) {
            out.insert(format!("key{i}"), generate(rng, values, depth + 1));
        }
    } else if s.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
        out.insert("free".into(), json!({"form": [rng.below(9), "text"]}));
    }
    let min = bound(s, "minProperties").unwrap_or(0);
    if (out.len() as u64) < min
        && let Some((name, child)) = s.get("properties").and_then(Value::as_object).and_then(|p| p.iter().next())
    {
        out.insert(name.clone(), generate(rng, child, depth + 1));
    }
    Value::Object(out)
}

/// A random object of `version`, with metadata a client would send.
fn random_object(rng: &mut Rng, group: &str, kind: &str, version: &Value) -> Value {
    let schema = &version["schema"]["openAPIV3Schema"];
    let mut obj = Map::new();
    for part in ["spec", "status"] {
        if let Some(s) = schema["properties"].get(part) {
            obj.insert(part.into(), generate(rng, s, 1));
        }
    }
    obj.insert("apiVersion".into(), json!(format!("{group}/{}", version["name"].as_str().unwrap_or_default())));
    obj.insert("kind".into(), json!(kind));
    obj.insert(
        "metadata".into(),
        json!({"name": "n", "namespace": "ns", "labels": {"l": "v"}, "annotations": {"a": "b"}, "generation": 3}),
    );
    Value::Object(obj)
}

#[test]
fn random_objects_of_every_versioned_kind_round_trip() {
    let kinds: Vec<_> = drydock_api::capi::kinds().into_iter().filter(|k| k.conversion.is_some()).collect();
    assert!(!kinds.is_empty());
    for k in &kinds {
        let conversion = k.conversion.as_ref().expect("filtered");
        let crd = serde_json::to_value(&k.crd).expect("crd json");
        let group = k.group();
        let versions = crd["spec"]["versions"].as_array().expect("versions");
        for from in versions {
            for to in versions.iter().filter(|v| v["name"] != from["name"]) {
                let (from_av, to_av) = (
                    format!("{group}/{}", from["name"].as_str().unwrap_or_default()),
                    format!("{group}/{}", to["name"].as_str().unwrap_or_default()),
                );
                for seed in 0..CASES {
                    let mut rng = Rng(seed.wrapping_mul(7919) ^ u64::from(k.kind().len() as u32));
                    let obj = random_object(&mut rng, group, k.kind(), from);
                    let ctx = || {
                        format!(
                            "{} {from_av} → {to_av}, seed {seed}:\n{}",
                            k.kind(),
                            serde_json::to_string_pretty(&obj).unwrap_or_default()
                        )
                    };
                    let there = conversion
                        .convert(obj.clone(), &to_av, &NoRefVersions)
                        .unwrap_or_else(|e| panic!("{e}\n{}", ctx()));
                    assert_eq!(there["apiVersion"], to_av.as_str(), "{}", ctx());
                    let back = conversion
                        .convert(there.clone(), &from_av, &NoRefVersions)
                        .unwrap_or_else(|e| panic!("{e}\n{}", ctx()));
                    assert_eq!(back, obj, "round trip changed the object: {}", ctx());
                }
            }
        }
    }
}
