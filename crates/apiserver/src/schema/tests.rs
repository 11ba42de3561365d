use std::sync::Arc;

use serde_json::{Value, json};

use super::*;

fn schema() -> Value {
    json!({"type":"object","properties":{
        "spec":{"type":"object","required":["clusterName"],"properties":{
            "clusterName":{"type":"string"},
            "replicas":{"type":"integer","default":1,"minimum":0,"maximum":10},
            "maxSurge":{"x-kubernetes-int-or-string":true},
            "mode":{"type":"string","enum":["A","B"]},
            "labels":{"type":"object","additionalProperties":{"type":"string"}},
            "items":{"type":"array","items":{"type":"object","properties":{
                "name":{"type":"string"},"port":{"type":"integer","default":80}}}},
            "raw":{"type":"object","x-kubernetes-preserve-unknown-fields":true,
                   "properties":{"known":{"type":"object","properties":{"a":{"type":"string"}}}}},
            "opt":{"type":"string"},
            "nullable":{"type":"string","nullable":true,"default":"d"},
            "dropped":{"type":"string","default":"d"},
            "parent":{"type":"object","properties":{"child":{"type":"string","default":"c"}}},
            "withDefault":{"type":"object","default":{},"properties":{"child":{"type":"string","default":"c"}}},
            "name":{"type":"string","maxLength":5,"minLength":2,"pattern":"^[a-z]+$"},
            "tags":{"type":"array","maxItems":2,"items":{"type":"string"}},
            "ratio":{"type":"number","multipleOf":0.5,"exclusiveMaximum":true,"maximum":2},
            "when":{"type":"string","format":"date-time"},
            "template":{"type":"object","x-kubernetes-embedded-resource":true,
                        "properties":{"spec":{"type":"object","properties":{"x":{"type":"integer"}}}}},
            "choice":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},
                      "oneOf":[{"required":["a"]},{"required":["b"]}]}
        }},
        "status":{"type":"object","properties":{"ready":{"type":"boolean"}}}
    }})
}

fn validator(s: Value) -> Validator {
    match Validator::compile(Arc::new(s)) {
        Ok(v) => v,
        Err(e) => panic!("schema does not compile: {e:?}"),
    }
}

fn messages(errs: &[FieldError]) -> Vec<String> {
    errs.iter().map(ToString::to_string).collect()
}

