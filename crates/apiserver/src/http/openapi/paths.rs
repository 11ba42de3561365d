//! The paths and operations of a served resource, as kube-apiserver lays them out: the
//! collection and object paths (namespaced, plus the all-namespaces list of namespaced
//! kinds), the `status` and `scale` subresources and the watch paths, each operation with
//! its `x-kubernetes-action`, `x-kubernetes-group-version-kind`, query parameters and
//! request and response bodies referring to `components.schemas`.

use drydock_api::ResourceDef;
use serde_json::{Map, Value, json};

use super::meta;
use super::names;

/// Media types the server answers objects in.
const RESPONSE_TYPES: &[&str] = &["application/json", "application/yaml"];
/// Media types of watch streams.
const WATCH_TYPES: &[&str] = &["application/json;stream=watch"];
/// PATCH bodies accepted for every kind. Strategic merge patch is left out on purpose:
/// kubectl computes strategic patches of a kind advertising it from the document's
/// patch-merge keys, which are not published, and otherwise from its own built-in types.
const PATCH_TYPES: &[&str] =
    &["application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"];

/// One query parameter as kube-apiserver documents it.
fn query(name: &str, ty: &str, description: &str) -> Value {
    json!({"name": name, "in": "query", "description": description, "schema": {"type": ty, "uniqueItems": true}})
}

fn path_param(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "path", "required": true, "description": description,
        "schema": {"type": "string", "uniqueItems": true}})
}

fn pretty() -> Value {
    query("pretty", "string", "If 'true', the output is indented.")
}

fn write_params(with_force: bool) -> Vec<Value> {
    let mut out = vec![
        query("dryRun", "string", "When present (value All), the request is checked and answered but not persisted."),
        query("fieldManager", "string", "The name of the actor making the change, recorded in managedFields."),
        query(
            "fieldValidation",
            "string",
            "How unknown or duplicate fields in the body are handled: Ignore (drop them), Warn (drop them and \
             answer a warning) or Strict (reject the request).",
        ),
    ];
    if with_force {
        out.push(query("force", "boolean", "Apply requests only: take over fields owned by other managers."));
    }
    out
}

fn list_params() -> Vec<Value> {
    vec![
        query("allowWatchBookmarks", "boolean", "Watch only: the server may send BOOKMARK events."),
        query("continue", "string", "The token from a previous paged list, to read the next page."),
        query("fieldSelector", "string", "Restricts the result to objects whose fields match."),
        query("labelSelector", "string", "Restricts the result to objects whose labels match."),
        query("limit", "integer", "The largest number of objects in one page of a list."),
        query("resourceVersion", "string", "The resource version the list or watch starts from."),
        query("resourceVersionMatch", "string", "How resourceVersion is matched: Exact or NotOlderThan."),
        query("sendInitialEvents", "boolean", "Watch only: start with the current objects, then a bookmark."),
        query("timeoutSeconds", "integer", "Ends a list or watch after this many seconds."),
        query("watch", "boolean", "Watch the collection instead of listing it."),
    ]
}

fn delete_params() -> Vec<Value> {
    vec![
        query("dryRun", "string", "When present (value All), the request is checked and answered but not persisted."),
        query("gracePeriodSeconds", "integer", "Seconds before the object is deleted; 0 deletes at once."),
        query("orphanDependents", "boolean", "Deprecated: use propagationPolicy."),
        query("propagationPolicy", "string", "Garbage collection of dependents: Orphan, Background or Foreground."),
    ]
}

fn content(types: &[&str], schema: &str) -> Value {
    let schema = json!({"$ref": names::ref_v3(schema)});
    Value::Object(types.iter().map(|t| ((*t).to_string(), json!({"schema": schema}))).collect())
}

fn responses(codes: &[(&str, &str)], schema: &str, types: &[&str]) -> Value {
    let mut out = Map::new();
    for (code, description) in codes {
        out.insert((*code).into(), json!({"description": description, "content": content(types, schema)}));
    }
    out.insert("401".into(), json!({"description": "Unauthorized"}));
    Value::Object(out)
}

/// What every operation on one resource shares.
pub struct Resource<'a> {
    def: &'a ResourceDef,
    gvk: Value,
    kind: String,
    list: String,
    op_group: String,
}

impl<'a> Resource<'a> {
    pub fn new(def: &'a ResourceDef) -> Self {
        Self {
            def,
            gvk: json!({"group": def.group, "kind": def.kind, "version": def.version}),
            kind: names::definition(&def.group, &def.version, &def.kind),
            list: names::definition(&def.group, &def.version, &format!("{}List", def.kind)),
            op_group: names::operation_group(&def.group, &def.version),
        }
    }

