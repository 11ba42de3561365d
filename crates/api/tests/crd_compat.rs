//! drydock's generated CRDs against upstream's: every field upstream has must exist with the
//! same type, optional where upstream's is optional, and names, printer columns and
//! subresources must match. Upstream's side is the facts `scripts/crd-facts.py` derives from
//! upstream's CRD files: `tests/upstream/crds-v1.9.json` (v1beta1 and the other versions
//! v1.9 stores) and `tests/upstream/crds-v1.14.json` (v1beta2, for every kind drydock
//! serves in v1beta2, IPAM's v1alpha1, and every served version of the kinds v1.9 did not
//! have).

use crate::common;

use std::collections::BTreeSet;

use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Diff {
    /// Upstream has the field, we do not.
    Missing(String),
    /// We have a field upstream does not.
    Extra(String),
    /// Types differ: (path, upstream, ours).
    Type(String, String, String),
    /// Upstream requires the field and we do not, or the other way round.
    Required(String, bool),
    /// Allowed values differ: (path, upstream, ours).
    Enum(String, Vec<String>, Vec<String>),
}

fn enum_values(s: &Value) -> Vec<String> {
    let mut v: Vec<String> = s
        .get("enum")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter(|v| !v.is_null()).map(Value::to_string).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn node_type(s: &Value) -> String {
    if s.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        return "int-or-string".into();
    }
    match s.get("type").and_then(Value::as_str) {
        Some(t) => t.to_string(),
        None if s.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) => "any".into(),
        None => "<none>".into(),
    }
}

fn required(s: &Value) -> BTreeSet<String> {
    s.get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(String::from).collect())
        .unwrap_or_default()
}

fn walk(up: &Value, ours: &Value, path: &str, out: &mut Vec<Diff>) {
    let (ut, ot) = (node_type(up), node_type(ours));
    if ut != ot {
        out.push(Diff::Type(path.to_string(), ut, ot));
        return;
    }
    let (ue, oe) = (enum_values(up), enum_values(ours));
    if ue != oe {
        out.push(Diff::Enum(path.to_string(), ue, oe));
    }
    let empty = serde_json::Map::new();
    let up_props = up.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    let our_props = ours.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    // Upstream free-form objects (preserve-unknown-fields without properties) end the walk.
    if !up_props.is_empty() || !our_props.is_empty() {
        let (ur, or) = (required(up), required(ours));
        for (name, u) in up_props {
            let p = format!("{path}.{name}");
            match our_props.get(name) {
                Some(o) => walk(u, o, &p, out),
                None => out.push(Diff::Missing(p.clone())),
            }
            if our_props.contains_key(name) && ur.contains(name) != or.contains(name) {
                out.push(Diff::Required(p, ur.contains(name)));
            }
        }
        for name in our_props.keys().filter(|n| !up_props.contains_key(*n)) {
            out.push(Diff::Extra(format!("{path}.{name}")));
        }
    }
    if let (Some(u), Some(o)) = (up.get("items"), ours.get("items")) {
        walk(u, o, &format!("{path}[]"), out);
    }
    if let (Some(u), Some(o)) = (up.get("additionalProperties"), ours.get("additionalProperties"))
        && u.is_object()
        && o.is_object()
    {
        walk(u, o, &format!("{path}{{}}"), out);
    }
}

fn storage_version(crd: &Value) -> &Value {
    let versions = crd["spec"]["versions"].as_array().unwrap();
    versions.iter().find(|v| v["storage"] == Value::Bool(true)).unwrap_or(&versions[0])
}

fn version<'a>(crd: &'a Value, name: &str) -> Option<&'a Value> {
    crd["spec"]["versions"].as_array()?.iter().find(|v| v["name"] == name)
}