#[test]
fn prunes_unknown_and_applies_defaults() {
    let v = validator(schema());
    let mut obj = json!({"apiVersion":"x/v1","kind":"X","metadata":{"name":"a","bogus":1},
        "spec":{"clusterName":"c","foo":1,"labels":{"a":"b"},"items":[{"name":"n","extra":true}],
                "raw":{"anything":{"goes":1},"known":{"a":"x","b":"pruned"}},"opt":null,"maxSurge":"25%",
                "nullable":null,"dropped":null,"parent":{},
                "template":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","junk":1},"spec":{"x":1,"y":2}}},
        "top":1});
    let out = v.process(&mut obj, None);
    assert_eq!(
        out.unknown,
        vec![
            "metadata.bogus",
            "spec.foo",
            "spec.items[0].extra",
            "spec.raw.known.b",
            "spec.template.metadata.junk",
            "spec.template.spec.y",
            "top"
        ]
    );
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let spec = &obj["spec"];
    assert_eq!(spec["replicas"], 1);
    assert_eq!(spec["items"][0]["port"], 80, "defaults apply inside array items");
    assert!(spec.get("opt").is_none(), "null of a non-nullable field is dropped");
    assert_eq!(spec["nullable"], Value::Null, "a nullable null is kept and not defaulted");
    assert_eq!(spec["dropped"], "d", "a dropped null is then defaulted");
    assert_eq!(spec["parent"]["child"], "c");
    assert_eq!(spec["withDefault"], json!({"child":"c"}), "a defaulted parent gets its children's defaults");
    assert_eq!(spec["raw"]["anything"]["goes"], 1);
    assert_eq!(spec["template"]["kind"], "Pod");
    assert_eq!(spec["template"]["metadata"]["name"], "p");
}

#[test]
fn parents_are_not_created_for_defaults() {
    let v = validator(schema());
    let mut obj = json!({"spec":{"clusterName":"c"}});
    v.process(&mut obj, None);
    assert!(obj["spec"].get("parent").is_none());
    assert!(obj.get("status").is_none());
}

#[test]
fn reports_keyword_violations_as_kube_apiserver_words_them() {
    let v = validator(schema());
    let mut obj = json!({"metadata":{"name":"a"},"spec":{"replicas":15,"mode":"C","maxSurge":true,
        "name":"ABCDEFG","tags":["a","b","c"],"ratio":0.7,"when":"yesterday","labels":{"a":3}}});
    let out = v.process(&mut obj, None);
    let msgs = messages(&out.errors);
    for want in [
        "spec.replicas: Invalid value: 15: spec.replicas in body should be less than or equal to 10",
        "spec.mode: Unsupported value: \"C\": supported values: \"A\", \"B\"",
        "spec.maxSurge: Invalid value: \"boolean\": spec.maxSurge in body must be of type integer or string: true",
        "spec.name: Too long: may not be more than 5 bytes",
        "spec.name: Invalid value: \"ABCDEFG\": spec.name in body should match '^[a-z]+$'",
        "spec.tags: Too many: 3: must have at most 2 items",
        "spec.ratio: Invalid value: 0.7: spec.ratio in body should be a multiple of 0.5",
        "spec.when: Invalid value: \"yesterday\": spec.when in body must be of type date-time: \"yesterday\"",
        "spec.labels.a: Invalid value: \"integer\": spec.labels.a in body must be of type string: 3",
    ] {
        assert!(msgs.contains(&want.to_string()), "missing {want:?} in {msgs:#?}");
    }
    let reasons: Vec<&str> = out.errors.iter().map(|e| e.kind.reason()).collect();
    assert!(reasons.contains(&"FieldValueTooMany") && reasons.contains(&"FieldValueTooLong"), "{reasons:?}");
    assert_eq!(msgs.len(), 9, "{msgs:#?}");
    let mut obj = json!({"spec":{"clusterName":"c","template":{"metadata":{"name":"p"},"kind":3}}});
    let msgs = messages(&v.process(&mut obj, None).errors);
    assert_eq!(
        msgs,
        vec![
            "spec.template.apiVersion: Required value: must not be empty",
            "spec.template.kind: Invalid value: \"integer\": spec.template.kind in body must be of type string: 3"
        ]
    );
}

#[test]
fn junctors_and_required_after_admission() {
    let v = validator(schema());
    let mut obj = json!({"metadata":{"name":"a"},"spec":{"choice":{"a":"x","b":"y"}}});
    let out = v.process(&mut obj, None);
    assert_eq!(
        messages(&out.errors),
        vec![
            "spec.choice: Invalid value: {\"a\":\"x\",\"b\":\"y\"}: spec.choice in body must validate one and only one schema (oneOf)"
        ]
    );
    let report = v.validate(&obj, None);
    assert_eq!(messages(&report.errors), vec!["spec.clusterName: Required value"]);
}

#[test]
fn default_object_applies_only_defaults() {
    let v = validator(schema());
    let mut obj = json!({"metadata":{"name":"a"},"spec":{"clusterName":"c","unknown":1,"replicas":99}});
    default_object(&v, &mut obj);
    assert_eq!(obj["spec"]["replicas"], 99);
    assert_eq!(obj["spec"]["unknown"], 1);
    assert_eq!(obj["spec"]["dropped"], "d");
}

fn cel_schema() -> Value {
    json!({"type":"object","properties":{"spec":{"type":"object",
    "x-kubernetes-validations":[
        {"rule":"self.replicas <= self.maxReplicas","messageExpression":"'replicas ' + string(self.replicas) + ' above ' + string(self.maxReplicas)"},
        {"rule":"self.mode == oldSelf.mode","message":"mode is immutable","reason":"FieldValueForbidden","fieldPath":".mode"},
        {"rule":"!has(self.start) || self.start < timestamp('2030-01-01T00:00:00Z')","message":"too late"},
        {"rule":"self.ports.isSorted() && self.ports.sum() < 100 && self.ports.indexOf(8) != 0"},
        {"rule":"self.name.find('[0-9]+') != '13'","messageExpression":"''","message":"unlucky"},
        {"rule":"!oldSelf.hasValue() || oldSelf.value().name == self.name","optionalOldSelf":true,"message":"name is immutable"}
    ],
    "properties":{
        "replicas":{"type":"integer"},"maxReplicas":{"type":"integer"},
        "mode":{"type":"string"},"start":{"type":"string","format":"date-time"},
        "name":{"type":"string"},"max-surge":{"type":"string","x-kubernetes-validations":[{"rule":"self != 'bad'"}]},
        "ports":{"type":"array","items":{"type":"integer"}}
    }}}})
}

#[test]
fn cel_rules_messages_reasons_and_transitions() {
    let v = validator(cel_schema());
    assert!(v.has_rules());
    let obj = json!({"apiVersion":"x/v1","kind":"X","metadata":{"name":"a"},
        "spec":{"replicas":5,"maxReplicas":3,"mode":"a","start":"2031-01-01T00:00:00Z","name":"x13",
                "max-surge":"bad","ports":[3,2]}});
    let r = v.validate(&obj, None);
    assert_eq!(
        messages(&r.errors),
        vec![
            "spec.max-surge: Invalid value: \"string\": failed rule: self != 'bad'",
            "spec: Invalid value: \"object\": replicas 5 above 3",
            "spec: Invalid value: \"object\": too late",
            "spec: Invalid value: \"object\": failed rule: self.ports.isSorted() && self.ports.sum() < 100 && self.ports.indexOf(8) != 0",
            "spec: Invalid value: \"object\": unlucky",
        ]
    );
    // On update the transition rules run; a failure on a value the update left unchanged
    // is only a warning (ratcheting), one on a changed value stays an error.
    let mut new = obj.clone();
    new["spec"]["mode"] = json!("b");
    new["spec"]["name"] = json!("y13");
    let r = v.validate(&new, Some(&obj));
    assert_eq!(
        messages(&r.errors),
        vec![
            "spec: Invalid value: \"object\": replicas 5 above 3",
            "spec.mode: Forbidden: mode is immutable",
            "spec: Invalid value: \"object\": too late",
            "spec: Invalid value: \"object\": failed rule: self.ports.isSorted() && self.ports.sum() < 100 && self.ports.indexOf(8) != 0",
            "spec: Invalid value: \"object\": unlucky",
            "spec: Invalid value: \"object\": name is immutable",
        ]
    );
    assert_eq!(r.warnings, vec!["spec.max-surge: Invalid value: \"string\": failed rule: self != 'bad'"]);
}

#[test]
fn cel_runtime_budget() {
    let s = json!({"type":"object","properties":{"spec":{"type":"object","properties":{
        "l":{"type":"array","maxItems":3000,"items":{"type":"integer"},
             "x-kubernetes-validations":[{"rule":"self.all(x, self.all(y, x + y >= 0))"}]},
        "after":{"type":"string","x-kubernetes-validations":[{"rule":"self == 'never'"}]}}}}});
    let v = validator(s);
    let items: Vec<Value> = (0..3000).map(Value::from).collect();
    let obj = json!({"spec":{"l":items,"after":"x"}});
    let r = v.validate(&obj, None);
    assert_eq!(
        messages(&r.errors),
        vec![
            "spec.after: Invalid value: \"string\": failed rule: self == 'never'",
            "spec.l: Invalid value: \"array\": validation failed due to running out of cost budget, no further validation rules will be run"
        ]
    );
}

#[test]
fn compile_errors_name_the_rule() {
    let s = json!({"type":"object","properties":{"spec":{"type":"object",
        "x-kubernetes-validations":[{"rule":"self.a ==","reason":"Nope"}]}}});
    let errs = match Validator::compile(Arc::new(s)) {
        Ok(_) => panic!("compiled"),
        Err(e) => messages(&e),
    };
    assert!(
        errs[0].starts_with(
            "properties[spec].x-kubernetes-validations[0].rule: Invalid value: \"self.a ==\": compilation failed"
        ),
        "{errs:?}"
    );
}

#[test]
fn schemaless_kinds_check_only_metadata() {
    let v = Validator::or_schemaless(None);
    let mut obj = json!({"metadata":{"name":"a","bogus":1},"anything":{"goes":1}});
    let out = v.process(&mut obj, None);
    assert_eq!(out.unknown, vec!["metadata.bogus"]);
    assert_eq!(obj["anything"]["goes"], 1);
}

/// Objects that CRD semantics would prune to `{}`: a `type: object` with no properties,
/// no additionalProperties and no preserve-unknown-fields.
fn empty_objects(s: &Value, path: &str, out: &mut Vec<String>) {
    let Value::Object(m) = s else { return };
    if m.get("type") == Some(&json!("object"))
        && !m.contains_key("properties")
        && !m.contains_key("additionalProperties")
        && m.get("x-kubernetes-preserve-unknown-fields") != Some(&json!(true))
    {
        out.push(path.to_string());
    }
    for (k, v) in m {
        match v {
            Value::Object(_) => empty_objects(v, &format!("{path}.{k}"), out),
            Value::Array(a) => a.iter().for_each(|x| empty_objects(x, &format!("{path}.{k}[]"), out)),
            _ => {}
        }
    }
}

#[test]
fn cluster_api_schemas_compile_and_keep_their_fields() {
    for def in drydock_api::capi::resources() {
        let validator = match Validator::for_def(&def) {
            Ok(v) => v,
            Err(e) => panic!("{e}"),
        };
        let Some(v) = validator else { continue };
        let mut empty = Vec::new();
        empty_objects(v.schema(), &def.kind, &mut empty);
        // The root's metadata is ObjectMeta whatever the schema says.
        empty.retain(|p| *p != format!("{}.properties.metadata", def.kind));
        // Markers, whose presence is all they say (upstream's empty structs): pruning them
        // to `{}` is right. A DevCluster's in-memory backend is one.
        empty.retain(|p| !p.ends_with(".properties.backend.properties.inMemory"));
        assert!(empty.is_empty(), "{empty:?}");
    }
}

/// Rules built to exhaust the parser's or interpreter's stack are refused or run, on a
/// thread with the default 2 MiB stack, without crashing the server.
#[test]
fn pathological_rules_are_refused_or_survive() {
    let long_chain = format!("self.a == {}1", "1 + ".repeat(590));
    let deep = format!("{}true{}", "(".repeat(500), ")".repeat(500));
    let near_limit = format!("{}true{}", "(".repeat(60), ")".repeat(60));
    let huge = "1 + ".repeat(700) + "1 == 1";
    let handle = std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(move || {
            let mut out = Vec::new();
            for rule in [long_chain, deep, near_limit, huge] {
                let s = json!({"type":"object","properties":{"spec":{"type":"object",
                    "properties":{"a":{"type":"integer"}},"x-kubernetes-validations":[{"rule":rule}]}}});
                let compiled = Validator::compile(Arc::new(s));
                let ran = compiled.as_ref().ok().map(|v| v.validate(&json!({"spec":{"a":1}}), None).errors.len());
                out.push((compiled.is_ok(), ran));
            }
            out
        })
        .expect("spawn");
    let results = handle.join().expect("no stack overflow");
    assert_eq!(results[1], (false, None), "too deep is refused");
    assert_eq!(results[2], (true, Some(0)), "nesting below the limit compiles and holds");
    assert_eq!(results[0], (true, Some(1)), "a long chain below the limit compiles and runs");
    assert_eq!(results[3], (false, None), "too many operators are refused");
}

#[test]
fn kubernetes_cel_library() {
    let rules = [
        "self.ports.min() == 1 && self.ports.max() == 9 && self.ports.lastIndexOf(9) == 2",
        "self.name.findAll('[0-9]').size() == 2 && self.name.findAll('[0-9]', 1) == ['1']",
        "isURL(self.endpoint) && url(self.endpoint).getHostname() == 'example.com' && url(self.endpoint).getPort() == '8443'",
        "url(self.endpoint).getQuery()['x'] == ['1', '2'] && url(self.endpoint).getScheme() == 'https'",
        "quantity(self.memory).isGreaterThan(quantity('1Gi')) && quantity(self.memory).compareTo(quantity('2Gi')) == 0",
        "quantity(self.memory).add(quantity('100m')).isGreaterThan(quantity('2Gi')) && isQuantity(self.memory) && !isQuantity('x')",
        "isIP('10.0.0.1') && !isIP('10.0.0') && isCIDR('10.0.0.0/8') && self.ports.sum() == 15",
        "self.name.split('-').size() == 2 && self.name.upperAscii() == 'A1-B2'",
        "!format.dns1123Label().validate(self.name).hasValue() && format.named('uuid').hasValue()",
        "format.dns1123Subdomain().validate(self.endpoint).orValue([]).size() == 0",
        "isSemver(self.version) && semver(self.version).isGreaterThan(semver('1.2.3')) && semver(self.version).minor() == 30",
    ];
    let validations: Vec<Value> = rules.iter().map(|r| json!({"rule": r})).collect();
    let s = json!({"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":validations,
        "properties":{"ports":{"type":"array","items":{"type":"integer"}},"name":{"type":"string"},
                      "endpoint":{"type":"string"},"memory":{"type":"string"},"version":{"type":"string"}}}}});
    let v = validator(s);
    let obj = json!({"spec":{"ports":[1,5,9],"name":"a1-b2","endpoint":"https://example.com:8443/p?x=1&x=2","memory":"2Gi","version":"1.30.0"}});
    let mut ok = obj.clone();
    ok["spec"]["endpoint"] = json!("example.com");
    assert_eq!(messages(&v.validate(&ok, None).errors).len(), 2, "only the URL rules fail on a bare host");
    let r = v.validate(&obj, None);
    let failed = messages(&r.errors);
    assert_eq!(failed.len(), 1, "{failed:#?}");
    assert!(failed[0].contains("format.dns1123Subdomain"), "{failed:#?}");
    let obj = json!({"spec":{"ports":[9,1],"name":"ZZ","endpoint":"nope!","memory":"1Gi","version":"1.2.3"}});
    let r = v.validate(&obj, None);
    assert_eq!(r.errors.len(), rules.len(), "{:#?}", messages(&r.errors));
}

