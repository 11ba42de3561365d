//! Admission of apiextensions.k8s.io/v1 CustomResourceDefinitions: defaults, then the
//! checks kube-apiserver makes on a CRD write (names, group, scope, versions, subresources,
//! printer columns, selectable fields, conversion), each reported with its field path.

use drydock_api::admission::FieldPath;
use drydock_api::{Admission, FieldError, Operation, names};
use serde_json::{Value, json};

/// The CRD kind's admission.
pub struct CrdAdmission;

impl Admission for CrdAdmission {
    fn default(&self, obj: &mut Value, _op: Operation) -> Result<(), Vec<FieldError>> {
        let spec = &mut obj["spec"];
        if !spec.is_object() {
            return Ok(());
        }
        if let Some(kind) = spec["names"]["kind"].as_str().filter(|k| !k.is_empty()).map(str::to_string) {
            if spec["names"]["singular"].as_str().is_none_or(str::is_empty) {
                spec["names"]["singular"] = json!(kind.to_ascii_lowercase());
            }
            if spec["names"]["listKind"].as_str().is_none_or(str::is_empty) {
                spec["names"]["listKind"] = json!(format!("{kind}List"));
            }
        }
        if spec["conversion"].is_null() {
            spec["conversion"] = json!({"strategy": "None"});
        }
        Ok(())
    }

    fn validate(&self, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let spec = &obj["spec"];
        let p = FieldPath::new("spec");
        check_name(obj, &mut errs);
        check_group(spec, &p, &mut errs);
        check_scope(spec, old, &p, &mut errs);
        check_names(&spec["names"], &p.child("names"), &mut errs);
        check_versions(spec, &p, &mut errs);
        check_conversion(&spec["conversion"], &p.child("conversion"), &mut errs);
        check_stored_versions(obj, &mut errs);
        errs
    }
}

/// A version objects may still be stored in cannot leave `spec.versions` (they would no
/// longer decode): migrate them first, which drops it from `status.storedVersions`.
fn check_stored_versions(obj: &Value, errs: &mut Vec<FieldError>) {
    let declared: Vec<&str> =
        obj["spec"]["versions"].as_array().into_iter().flatten().map(|v| str_at(v, "name")).collect();
    for (i, stored) in obj["status"]["storedVersions"].as_array().into_iter().flatten().enumerate() {
        let name = stored.as_str().unwrap_or_default();
        if !declared.contains(&name) {
            errs.push(FieldError::invalid(format!("status.storedVersions[{i}]"), name, "must appear in spec.versions"));
        }
    }
}

fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or("")
}

fn check_name(obj: &Value, errs: &mut Vec<FieldError>) {
    let name = str_at(&obj["metadata"], "name");
    let want = format!("{}.{}", str_at(&obj["spec"]["names"], "plural"), str_at(&obj["spec"], "group"));
    if name != want {
        errs.push(FieldError::invalid("metadata.name", name, "must be spec.names.plural+\".\"+spec.group"));
    }
}

fn check_group(spec: &Value, p: &FieldPath, errs: &mut Vec<FieldError>) {
    let f = p.child("group");
    let group = str_at(spec, "group");
    if group.is_empty() {
        errs.push(FieldError::required(f.as_str(), ""));
        return;
    }
    let problems = names::dns1123_subdomain_errors(group);
    if !problems.is_empty() {
        errs.push(FieldError::invalid(f.as_str(), group, problems.join(",")));
    }
    if !group.contains('.') {
        errs.push(FieldError::invalid(f.as_str(), group, "should be a domain with at least one dot"));
    }
}

fn check_scope(spec: &Value, old: Option<&Value>, p: &FieldPath, errs: &mut Vec<FieldError>) {
    let f = p.child("scope");
    let scope = str_at(spec, "scope");
    match scope {
        "" => errs.push(FieldError::required(f.as_str(), "")),
        "Cluster" | "Namespaced" => {
            if let Some(old) = old.map(|o| str_at(&o["spec"], "scope"))
                && !old.is_empty()
                && old != scope
            {
                errs.push(FieldError::invalid(f.as_str(), scope, "field is immutable"));
            }
        }
        other => errs.push(FieldError::not_supported(f.as_str(), other, &["Cluster", "Namespaced"])),
    }
}

