//! Reading a request: query parameters, response negotiation, the body, and the options
//! of writes and lists.

use axum::body::Body;
use axum::http::{HeaderMap, Request, header};
use bytes::Bytes;
use drydock_api::selector::Selector;
use serde_json::Value;

use drydock_api::ResourceDef;

use super::partial::Partial;
use super::{MAX_BODY, protobuf};
use crate::error::{ApiError, ApiResult};
use crate::rest::{Api, FieldValidation, ListOptions, Target, WriteOptions};

/// Query parameters (repeated keys: last wins; empty pairs ignored, as kube-rs sends `?&watch=...`).
pub(super) struct Query(Vec<(String, String)>);

impl Query {
    pub(super) fn parse(q: Option<&str>) -> Self {
        Self(
            form_urlencoded::parse(q.unwrap_or_default().as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        )
    }
    pub(super) fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
    pub(super) fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1"))
    }
}

/// Response negotiation for object reads.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum As {
    Object,
    Table,
    /// The object (or list) as protobuf; only for kinds with a protobuf message.
    Protobuf,
    /// Metadata only ([`Partial`]).
    Metadata(Partial),
}

pub(super) fn negotiate(accept: &str, def: &ResourceDef) -> ApiResult<As> {
    if accept.is_empty() {
        return Ok(As::Object);
    }
    if accept.contains(PROTOBUF_WORD) {
        return negotiate_protobuf(accept, def);
    }
    let mut json_ok = false;
    for part in accept.split(',') {
        let p = part.trim();
        if is_table(p) {
            return Ok(As::Table);
        }
        if let Some(partial) = Partial::parse(p) {
            return Ok(As::Metadata(partial));
        }
        if p.contains("as=") {
            continue;
        }
        if is_json(media_base(p)) {
            json_ok = true;
        }
    }
    if json_ok { Ok(As::Object) } else { Err(not_acceptable(accept)) }
}

/// How a write is answered: JSON, protobuf, or metadata only. Writes never answered 406
/// before protobuf existed, so only an Accept naming protobuf or metadata is looked at.
pub(super) fn answer_as(accept: &str, def: &ResourceDef) -> ApiResult<As> {
    let metadata = accept.contains("as=PartialObjectMetadata");
    if !accept.contains(PROTOBUF_WORD) && !metadata {
        return Ok(As::Object);
    }
    Ok(match negotiate(accept, def) {
        Ok(a @ (As::Protobuf | As::Metadata(_))) => a,
        Err(e) if !metadata => return Err(e),
        _ => As::Object,
    })
}

/// Whether an error is answered as a protobuf Status: protobuf is preferred over JSON.
pub(super) fn errors_as_protobuf(accept: &str) -> bool {
    by_preference(accept)
        .into_iter()
        .find(|p| !p.contains("as=") && (media_base(p) == protobuf::MEDIA_TYPE || is_json(media_base(p))))
        .is_some_and(|p| media_base(p) == protobuf::MEDIA_TYPE)
}

const PROTOBUF_WORD: &str = "protobuf";

/// Full negotiation, q-values included, for an Accept that names protobuf.
fn negotiate_protobuf(accept: &str, def: &ResourceDef) -> ApiResult<As> {
    let mut unsupported = false;
    for p in by_preference(accept) {
        if is_table(p) {
            return Ok(As::Table);
        }
        if let Some(partial) = Partial::parse(p) {
            return Ok(As::Metadata(partial));
        }
        if p.contains("as=") {
            continue;
        }
        match media_base(p) {
            protobuf::MEDIA_TYPE if protobuf::supports(def) => return Ok(As::Protobuf),
            protobuf::MEDIA_TYPE => unsupported = true,
            base if is_json(base) => return Ok(As::Object),
            _ => {}
        }
    }
    if unsupported {
        // What kube-apiserver answers for custom resources, which have no protobuf message.
        return Err(ApiError::not_acceptable(
            "object *unstructured.Unstructured does not implement the protobuf marshalling interface and cannot be encoded to a protobuf message",
        ));
    }
    Err(not_acceptable(accept))
}

/// Media ranges, highest q first, then in the order given; q=0 ranges are left out.
fn by_preference(accept: &str) -> Vec<&str> {
    let mut ranges: Vec<(f32, &str)> = accept
        .split(',')
        .map(str::trim)
        .map(|p| {
            let q = p
                .split(';')
                .skip(1)
                .find_map(|param| param.trim().strip_prefix("q="))
                .and_then(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            (q, p)
        })
        .filter(|(q, _)| *q > 0.0)
        .collect();
    ranges.sort_by(|a, b| b.0.total_cmp(&a.0));
    ranges.into_iter().map(|(_, p)| p).collect()
}

fn is_table(range: &str) -> bool {
    range.contains("as=Table") && range.contains("g=meta.k8s.io")
}

fn media_base(range: &str) -> &str {
    range.split(';').next().unwrap_or_default().trim()
}

pub(super) fn is_json(base: &str) -> bool {
    matches!(base, "application/json" | "*/*" | "application/*" | "application/yaml" | "")
}

fn not_acceptable(accept: &str) -> ApiError {
    ApiError::not_acceptable(format!(
        "only the following media types are accepted: application/json, application/yaml; got {accept}"
    ))
}

pub(super) async fn read_body(req: Request<Body>) -> ApiResult<(HeaderMap, Bytes)> {
    let (parts, body) = req.into_parts();
    if let Some(len) =
        parts.headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<usize>().ok())
        && len > MAX_BODY
    {
        return Err(ApiError::too_large(format!("the request body is {len} bytes; the limit is {MAX_BODY}")));
    }
    let bytes = axum::body::to_bytes(body, MAX_BODY)
        .await
        .map_err(|_| ApiError::too_large(format!("the request body is larger than the limit of {MAX_BODY} bytes")))?;
    Ok((parts.headers, bytes))
}

