use drydock_api::capi::core::v1beta2::{ClusterClassVariable, ClusterVariable};
use serde_json::json;

use super::super::json_pointer::array_index;
use super::*;

fn patch(v: Value) -> ClusterClassPatch {
    serde_json::from_value(v).unwrap()
}

/// The patches in order, as the topology runs them when all are inline.
fn apply(patches: &[ClusterClassPatch], items: &mut [Patchable<'_>]) -> Result<(), PatchError> {
    patches.iter().try_for_each(|p| apply_inline(p, items))
}

/// A one-definition patch.
fn simple(name: &str, api: &str, kind: &str, match_resources: Value, json_patches: Value) -> ClusterClassPatch {
    patch(json!({"name": name, "definitions": [{
        "selector": {"apiVersion": api, "kind": kind, "matchResources": match_resources},
        "jsonPatches": json_patches,
    }]}))
}

/// A patch of the `a/v1` `K` control-plane template.
fn cp(name: &str, json_patches: Value) -> ClusterClassPatch {
    simple(name, "a/v1", "K", json!({"controlPlane": true}), json_patches)
}

fn ak() -> Value {
    json!({"apiVersion": "a/v1", "kind": "K"})
}

fn object(api: &str, kind: &str) -> Value {
    json!({"apiVersion": api, "kind": kind, "metadata": {"name": "t"}, "spec": {"template": {"spec": {}}}})
}

fn vars(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

/// Applies `patches` to one object of role `target`, with `v` as global and item variables.
fn run(
    patches: &[ClusterClassPatch],
    target: Target<'_>,
    mut obj: Value,
    v: &Map<String, Value>,
) -> Result<Value, PatchError> {
    let mut items = [Patchable { target, object: &mut obj, variables: v, holder: HolderReference::default() }];
    apply(patches, &mut items)?;
    Ok(obj)
}

fn set_marker(match_resources: Value) -> ClusterClassPatch {
    simple(
        "p",
        "infra/v1",
        "T",
        match_resources,
        json!([{"op": "add", "path": "/spec/template/spec/hit", "value": true}]),
    )
}

fn hit(p: &ClusterClassPatch, target: Target<'_>, api: &str, kind: &str) -> bool {
    let out = run(std::slice::from_ref(p), target, object(api, kind), &Map::new()).unwrap();
    out["spec"]["template"]["spec"].get("hit").is_some()
}

#[test]
fn selectors_match_role_api_version_and_kind() {
    let md = |class| Target::MachineDeployment { class };
    let mp = |class| Target::MachinePool { class };
    let infra = set_marker(json!({"infrastructureCluster": true}));
    assert!(hit(&infra, Target::InfrastructureCluster, "infra/v1", "T"));
    assert!(!hit(&infra, Target::ControlPlane, "infra/v1", "T"));
    assert!(!hit(&infra, Target::InfrastructureCluster, "infra/v2", "T"));
    assert!(!hit(&infra, Target::InfrastructureCluster, "infra/v1", "U"));

    let cp = set_marker(json!({"controlPlane": true}));
    assert!(hit(&cp, Target::ControlPlane, "infra/v1", "T"));
    assert!(!hit(&cp, Target::InfrastructureCluster, "infra/v1", "T"));
    assert!(!hit(&cp, md("default-worker"), "infra/v1", "T"));

    let mds = set_marker(json!({"machineDeploymentClass": {"names": ["exact", "pre*", "*suf"]}}));
    for class in ["exact", "pre-x", "pre", "x-suf"] {
        assert!(hit(&mds, md(class), "infra/v1", "T"), "{class}");
    }
    for class in ["exactly", "xpre", "sufx"] {
        assert!(!hit(&mds, md(class), "infra/v1", "T"), "{class}");
    }
    assert!(!hit(&mds, mp("exact"), "infra/v1", "T"));
    assert!(!hit(&mds, Target::ControlPlane, "infra/v1", "T"));

    let all_md = set_marker(json!({"machineDeploymentClass": {"names": ["*"]}}));
    assert!(hit(&all_md, md("anything"), "infra/v1", "T"));
    assert!(!hit(&all_md, md("anything"), "infra/v1", "U"));

    let mps = set_marker(json!({"machinePoolClass": {"names": ["pool-*"]}}));
    assert!(hit(&mps, mp("pool-a"), "infra/v1", "T"));
    assert!(!hit(&mps, md("pool-a"), "infra/v1", "T"));
    assert!(!hit(&mps, mp("other"), "infra/v1", "T"));

    let none = set_marker(json!({"controlPlane": false, "machineDeploymentClass": {}}));
    assert!(!hit(&none, Target::ControlPlane, "infra/v1", "T"));
    assert!(!hit(&none, md("a"), "infra/v1", "T"));
}

fn ops(json_patches: Value, obj: Value) -> Result<Value, PatchError> {
    let p = cp("ops", json_patches);
    run(&[p], Target::ControlPlane, obj, &vars(json!({"v": {"list": [1, 2]}})))
}

#[test]
fn add_creates_missing_parents_and_replaces_existing() {
    let obj = json!({"apiVersion": "a/v1", "kind": "K", "spec": {"keep": 1, "x": null}});
    let out = ops(
        json!([
            {"op": "add", "path": "/spec/template/spec/a/b", "value": "deep"},
            {"op": "add", "path": "/spec/x/y", "value": 2},
            {"op": "add", "path": "/spec/list/-", "value": "first"},
            {"op": "add", "path": "/spec/keep", "value": 3},
        ]),
        obj,
    )
    .unwrap();
    assert_eq!(
        out["spec"],
        json!({"keep": 3, "x": {"y": 2}, "list": ["first"], "template": {"spec": {"a": {"b": "deep"}}}})
    );
}

#[test]
fn array_add_insert_replace_remove() {
    let obj = json!({"apiVersion": "a/v1", "kind": "K", "spec": {"l": ["a", "c"]}});
    let out = ops(
        json!([
            {"op": "add", "path": "/spec/l/1", "value": "b"},
            {"op": "add", "path": "/spec/l/-", "value": "d"},
            {"op": "add", "path": "/spec/l/4", "value": "e"},
            {"op": "replace", "path": "/spec/l/0", "value": "A"},
            {"op": "remove", "path": "/spec/l/4"},
        ]),
        obj,
    )
    .unwrap();
    assert_eq!(out["spec"]["l"], json!(["A", "b", "c", "d"]));
}

#[test]
fn replace_and_remove_need_the_target_and_escapes_work() {
    let obj = json!({"apiVersion": "a/v1", "kind": "K", "metadata": {"labels": {"a/b": "1", "c~d": "2", "gone": "3"}}});
    let out = ops(
        json!([
            {"op": "replace", "path": "/metadata/labels/a~1b", "value": "x"},
            {"op": "add", "path": "/metadata/labels/c~0d", "value": "y"},
            {"op": "remove", "path": "/metadata/labels/gone"},
        ]),
        obj.clone(),
    )
    .unwrap();
    assert_eq!(out["metadata"]["labels"], json!({"a/b": "x", "c~d": "y"}));

    let err = ops(json!([{"op": "replace", "path": "/spec/nope", "value": 1}]), obj.clone()).unwrap_err();
    assert!(matches!(err, PatchError::JsonPatch { definition: 0, index: 0, .. }), "{err:?}");
    assert!(
        err.to_string().starts_with("patch \"ops\": definitions[0].jsonPatches[0] (replace /spec/nope): "),
        "{err}"
    );
    let err = ops(json!([{"op": "remove", "path": "/metadata/labels/none"}]), obj.clone()).unwrap_err();
    assert!(err.to_string().contains("nothing to remove"), "{err}");
    let err = ops(json!([{"op": "remove", "path": "/metadata/labels/x~2"}]), obj.clone()).unwrap_err();
    assert!(err.to_string().contains("invalid escape"), "{err}");
    assert!(array_index("01", 3, true).unwrap_err().contains("not an array index"));
    assert!(array_index("3", 3, false).unwrap_err().contains("out of range"));
    assert_eq!((array_index("3", 3, true), array_index("-", 3, true)), (Ok(3), Ok(3)));
    assert_eq!(pointer_tokens("").unwrap(), Vec::<String>::new());
    assert!(pointer_tokens("spec").is_err());
    let err = ops(json!([{"op": "move", "path": "/spec"}]), obj.clone()).unwrap_err();
    assert!(err.to_string().contains("unsupported op \"move\""), "{err}");
    let err = ops(json!([{"op": "add", "path": "/spec/a"}]), obj).unwrap_err();
    assert!(err.to_string().contains("needs a value"), "{err}");
}

#[test]
fn values_from_variables_and_templates() {
    let v = vars(json!({
        "builtin": {"cluster": {"name": "c1"}},
        "arr": [{"x": "first"}],
        "image": {"repository": "registry.k8s.io", "tag": "v1"},
    }));
    let p = cp(
        "values",
        json!([
            {"op": "add", "path": "/spec/name", "valueFrom": {"variable": "builtin.cluster.name"}},
            {"op": "add", "path": "/spec/first", "valueFrom": {"variable": "arr[0].x"}},
            {"op": "add", "path": "/spec/image", "valueFrom": {"variable": "image"}},
            {"op": "add", "path": "/spec/files", "valueFrom": {"template":
                "- path: /etc/{{ .builtin.cluster.name }}\n  content: {{ .image.repository }}:{{ .image.tag }}\n  replicas: 3\n  enabled: true"}},
            {"op": "add", "path": "/spec/plain", "valueFrom": {"template": "{{ .image.tag }}"}},
        ]),
    );
    let out = run(&[p], Target::ControlPlane, ak(), &v).unwrap();
    assert_eq!(out["spec"]["name"], json!("c1"));
    assert_eq!(out["spec"]["first"], json!("first"));
    assert_eq!(out["spec"]["image"], json!({"repository": "registry.k8s.io", "tag": "v1"}));
    assert_eq!(
        out["spec"]["files"],
        json!([{"path": "/etc/c1", "content": "registry.k8s.io:v1", "replicas": 3, "enabled": true}])
    );
    assert_eq!(out["spec"]["plain"], json!("v1"));

    let missing = cp("m", json!([{"op": "add", "path": "/spec/x", "valueFrom": {"variable": "nope.field"}}]));
    let err = run(&[missing], Target::ControlPlane, ak(), &v).unwrap_err();
    assert_eq!(
        err.to_string(),
        "patch \"m\": definitions[0].jsonPatches[0] (add /spec/x): valueFrom.variable: variable \"nope\" not found"
    );

    let bad = cp("t", json!([{"op": "add", "path": "/spec/x", "valueFrom": {"template": "{{ nope }}"}}]));
    let err = run(&[bad], Target::ControlPlane, ak(), &v).unwrap_err();
    assert!(matches!(&err, PatchError::Template { patch, .. } if patch == "t"), "{err:?}");
    assert!(err.to_string().contains("template: definitions[0].jsonPatches[0].valueFrom.template:"), "{err}");
}

#[test]
fn enabled_if_sees_the_global_variables() {
    let mk = |cond: &str| {
        let mut p = set_marker(json!({"controlPlane": true}));
        p.enabled_if = Some(cond.into());
        p
    };
    let global = vars(json!({"on": true, "s": ""}));
    let go = |p: ClusterClassPatch| {
        let out = run(&[p], Target::ControlPlane, object("infra/v1", "T"), &global).unwrap();
        out["spec"]["template"]["spec"].get("hit").is_some()
    };
    assert!(go(mk("{{ .on }}")));
    assert!(go(mk("  {{ if .on }}true{{ end }}\n")));
    assert!(!go(mk(r#"{{ ne .s "" }}"#)));
    assert!(!go(mk("{{ .missing }}")));
    assert!(!go(mk("yes")));
    let err = run(&[mk("{{ if .on }}")], Target::ControlPlane, object("infra/v1", "T"), &global).unwrap_err();
    assert!(err.to_string().starts_with("patch \"p\": template: enabledIf:"), "{err}");
}

#[test]
fn enabled_if_is_evaluated_per_template_with_its_variables() {
    // As upstream's e2e class gates its PodSecurity patch on the control plane's version.
    let mut p = set_marker(json!({"controlPlane": true, "machineDeploymentClass": {"names": ["*"]}}));
    p.enabled_if = Some(r#"{{ semverCompare ">= v1.24" .builtin.controlPlane.version }}"#.into());
    let (cp_vars, md_vars) =
        (vars(json!({"builtin": {"controlPlane": {"version": "v1.33.0"}}})), vars(json!({"builtin": {}})));
    let (mut cp_obj, mut md_obj) = (object("infra/v1", "T"), object("infra/v1", "T"));
    let mut items = [
        Patchable {
            target: Target::ControlPlane,
            object: &mut cp_obj,
            variables: &cp_vars,
            holder: HolderReference::default(),
        },
        Patchable {
            target: Target::MachineDeployment { class: "a" },
            object: &mut md_obj,
            variables: &md_vars,
            holder: HolderReference::default(),
        },
    ];
    let err = apply(std::slice::from_ref(&p), &mut items).unwrap_err();
    assert!(err.to_string().contains("enabledIf"), "the worker has no builtin.controlPlane: {err}");
    p.definitions.as_mut().unwrap()[0].selector.match_resources.machine_deployment_class = None;
    let mut items = [
        Patchable {
            target: Target::ControlPlane,
            object: &mut cp_obj,
            variables: &cp_vars,
            holder: HolderReference::default(),
        },
        Patchable {
            target: Target::MachineDeployment { class: "a" },
            object: &mut md_obj,
            variables: &md_vars,
            holder: HolderReference::default(),
        },
    ];
    apply(&[p], &mut items).unwrap();
    assert!(cp_obj["spec"]["template"]["spec"].get("hit").is_some(), "{cp_obj}");
    assert!(md_obj["spec"]["template"]["spec"].get("hit").is_none(), "not selected, not evaluated: {md_obj}");
}

#[test]
fn patches_run_in_order_on_each_others_output() {
    let first = cp("first", json!([{"op": "add", "path": "/spec/kind", "value": "L"}]));
    // The second patch selects by the changed kind, replaces what the first added and reads it back.
    let second = patch(json!({"name": "second", "definitions": [
        {"selector": {"apiVersion": "a/v1", "kind": "K", "matchResources": {"controlPlane": true}},
         "jsonPatches": [{"op": "replace", "path": "/spec/kind", "value": "M"}]},
        {"selector": {"apiVersion": "a/v1", "kind": "K", "matchResources": {"controlPlane": true}},
         "jsonPatches": [{"op": "add", "path": "/spec/after", "valueFrom": {"template": "{{ .x }}"}}]},
    ]}));
    let v = vars(json!({"x": "z"}));
    let out = run(&[first.clone(), second.clone()], Target::ControlPlane, ak(), &v).unwrap();
    assert_eq!(out["spec"], json!({"kind": "M", "after": "z"}));
    let err = run(&[second, first], Target::ControlPlane, ak(), &v).unwrap_err();
    assert!(matches!(&err, PatchError::JsonPatch { patch, .. } if patch == "second"), "{err:?}");
}

#[test]
fn items_use_their_own_variables() {
    let p = simple(
        "p",
        "a/v1",
        "K",
        json!({"machineDeploymentClass": {"names": ["*"]}}),
        json!([{"op": "add", "path": "/spec/v", "valueFrom": {"variable": "x"}}]),
    );
    let (va, vb) = (vars(json!({"x": 1})), vars(json!({"x": 2})));
    let (mut a, mut b) = (ak(), ak());
    let mut items = [
        Patchable {
            target: Target::MachineDeployment { class: "a" },
            object: &mut a,
            variables: &va,
            holder: HolderReference::default(),
        },
        Patchable {
            target: Target::MachineDeployment { class: "b" },
            object: &mut b,
            variables: &vb,
            holder: HolderReference::default(),
        },
    ];
    apply(&[p], &mut items).unwrap();
    assert_eq!((a["spec"]["v"].clone(), b["spec"]["v"].clone()), (json!(1), json!(2)));
}

/// The control-plane patches of upstream's in-memory quick-start ClusterClass.
#[test]
fn quick_start_control_plane_patches() {
    let class_vars: Vec<ClusterClassVariable> = serde_json::from_value(json!([
        {"name": "etcdImageTag", "required": true, "schema": {"openAPIV3Schema": {"type": "string", "default": ""}}},
        {"name": "coreDNSImageTag", "required": true, "schema": {"openAPIV3Schema": {"type": "string", "default": ""}}},
        {"name": "kubeadmControlPlaneMaxSurge", "required": false, "schema": {"openAPIV3Schema": {"type": "string", "default": ""}}},
    ]))
    .unwrap();
    let (api, kind) = ("controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlaneTemplate");
    let cp_selector = json!({"apiVersion": api, "kind": kind, "matchResources": {"controlPlane": true}});
    let patches: Vec<ClusterClassPatch> = serde_json::from_value(json!([
        {"name": "etcdImageTag", "definitions": [{"selector": cp_selector, "jsonPatches": [{
            "op": "add", "path": "/spec/template/spec/kubeadmConfigSpec/clusterConfiguration/etcd",
            "valueFrom": {"template": "local:\n  imageTag: {{ .etcdImageTag }}\n"}}]}]},
        {"name": "coreDNSImageTag", "definitions": [{"selector": cp_selector, "jsonPatches": [{
            "op": "add", "path": "/spec/template/spec/kubeadmConfigSpec/clusterConfiguration/dns",
            "valueFrom": {"template": "imageTag: {{ .coreDNSImageTag }}\n"}}]}]},
        {"name": "kubeadmControlPlaneMaxSurge", "enabledIf": "{{ ne .kubeadmControlPlaneMaxSurge \"\" }}",
         "definitions": [{"selector": cp_selector, "jsonPatches": [{
            "op": "add", "path": "/spec/template/spec/rolloutStrategy/rollingUpdate/maxSurge",
            "valueFrom": {"template": "{{ .kubeadmControlPlaneMaxSurge }}"}}]}]},
    ]))
    .unwrap();
    let kcpt = json!({
        "apiVersion": api, "kind": kind,
        "metadata": {"name": "in-memory-quick-start-control-plane", "namespace": "default"},
        "spec": {"template": {"spec": {"kubeadmConfigSpec": {"clusterConfiguration": {
            "apiServer": {"certSANs": ["localhost", "127.0.0.1"]}}}}}},
    });
    let render = |set: Value| {
        let set: Vec<ClusterVariable> = serde_json::from_value(set).unwrap();
        let mut global = variables::values(&class_vars, &set).unwrap();
        global.insert("builtin".into(), json!({"cluster": {"name": "qs", "namespace": "default"}}));
        run(&patches, Target::ControlPlane, kcpt.clone(), &global).unwrap()
    };

    let out =
        render(json!([{"name": "etcdImageTag", "value": "3.5.16-0"}, {"name": "coreDNSImageTag", "value": "v1.11.3"}]));
    let spec = &out["spec"]["template"]["spec"];
    assert_eq!(
        spec["kubeadmConfigSpec"]["clusterConfiguration"],
        json!({"apiServer": {"certSANs": ["localhost", "127.0.0.1"]}, "etcd": {"local": {"imageTag": "3.5.16-0"}}, "dns": {"imageTag": "v1.11.3"}})
    );
    assert!(spec.get("rolloutStrategy").is_none(), "maxSurge defaults to \"\": patch disabled");
    assert_eq!(out["metadata"], kcpt["metadata"]);

    let out = render(json!([
        {"name": "etcdImageTag", "value": "3.5.16-0"}, {"name": "coreDNSImageTag", "value": "v1.11.3"},
        {"name": "kubeadmControlPlaneMaxSurge", "value": "1"},
    ]));
    // The template renders `1`, which reads as YAML as the integer 1, as upstream's does.
    assert_eq!(out["spec"]["template"]["spec"]["rolloutStrategy"], json!({"rollingUpdate": {"maxSurge": 1}}));

    // Unset tags default to "", which the templates render as an empty (null) value.
    let out = render(json!([]));
    assert_eq!(
        out["spec"]["template"]["spec"]["kubeadmConfigSpec"]["clusterConfiguration"]["etcd"],
        json!({"local": {"imageTag": null}})
    );
}