/// Lowercase DNS-1035 names (plural, singular, short names, categories) and CamelCase
/// kinds that lowercase to one.
fn check_names(n: &Value, p: &FieldPath, errs: &mut Vec<FieldError>) {
    for key in ["plural", "singular"] {
        let v = str_at(n, key);
        if v.is_empty() {
            errs.push(FieldError::required(p.child(key).as_str(), ""));
        } else if let problems = names::dns1035_label_errors(v)
            && !problems.is_empty()
        {
            errs.push(FieldError::invalid(p.child(key).as_str(), v, problems.join(",")));
        }
    }
    for key in ["kind", "listKind"] {
        let v = str_at(n, key);
        if v.is_empty() {
            errs.push(FieldError::required(p.child(key).as_str(), ""));
        } else if let problems = names::dns1035_label_errors(&v.to_ascii_lowercase())
            && !problems.is_empty()
        {
            let detail = format!("may have mixed case, but should otherwise match: {}", problems.join(","));
            errs.push(FieldError::invalid(p.child(key).as_str(), v, detail));
        }
    }
    if !str_at(n, "kind").is_empty() && str_at(n, "kind") == str_at(n, "listKind") {
        errs.push(FieldError::invalid(
            p.child("listKind").as_str(),
            str_at(n, "listKind"),
            "kind and listKind may not be the same or it would be ambiguous",
        ));
    }
    for key in ["shortNames", "categories"] {
        for (i, v) in n[key].as_array().into_iter().flatten().enumerate() {
            let v = v.as_str().unwrap_or("");
            let problems = names::dns1035_label_errors(v);
            if !problems.is_empty() {
                errs.push(FieldError::invalid(p.child(key).index(i).as_str(), v, problems.join(",")));
            }
        }
    }
}