    fn can(&self, verb: &str) -> bool {
        self.def.verbs.iter().any(|v| v == verb)
    }

    fn op_id(&self, verb: &str, scope: &str, suffix: &str) -> String {
        format!("{verb}{}{scope}{}{suffix}", self.op_group, self.def.kind)
    }

    fn op(&self, action: &str, id: String, description: String, params: Vec<Value>, gvk: &Value) -> Map<String, Value> {
        let mut op = Map::new();
        op.insert("description".into(), json!(description));
        op.insert("operationId".into(), json!(id));
        if !params.is_empty() {
            op.insert("parameters".into(), Value::Array(params));
        }
        op.insert("x-kubernetes-action".into(), json!(action));
        op.insert("x-kubernetes-group-version-kind".into(), gvk.clone());
        op
    }

    /// `/apis/<g>/<v>` or `/api/v1`.
    fn root(&self) -> String {
        if self.def.group.is_empty() {
            format!("/api/{}", self.def.version)
        } else {
            format!("/apis/{}/{}", self.def.group, self.def.version)
        }
    }

    /// Adds every path of the resource to `paths`.
    pub fn add_paths(&self, paths: &mut Map<String, Value>) {
        let root = self.root();
        let plural = &self.def.plural;
        let (scoped, scope) = if self.def.namespaced {
            (format!("{root}/namespaces/{{namespace}}/{plural}"), "Namespaced")
        } else {
            (format!("{root}/{plural}"), "")
        };
        paths.insert(scoped.clone(), self.collection(scope));
        paths.insert(format!("{scoped}/{{name}}"), self.item(scope));
        if self.def.status_subresource {
            paths.insert(format!("{scoped}/{{name}}/status"), self.subresource(scope, "Status", &self.kind, &self.gvk));
        }
        if self.def.scale.is_some() {
            let gvk = json!({"group": "autoscaling", "kind": "Scale", "version": "v1"});
            paths.insert(format!("{scoped}/{{name}}/scale"), self.subresource(scope, "Scale", meta::SCALE, &gvk));
        }
        if !self.can("watch") {
            if self.def.namespaced && self.can("list") {
                paths.insert(format!("{root}/{plural}"), self.all_namespaces_list());
            }
            return;
        }
        let watch_scoped = if self.def.namespaced {
            format!("{root}/watch/namespaces/{{namespace}}/{plural}")
        } else {
            format!("{root}/watch/{plural}")
        };
        paths.insert(watch_scoped.clone(), self.watch(scope, "watchlist", "List"));
        paths.insert(format!("{watch_scoped}/{{name}}"), self.watch(scope, "watch", ""));
        if self.def.namespaced {
            paths.insert(format!("{root}/{plural}"), self.all_namespaces_list());
            paths.insert(format!("{root}/watch/{plural}"), self.watch("", "watchlist", "ListForAllNamespaces"));
        }
    }

    fn scope_params(&self, name: bool) -> Vec<Value> {
        let mut out = Vec::new();
        if name {
            out.push(path_param("name", &format!("name of the {}", self.def.kind)));
        }
        if self.def.namespaced {
            out.push(path_param("namespace", "object name and auth scope, such as for teams and projects"));
        }
        out.push(pretty());
        out
    }

    fn collection(&self, scope: &str) -> Value {
        let kind = &self.def.kind;
        let mut item = Map::new();
        if self.can("list") {
            let mut op = self.op(
                "list",
                self.op_id("list", scope, ""),
                format!("list or watch objects of kind {kind}"),
                list_params(),
                &self.gvk,
            );
            op.insert("responses".into(), responses(&[("200", "OK")], &self.list, RESPONSE_TYPES));
            item.insert("get".into(), Value::Object(op));
        }
        if self.can("create") {
            let mut op = self.op(
                "post",
                self.op_id("create", scope, ""),
                format!("create a {kind}"),
                write_params(false),
                &self.gvk,
            );
            op.insert("requestBody".into(), json!({"content": content(&["*/*"], &self.kind), "required": true}));
            op.insert(
                "responses".into(),
                responses(&[("200", "OK"), ("201", "Created"), ("202", "Accepted")], &self.kind, RESPONSE_TYPES),
            );
            item.insert("post".into(), Value::Object(op));
        }
        if self.can("deletecollection") {
            let mut params = delete_params();
            params.extend(
                list_params().into_iter().filter(|p| p["name"] != "watch" && p["name"] != "allowWatchBookmarks"),
            );
            let mut op = self.op(
                "deletecollection",
                self.op_id("delete", &format!("Collection{scope}"), ""),
                format!("delete collection of {kind}"),
                params,
                &self.gvk,
            );
            op.insert("requestBody".into(), json!({"content": content(&["*/*"], meta::DELETE_OPTIONS)}));
            op.insert("responses".into(), responses(&[("200", "OK")], meta::STATUS, RESPONSE_TYPES));
            item.insert("delete".into(), Value::Object(op));
        }
        item.insert("parameters".into(), Value::Array(self.scope_params(false)));
        Value::Object(item)
    }