/// Decodes a request body. `target` is the kind a write body is for; protobuf bodies are
/// accepted only for writes (a patch keeps its patch media type).
pub(super) fn decode_body(headers: &HeaderMap, body: &[u8], target: Option<&ResourceDef>) -> ApiResult<Value> {
    let ct = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("application/json");
    let base = ct.split(';').next().unwrap_or_default().trim();
    if body.is_empty() {
        return Err(ApiError::bad_request("the request body is empty"));
    }
    let patch = target.is_none();
    if base == protobuf::MEDIA_TYPE
        && let Some(def) = target
    {
        return protobuf::decode_request(body, def);
    }
    let yaml = matches!(base, "application/yaml" | "application/x-yaml" | "text/yaml" | "application/apply-patch+yaml");
    if !yaml && !patch && !matches!(base, "application/json" | "" | "*/*") {
        return Err(ApiError::unsupported_media(format!(
            "the body of the request was in an unknown format ({base}) - accepted media types include: application/json, application/yaml"
        )));
    }
    if yaml && !body.starts_with(b"{") {
        let text = std::str::from_utf8(body).map_err(|_| ApiError::bad_request("the YAML body is not UTF-8"))?;
        return serde_saphyr::from_str::<Value>(text).map_err(|e| {
            let msg = e.to_string();
            match duplicate_key(&msg) {
                Some(key) if patch => {
                    ApiError::bad_request(format!("error strict decoding patch: yaml: duplicate field \"{key}\""))
                }
                Some(key) => ApiError::bad_request(format!("strict decoding error: duplicate field \"{key}\"")),
                None => ApiError::bad_request(format!("error converting YAML to JSON: {msg}")),
            }
        });
    }
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("couldn't decode the request body as JSON: {e}")))
}

/// Decodes the body of a request for a kind that is not stored (a review, a TokenRequest),
/// of `api_version`/`kind` unless a protobuf envelope says otherwise.
pub(super) fn decode_unstored(headers: &HeaderMap, body: &[u8], api_version: &str, kind: &str) -> ApiResult<Value> {
    let ct = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("application/json");
    if ct.split(';').next().unwrap_or_default().trim() == protobuf::MEDIA_TYPE {
        return protobuf::decode_as(body, api_version, kind);
    }
    decode_body(headers, body, None)
}

/// The key a YAML parse error reports as given twice in one mapping.
fn duplicate_key(msg: &str) -> Option<&str> {
    let at = msg.find("duplicate mapping key: ")? + "duplicate mapping key: ".len();
    let rest = &msg[at..];
    Some(rest.split(',').next().unwrap_or(rest).trim())
}

/// Options of a create, update or patch. The field manager is `fieldManager`, else the
/// User-Agent up to its first `/`, else `unknown`.
pub(super) fn write_options(q: &Query, headers: &HeaderMap) -> ApiResult<WriteOptions> {
    let dry_run = match q.get("dryRun") {
        None | Some("") => false,
        Some("All") => true,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "dryRun: Unsupported value: \"{other}\": supported values: \"All\""
            )));
        }
    };
    let validation = match q.get("fieldValidation") {
        None | Some("") | Some("Warn") => FieldValidation::Warn,
        Some("Strict") => FieldValidation::Strict,
        Some("Ignore") => FieldValidation::Ignore,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "fieldValidation: Unsupported value: \"{other}\": supported values: \"Ignore\", \"Strict\", \"Warn\""
            )));
        }
    };
    let manager = match q.get("fieldManager").filter(|m| !m.is_empty()) {
        Some(m) => {
            if m.chars().count() > 128 || m.chars().any(|c| c.is_control()) {
                return Err(ApiError::new(
                    422,
                    "Invalid",
                    format!("fieldManager: Invalid value: \"{m}\": must be at most 128 printable characters"),
                ));
            }
            m.to_string()
        }
        None => headers
            .get(header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .and_then(|ua| ua.split('/').next())
            .filter(|m| !m.is_empty())
            .map_or_else(|| "unknown".to_string(), |m| m.chars().take(128).collect()),
    };
    let force = match q.get("force") {
        None | Some("") | Some("false") => false,
        Some("true") => true,
        Some(other) => {
            return Err(ApiError::bad_request(format!("force: invalid value \"{other}\": must be true or false")));
        }
    };
    Ok(WriteOptions { dry_run, validation, manager, force, ..WriteOptions::default() })
}

pub(super) fn list_options(api: &Api, t: &Target, q: &Query) -> ApiResult<ListOptions> {
    let labels = Selector::parse_query(q.get("labelSelector").unwrap_or_default()).map_err(ApiError::bad_request)?;
    let fields = api.field_selector(&t.res, q.get("fieldSelector").unwrap_or_default())?;
    let limit = match q.get("limit").filter(|s| !s.is_empty()) {
        Some(l) => {
            Some(l.parse::<i64>().map_err(|_| ApiError::bad_request(format!("invalid limit: \"{l}\"")))?.max(0) as usize)
        }
        None => None,
    };
    Ok(ListOptions {
        labels,
        fields,
        limit,
        continue_token: q.get("continue").map(str::to_string),
        resource_version: q.get("resourceVersion").map(str::to_string),
        resource_version_match: q.get("resourceVersionMatch").filter(|s| !s.is_empty()).map(str::to_string),
        send_initial_events: q.get("sendInitialEvents").map(|v| matches!(v, "true" | "1")),
    })
}