#[test]
fn unchanged_invalid_values_ratchet_on_update() {
    let v = validator(schema());
    let old = json!({"metadata":{"name":"a"},"spec":{"clusterName":"c","replicas":15,"tags":["a","b","c"],"mode":"C"}});
    let mut update = old.clone();
    update["spec"]["mode"] = json!("A");
    assert!(v.process(&mut update, Some(&old)).errors.is_empty(), "unchanged values are let through");
    let mut update = old.clone();
    update["spec"]["replicas"] = json!(16);
    let msgs = messages(&v.process(&mut update, Some(&old)).errors);
    // Only the changed value is checked; the unchanged mode and tags still ratchet.
    assert_eq!(
        msgs,
        vec!["spec.replicas: Invalid value: 16: spec.replicas in body should be less than or equal to 10"]
    );
    let mut create = old.clone();
    assert_eq!(v.process(&mut create, None).errors.len(), 3, "a create checks everything");
}

#[test]
fn members_left_apart_are_present_but_neither_walked_nor_defaulted() {
    let v = validator(json!({"type":"object","required":["spec"],"properties":{
        "spec":{"type":"object","default":{},"properties":{"x":{"type":"integer","maximum":1}}},
        "status":{"type":"object","required":["phase"],"properties":{"phase":{"type":"string"}}}}}));
    let old = json!({"metadata":{"name":"a"},"status":{"phase":"P"}});
    // The status alone, with the spec kept as stored: the spec counts as there, gets no
    // default, and the status is still checked.
    let mut obj = json!({"metadata":{"name":"a"},"status":{"phase":"Q","extra":1}});
    let out = v.process_apart(&mut obj, Some(&old), &["spec"]);
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(out.unknown, ["status.extra"]);
    assert_eq!(obj, json!({"metadata":{"name":"a"},"status":{"phase":"Q"}}));
    assert!(v.validate_apart(&obj, Some(&old), &["spec"]).errors.is_empty());
    let r = v.validate_apart(&json!({"metadata":{"name":"a"},"status":{}}), Some(&old), &["spec"]);
    assert_eq!(messages(&r.errors), ["status.phase: Required value"]);
    // Nor do reads default what is left as stored.
    let mut read = json!({"metadata":{"name":"a"},"status":{"phase":"Q"}});
    default_object_apart(&v, &mut read, &["spec"]);
    assert!(read.get("spec").is_none());
    default_object(&v, &mut read);
    assert_eq!(read["spec"], json!({}));
    // The same object walked whole is defaulted and missing its spec.
    let mut whole = json!({"metadata":{"name":"a"},"status":{"phase":"Q"}});
    v.process(&mut whole, Some(&old));
    assert_eq!(whole["spec"], json!({}));
    assert_eq!(
        messages(&v.validate(&json!({"metadata":{}, "status":{"phase":"Q"}}), None).errors),
        ["spec: Required value"]
    );
}

#[test]
fn only_declared_members_under_a_root_without_rules_walk_apart() {
    let plain = validator(json!({"type":"object","properties":{"spec":{"type":"object"},"status":{"type":"object"}}}));
    assert!(plain.walks_apart("spec") && plain.walks_apart("status"));
    // An undeclared member would be pruned by the whole walk.
    assert!(!plain.walks_apart("data"));
    let ruled = validator(json!({"type":"object","x-kubernetes-validations":[{"rule":"has(self.spec)"}],
        "properties":{"spec":{"type":"object"},"status":{"type":"object"}}}));
    assert!(!ruled.walks_apart("spec"), "a rule of the root sees the whole object");
}