/// Deliberate differences: (CRD name or "*", kind of difference, path suffix; a leading `=`
/// means the whole path).
const ALLOWED: &[(&str, &str, &str)] = &[
    // kube-derive's root type has a required `spec`; upstream lets it be omitted. Every
    // manifest in practice has one, and admission needs it to default anything.
    ("*", "required", "=.spec"),
    // Manifests omit the MachineDeployment/MachineSet selector and upstream's webhook fills it
    // before the schema is checked; ours is optional in the schema so that a server checking
    // required fields before admission still accepts such manifests. Admission always sets it.
    ("machinedeployments.cluster.x-k8s.io", "required", "=.spec.selector"),
    ("machinesets.cluster.x-k8s.io", "required", "=.spec.selector"),
    // Every object has metadata; upstream marks it required on MachineDrainRule only.
    ("machinedrainrules.cluster.x-k8s.io", "required", "=.metadata"),
    // k8s-openapi's NodeSystemInfo (Kubernetes 1.33) has `swap`, newer than upstream's
    // vendored copy; the field is optional and only ever written from a real Node.
    ("machines.cluster.x-k8s.io", "extra", "=.status.nodeInfo.swap"),
    // k8s-openapi's LocalObjectReference, ConfigMapKeySelector and SecretKeySelector require
    // `name`; upstream's copies default it to "". A reference without a name points nowhere.
    ("ipaddressclaims.ipam.cluster.x-k8s.io", "required", ".status.addressRef.name"),
    ("ipaddresses.ipam.cluster.x-k8s.io", "required", ".spec.claimRef.name"),
    ("*", "required", ".valueFrom.configMapKeyRef.name"),
    ("*", "required", ".valueFrom.secretKeyRef.name"),
    // k8s-openapi's metav1.Condition schema has no enum on `status`; only controllers write
    // these (status subresource), and they write True/False/Unknown. In v1beta2 they are
    // `status.conditions` itself.
    ("*", "enum", "=.status.v1beta2.conditions[].status"),
    // The same metav1.Condition, where v1beta2 kinds keep their conditions.
    ("*", "enum", "=.status.conditions[].status"),
    // k8s-openapi's EnvVarSource (Kubernetes 1.33) predates `fileKeyRef` (1.34), which
    // upstream v1.14's copy has; the field is optional (kubeadm `extraEnvs` only).
    ("*", "missing", ".valueFrom.fileKeyRef"),
    // drydock's extension of its own in-memory machines: addresses claimed from IP pools.
    ("inmemorymachines.infrastructure.cluster.x-k8s.io", "extra", "=.spec.addressesFromPools"),
    // DevMachinePool instances can be simulated with in-memory timings, as DevMachines are.
    ("devmachinepools.infrastructure.cluster.x-k8s.io", "extra", "=.spec.backend.inMemory"),
    ("devmachinepooltemplates.infrastructure.cluster.x-k8s.io", "extra", "=.spec.template.spec.backend.inMemory"),
    ("inmemorymachines.infrastructure.cluster.x-k8s.io", "extra", "=.status.addresses"),
    ("inmemorymachinetemplates.infrastructure.cluster.x-k8s.io", "extra", "=.spec.template.spec.addressesFromPools"),
];

fn allowed(crd: &str, kind: &str, path: &str) -> bool {
    ALLOWED.iter().any(|(c, k, p)| {
        let path_matches = match p.strip_prefix('=') {
            Some(exact) => path == exact,
            None => path.ends_with(p),
        };
        (*c == "*" || *c == crd) && *k == kind && path_matches
    })
}

/// Differences between two versions' schemas.
fn schema_diffs(name: &str, up: &Value, ours: &Value) -> Vec<String> {
    let mut diffs = Vec::new();
    walk(&up["schema"]["openAPIV3Schema"], &ours["schema"]["openAPIV3Schema"], "", &mut diffs);
    diffs
        .into_iter()
        .filter_map(|d| {
            let (kind, path, text) = match &d {
                Diff::Missing(p) => ("missing", p, format!("missing field {p}")),
                Diff::Extra(p) => ("extra", p, format!("extra field {p}")),
                Diff::Type(p, u, o) => ("type", p, format!("type of {p}: upstream {u}, ours {o}")),
                Diff::Enum(p, u, o) => ("enum", p, format!("enum of {p}: upstream {u:?}, ours {o:?}")),
                Diff::Required(p, r) => {
                    ("required", p, format!("{p} is {} upstream", if *r { "required" } else { "optional" }))
                }
            };
            (!allowed(name, kind, path)).then(|| format!("{name} {}: {text}", up["name"].as_str().unwrap_or("")))
        })
        .collect()
}