    fn item(&self, scope: &str) -> Value {
        let kind = &self.def.kind;
        let mut item = Map::new();
        if self.can("get") {
            let mut op = self.op(
                "get",
                self.op_id("read", scope, ""),
                format!("read the specified {kind}"),
                Vec::new(),
                &self.gvk,
            );
            op.insert("responses".into(), responses(&[("200", "OK")], &self.kind, RESPONSE_TYPES));
            item.insert("get".into(), Value::Object(op));
        }
        self.writes(&mut item, scope, "", &format!("the specified {kind}"), &self.kind, &self.gvk);
        if self.can("delete") {
            let mut op = self.op(
                "delete",
                self.op_id("delete", scope, ""),
                format!("delete a {kind}"),
                delete_params(),
                &self.gvk,
            );
            op.insert("requestBody".into(), json!({"content": content(&["*/*"], meta::DELETE_OPTIONS)}));
            op.insert(
                "responses".into(),
                responses(&[("200", "OK"), ("202", "Accepted")], meta::STATUS, RESPONSE_TYPES),
            );
            item.insert("delete".into(), Value::Object(op));
        }
        item.insert("parameters".into(), Value::Array(self.scope_params(true)));
        Value::Object(item)
    }

    /// PUT and PATCH of an object or one of its subresources.
    fn writes(&self, item: &mut Map<String, Value>, scope: &str, suffix: &str, what: &str, schema: &str, gvk: &Value) {
        if self.can("update") {
            let mut op = self.op(
                "put",
                self.op_id("replace", scope, suffix),
                format!("replace {what}"),
                write_params(false),
                gvk,
            );
            op.insert("requestBody".into(), json!({"content": content(&["*/*"], schema), "required": true}));
            op.insert("responses".into(), responses(&[("200", "OK"), ("201", "Created")], schema, RESPONSE_TYPES));
            item.insert("put".into(), Value::Object(op));
        }
        if self.can("patch") {
            let mut op = self.op(
                "patch",
                self.op_id("patch", scope, suffix),
                format!("partially update {what}"),
                write_params(true),
                gvk,
            );
            op.insert("requestBody".into(), json!({"content": content(PATCH_TYPES, meta::PATCH), "required": true}));
            op.insert("responses".into(), responses(&[("200", "OK"), ("201", "Created")], schema, RESPONSE_TYPES));
            item.insert("patch".into(), Value::Object(op));
        }
    }

    fn subresource(&self, scope: &str, suffix: &str, schema: &str, gvk: &Value) -> Value {
        let what = format!("{} of the specified {}", suffix.to_ascii_lowercase(), self.def.kind);
        let mut item = Map::new();
        let mut op = self.op("get", self.op_id("read", scope, suffix), format!("read {what}"), Vec::new(), gvk);
        op.insert("responses".into(), responses(&[("200", "OK")], schema, RESPONSE_TYPES));
        item.insert("get".into(), Value::Object(op));
        self.writes(&mut item, scope, suffix, &what, schema, gvk);
        item.insert("parameters".into(), Value::Array(self.scope_params(true)));
        Value::Object(item)
    }

    fn all_namespaces_list(&self) -> Value {
        let mut op = self.op(
            "list",
            self.op_id("list", "", "ForAllNamespaces"),
            format!("list or watch objects of kind {} in every namespace", self.def.kind),
            list_params(),
            &self.gvk,
        );
        op.insert("responses".into(), responses(&[("200", "OK")], &self.list, RESPONSE_TYPES));
        json!({"get": op, "parameters": [pretty()]})
    }

    /// A deprecated `/watch/` path: `action` is `watch` (one object) or `watchlist`.
    fn watch(&self, scope: &str, action: &str, suffix: &str) -> Value {
        let description =
            format!("watch changes to objects of kind {}; deprecated: use the watch parameter of list", self.def.kind);
        let mut op = self.op(action, self.op_id("watch", scope, suffix), description, list_params(), &self.gvk);
        op.insert("responses".into(), responses(&[("200", "OK")], meta::WATCH_EVENT, WATCH_TYPES));
        let params =
            if suffix == "ListForAllNamespaces" { vec![pretty()] } else { self.scope_params(action == "watch") };
        json!({"get": op, "parameters": params})
    }
}