fn check_versions(spec: &Value, p: &FieldPath, errs: &mut Vec<FieldError>) {
    let f = p.child("versions");
    let versions = spec["versions"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    if versions.is_empty() {
        errs.push(FieldError::required(f.as_str(), "must have exactly one version marked as storage version"));
        return;
    }
    let storage = versions.iter().filter(|v| v["storage"] == json!(true)).count();
    if storage != 1 {
        errs.push(FieldError::invalid(
            f.as_str(),
            json!(versions.iter().map(|v| str_at(v, "name")).collect::<Vec<_>>()),
            "must have exactly one version marked as storage version",
        ));
    }
    if !versions.iter().any(|v| v["served"] == json!(true)) {
        errs.push(FieldError::invalid(
            f.as_str(),
            json!(versions.len()),
            "must have at least one version marked as served",
        ));
    }
    let mut seen = Vec::new();
    for (i, v) in versions.iter().enumerate() {
        let vp = f.index(i);
        let name = str_at(v, "name");
        if name.is_empty() {
            errs.push(FieldError::required(vp.child("name").as_str(), ""));
        } else if let problems = names::dns1035_label_errors(name)
            && !problems.is_empty()
        {
            errs.push(FieldError::invalid(vp.child("name").as_str(), name, problems.join(",")));
        } else if seen.contains(&name) {
            errs.push(FieldError::duplicate(vp.child("name").as_str(), name));
        }
        seen.push(name);
        check_version_schema(&v["schema"]["openAPIV3Schema"], &vp.child("schema").child("openAPIV3Schema"), errs);
        check_subresources(&v["subresources"], &vp.child("subresources"), errs);
        check_columns(&v["additionalPrinterColumns"], &vp.child("additionalPrinterColumns"), errs);
        check_selectable(&v["selectableFields"], &vp.child("selectableFields"), errs);
    }
}

/// The schema checks of one version: present, an object at the root, structural, with
/// defaults that validate and `x-kubernetes-validations` rules that compile within budget.
pub fn check_version_schema(schema: &Value, p: &FieldPath, errs: &mut Vec<FieldError>) {
    if schema.is_null() {
        errs.push(FieldError::required(p.as_str(), "schemas are required"));
        return;
    }
    if let Some(t) = schema["type"].as_str().filter(|t| !t.is_empty() && *t != "object") {
        errs.push(FieldError::invalid(p.child("type").as_str(), t, "must be object at the root"));
    }
    errs.extend(crate::schema::check_crd_schema(schema, p.as_str()));
}

fn json_path_under(path: &str, roots: &[&str]) -> bool {
    roots.iter().any(|r| path.strip_prefix(r).is_some_and(|rest| rest.starts_with('.') && rest.len() > 1))
}

fn check_subresources(s: &Value, p: &FieldPath, errs: &mut Vec<FieldError>) {
    let scale = &s["scale"];
    if scale.is_null() {
        return;
    }
    let sp = p.child("scale");
    let spec_path = str_at(scale, "specReplicasPath");
    if spec_path.is_empty() {
        errs.push(FieldError::required(sp.child("specReplicasPath").as_str(), ""));
    } else if !json_path_under(spec_path, &[".spec"]) {
        errs.push(FieldError::invalid(
            sp.child("specReplicasPath").as_str(),
            spec_path,
            "should be a json path under .spec",
        ));
    }
    let status_path = str_at(scale, "statusReplicasPath");
    if status_path.is_empty() {
        errs.push(FieldError::required(sp.child("statusReplicasPath").as_str(), ""));
    } else if !json_path_under(status_path, &[".status"]) {
        errs.push(FieldError::invalid(
            sp.child("statusReplicasPath").as_str(),
            status_path,
            "should be a json path under .status",
        ));
    }
    if let Some(sel) = scale["labelSelectorPath"].as_str()
        && !json_path_under(sel, &[".spec", ".status"])
    {
        errs.push(FieldError::invalid(
            sp.child("labelSelectorPath").as_str(),
            sel,
            "should be a json path under either .spec or .status",
        ));
    }
}

const COLUMN_TYPES: &[&str] = &["integer", "number", "string", "boolean", "date"];
const COLUMN_FORMATS: &[&str] = &["int32", "int64", "float", "double", "byte", "date", "date-time", "password"];

fn check_columns(cols: &Value, p: &FieldPath, errs: &mut Vec<FieldError>) {
    for (i, c) in cols.as_array().into_iter().flatten().enumerate() {
        let cp = p.index(i);
        if str_at(c, "name").is_empty() {
            errs.push(FieldError::required(cp.child("name").as_str(), ""));
        }
        let t = str_at(c, "type");
        if t.is_empty() {
            errs.push(FieldError::required(cp.child("type").as_str(), ""));
        } else if !COLUMN_TYPES.contains(&t) {
            errs.push(FieldError::not_supported(cp.child("type").as_str(), t, COLUMN_TYPES));
        }
        if let Some(fmt) = c["format"].as_str()
            && !fmt.is_empty()
            && !COLUMN_FORMATS.contains(&fmt)
        {
            errs.push(FieldError::not_supported(cp.child("format").as_str(), fmt, COLUMN_FORMATS));
        }
        if c["priority"].as_i64().is_some_and(|n| n < 0) {
            errs.push(FieldError::invalid(
                cp.child("priority").as_str(),
                c["priority"].clone(),
                "must be greater than or equal to 0",
            ));
        }
        if str_at(c, "jsonPath").is_empty() {
            errs.push(FieldError::required(cp.child("jsonPath").as_str(), ""));
        }
    }
}

const MAX_SELECTABLE: usize = 8;

fn check_selectable(fields: &Value, p: &FieldPath, errs: &mut Vec<FieldError>) {
    let list = fields.as_array().map(Vec::as_slice).unwrap_or(&[]);
    if list.len() > MAX_SELECTABLE {
        errs.push(FieldError::new(
            drydock_api::FieldErrorKind::Invalid,
            p.as_str(),
            format!("must have at most {MAX_SELECTABLE} items"),
        ));
    }
    let mut seen = Vec::new();
    for (i, f) in list.iter().enumerate() {
        let fp = p.index(i).child("jsonPath");
        let path = str_at(f, "jsonPath");
        if path.is_empty() {
            errs.push(FieldError::required(fp.as_str(), ""));
        } else if !path.starts_with('.') || path.len() < 2 {
            errs.push(FieldError::invalid(fp.as_str(), path, "must be a simple json path starting with ."));
        } else if path == ".metadata" || path.starts_with(".metadata.") {
            errs.push(FieldError::forbidden(fp.as_str(), "fields under metadata.* are not selectable"));
        } else if seen.contains(&path) {
            errs.push(FieldError::duplicate(fp.as_str(), path));
        }
        seen.push(path);
    }
}

fn check_conversion(c: &Value, p: &FieldPath, errs: &mut Vec<FieldError>) {
    match str_at(c, "strategy") {
        "None" => {
            if !c["webhook"].is_null() {
                errs.push(FieldError::forbidden(
                    p.child("webhook").as_str(),
                    "should be empty if conversion strategy is None",
                ));
            }
        }
        "Webhook" => check_webhook(&c["webhook"], &p.child("webhook"), errs),
        "" => errs.push(FieldError::required(p.child("strategy").as_str(), "")),
        other => errs.push(FieldError::not_supported(p.child("strategy").as_str(), other, &["None", "Webhook"])),
    }
}

fn check_webhook(w: &Value, p: &FieldPath, errs: &mut Vec<FieldError>) {
    if w.is_null() {
        errs.push(FieldError::required(p.as_str(), "required if conversion strategy is Webhook"));
        return;
    }
    let reviews: Vec<&str> =
        w["conversionReviewVersions"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    if !reviews.iter().any(|v| matches!(*v, "v1" | "v1beta1")) {
        errs.push(FieldError::invalid(
            p.child("conversionReviewVersions").as_str(),
            json!(reviews),
            "must include at least one of v1, v1beta1",
        ));
    }
    let cc = &w["clientConfig"];
    let cp = p.child("clientConfig");
    match (cc["url"].as_str(), cc["service"].is_null()) {
        (Some(url), true) => {
            if !(url.starts_with("https://") || url.starts_with("http://")) {
                errs.push(FieldError::invalid(
                    cp.child("url").as_str(),
                    url,
                    "'https' and 'http' are the only allowed URL schemes",
                ));
            }
        }
        (None, false) => {
            for key in ["namespace", "name"] {
                if str_at(&cc["service"], key).is_empty() {
                    errs.push(FieldError::required(cp.child("service").child(key).as_str(), ""));
                }
            }
        }
        _ => errs.push(FieldError::required(cp.as_str(), "exactly one of url or service is required")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd() -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "gadgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "gadgets", "kind": "Gadget"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object"}}}]}
        })
    }

    fn check(mut v: Value) -> Vec<String> {
        CrdAdmission.default(&mut v, Operation::Create).expect("defaults");
        CrdAdmission.validate(&v, None).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn a_valid_crd_gets_defaults_and_passes() {
        let mut v = crd();
        CrdAdmission.default(&mut v, Operation::Create).expect("defaults");
        assert_eq!(v["spec"]["names"]["singular"], "gadget");
        assert_eq!(v["spec"]["names"]["listKind"], "GadgetList");
        assert_eq!(v["spec"]["conversion"]["strategy"], "None");
        assert!(CrdAdmission.validate(&v, None).is_empty());
    }

    #[test]
    fn reports_each_problem_with_its_path() {
        let mut v = crd();
        v["spec"]["names"]["plural"] = json!("Gadgets");
        v["spec"]["versions"][0]["storage"] = json!(false);
        v["spec"]["versions"][0]["subresources"] =
            json!({"scale": {"specReplicasPath": ".status.r", "statusReplicasPath": ".status.r"}});
        v["spec"]["conversion"] =
            json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v2"], "clientConfig": {}}});
        let errs = check(v);
        let fields: Vec<&str> = errs.iter().map(|e| e.split(':').next().unwrap_or("")).collect();
        for want in [
            "metadata.name",
            "spec.names.plural",
            "spec.versions",
            "spec.versions[0].subresources.scale.specReplicasPath",
            "spec.conversion.webhook.conversionReviewVersions",
            "spec.conversion.webhook.clientConfig",
        ] {
            assert!(fields.contains(&want), "{want} missing from {errs:?}");
        }
    }
}