/// The CRDs drydock serves that upstream v1.9 did not have, compared with upstream v1.14's:
/// the Dev and Docker providers' kinds, ClusterResourceSet with its binding, and ExtensionConfig.
const NEWER_KINDS: &[&str] = &[
    "clusterresourcesetbindings.addons.cluster.x-k8s.io",
    "clusterresourcesets.addons.cluster.x-k8s.io",
    "devclusters.infrastructure.cluster.x-k8s.io",
    "devclustertemplates.infrastructure.cluster.x-k8s.io",
    "devmachinepools.infrastructure.cluster.x-k8s.io",
    "devmachinepooltemplates.infrastructure.cluster.x-k8s.io",
    "devmachines.infrastructure.cluster.x-k8s.io",
    "devmachinetemplates.infrastructure.cluster.x-k8s.io",
    "dockerclusters.infrastructure.cluster.x-k8s.io",
    "dockerclustertemplates.infrastructure.cluster.x-k8s.io",
    "dockermachinepools.infrastructure.cluster.x-k8s.io",
    "dockermachinepooltemplates.infrastructure.cluster.x-k8s.io",
    "dockermachines.infrastructure.cluster.x-k8s.io",
    "dockermachinetemplates.infrastructure.cluster.x-k8s.io",
    "extensionconfigs.runtime.cluster.x-k8s.io",
];

fn pair_with_ours(upstream: Vec<(String, Value)>) -> Vec<(String, Value, Value)> {
    let ours = common::our_crds();
    upstream
        .into_iter()
        .map(|(name, up)| {
            let o = ours
                .iter()
                .find(|(n, _)| *n == name)
                .unwrap_or_else(|| panic!("no generated CRD for upstream {name}"))
                .1
                .clone();
            (name, up, o)
        })
        .collect()
}

/// Each upstream v1.9 CRD with ours.
fn paired() -> Vec<(String, Value, Value)> {
    pair_with_ours(common::upstream_crds())
}

/// Each upstream v1.14 CRD of [`NEWER_KINDS`] with ours.
fn paired_newer() -> Vec<(String, Value, Value)> {
    let v1_14 = common::upstream_crds_at("crds-v1.14.json");
    let newer: Vec<(String, Value)> = v1_14.into_iter().filter(|(n, _)| NEWER_KINDS.contains(&n.as_str())).collect();
    assert_eq!(newer.len(), NEWER_KINDS.len(), "upstream v1.14 has every newer kind");
    pair_with_ours(newer)
}

/// The versions compared: upstream v1.9's stored version against ours of the same name,
/// upstream v1.14's v1beta2 against ours, for each kind drydock serves in v1beta2, and the
/// other versions of the newer kinds against upstream v1.14's.
fn paired_versions() -> Vec<(String, Value, Value)> {
    let mut out = Vec::new();
    for (name, up, ours) in paired() {
        let up_v = storage_version(&up).clone();
        let ours_v = version(&ours, up_v["name"].as_str().unwrap())
            .unwrap_or_else(|| panic!("{name} does not serve {}", up_v["name"]))
            .clone();
        out.push((name, up_v, ours_v));
    }
    let v1_14 = common::upstream_crds_at("crds-v1.14.json");
    for (name, ours) in common::our_crds() {
        let Some(ours_v) = version(&ours, "v1beta2") else { continue };
        let up = &v1_14.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("upstream v1.14 has no {name}")).1;
        let up_v = version(up, "v1beta2").unwrap_or_else(|| panic!("upstream v1.14 {name} has no v1beta2"));
        out.push((name, up_v.clone(), ours_v.clone()));
    }
    // Versions before v1beta1 that upstream v1.14 still serves (IPAM's v1alpha1).
    for (name, ours) in common::our_crds() {
        let Some(up) = v1_14.iter().find(|(n, _)| *n == name).map(|(_, up)| up) else { continue };
        for ours_v in ours["spec"]["versions"].as_array().into_iter().flatten() {
            let v = ours_v["name"].as_str().unwrap_or_default();
            if v.contains("alpha") && !NEWER_KINDS.contains(&name.as_str()) {
                let up_v = version(up, v).unwrap_or_else(|| panic!("upstream v1.14 {name} has no {v}"));
                out.push((name.clone(), up_v.clone(), ours_v.clone()));
            }
        }
    }
    for (name, up, ours) in paired_newer() {
        for ours_v in ours["spec"]["versions"].as_array().into_iter().flatten().filter(|v| v["name"] != "v1beta2") {
            let v = ours_v["name"].as_str().unwrap_or_default();
            let up_v = version(&up, v).unwrap_or_else(|| panic!("upstream v1.14 {name} has no {v}"));
            out.push((name.clone(), up_v.clone(), ours_v.clone()));
        }
    }
    out
}

#[test]
fn every_upstream_kind_is_generated_and_nothing_else() {
    let mut up: BTreeSet<_> = common::upstream_crds().into_iter().map(|(n, _)| n).collect();
    assert_eq!(up.len(), 20, "upstream v1.9's kinds");
    up.extend(paired_newer().into_iter().map(|(n, _, _)| n));
    assert_eq!(up.len(), 35);
    let ours: BTreeSet<_> = common::our_crds().into_iter().map(|(n, _)| n).collect();
    assert_eq!(up, ours);
}

#[test]
fn schemas_match_upstream() {
    let diffs: Vec<String> = paired_versions().iter().flat_map(|(n, u, o)| schema_diffs(n, u, o)).collect();
    assert!(diffs.is_empty(), "{} schema differences:\n{}", diffs.len(), diffs.join("\n"));
}

/// The CRDs whose served versions are checked against upstream v1.14's: the newer kinds,
/// and IPAM's (v1alpha1, v1beta1 deprecated, v1beta2).
fn served_as_v1_14() -> Vec<(String, Value, Value)> {
    let v1_14 = common::upstream_crds_at("crds-v1.14.json");
    let ipam: Vec<(String, Value)> = v1_14.into_iter().filter(|(n, _)| n.ends_with(".ipam.cluster.x-k8s.io")).collect();
    assert_eq!(ipam.len(), 2, "upstream v1.14's IPAM kinds");
    paired_newer().into_iter().chain(pair_with_ours(ipam)).collect()
}

#[test]
fn newer_kinds_and_ipam_serve_upstream_v1_14_versions_deprecated_alike() {
    for (name, up, ours) in served_as_v1_14() {
        let served = |crd: &Value| -> Vec<(String, bool)> {
            let mut v: Vec<(String, bool)> = crd["spec"]["versions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|v| v["served"] == true)
                .map(|v| (v["name"].as_str().unwrap_or_default().to_string(), v["deprecated"] == true))
                .collect();
            v.sort();
            v
        };
        assert_eq!(served(&up), served(&ours), "{name}: served versions and their deprecation");
    }
}

#[test]
fn names_scope_and_versions_match_upstream() {
    for (name, up, ours) in paired().into_iter().chain(paired_newer()) {
        assert_eq!(up["spec"]["group"], ours["spec"]["group"], "{name}");
        assert_eq!(up["spec"]["scope"], ours["spec"]["scope"], "{name}");
        for key in ["kind", "plural", "singular", "shortNames", "categories"] {
            assert_eq!(up["spec"]["names"][key], ours["spec"]["names"][key], "{name} names.{key}");
        }
        let stored = storage_version(&up)["name"].as_str().unwrap();
        assert!(version(&ours, stored).is_some_and(|v| v["served"] == true), "{name} serves {stored}");
    }
}

#[test]
fn printer_columns_match_upstream() {
    for (name, up, ours) in paired_versions() {
        // Descriptions are our own words; everything else must match.
        let cols = |crd: &Value| {
            let mut cols = crd.get("additionalPrinterColumns").cloned().unwrap_or(Value::Null);
            for c in cols.as_array_mut().into_iter().flatten() {
                c.as_object_mut().map(|m| m.remove("description"));
            }
            cols
        };
        assert_eq!(cols(&up), cols(&ours), "{name} {}", up["name"]);
    }
}

#[test]
fn subresources_match_upstream() {
    for (name, up, ours) in paired_versions() {
        let sub = |crd: &Value| {
            let s = crd.get("subresources").cloned().unwrap_or(Value::Null);
            // An empty subresources object means none.
            if s.as_object().is_some_and(|m| m.is_empty()) { Value::Null } else { s }
        };
        assert_eq!(sub(&up), sub(&ours), "{name} {}", up["name"]);
    }
}
