//! Metadata-only answers: `Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`
//! (and `…List` for lists, `v=v1beta1`, protobuf), which client-go's metadata informers,
//! the garbage collector and kube-rs' `get_metadata`, `list_metadata` and
//! `metadata_watcher` ask for. Every resource answers them, custom ones too, and in
//! protobuf as well: the meta.k8s.io kinds have messages.
//!
//! Objects, list items and watch events are each `{"kind":"PartialObjectMetadata",
//! "apiVersion":"meta.k8s.io/v1","metadata":…}` with the object's metadata as it would have
//! been shown whole; a list is a `PartialObjectMetadataList`. An object asked for as a list
//! (or a list as an object) is 406, as kube-apiserver answers.

use std::borrow::Cow;

use bytes::{BufMut, Bytes, BytesMut};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::protobuf;
use crate::error::{ApiError, ApiResult};

/// What a metadata-only media range asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Partial {
    /// `PartialObjectMetadataList` rather than `PartialObjectMetadata`.
    pub list: bool,
    /// `meta.k8s.io/v1` or `meta.k8s.io/v1beta1`.
    pub api_version: &'static str,
    pub protobuf: bool,
}

const KIND: &str = "PartialObjectMetadata";
const LIST_KIND: &str = "PartialObjectMetadataList";

impl Partial {
    /// The metadata-only answer a media range asks for, if it asks for one this server gives.
    pub fn parse(range: &str) -> Option<Self> {
        let mut params = range.split(';');
        let base = params.next()?.trim();
        let (mut as_, mut group, mut version) = (None, None, None);
        for p in params {
            let Some((k, v)) = p.split_once('=') else { continue };
            match k.trim() {
                "as" => as_ = Some(v.trim()),
                "g" => group = Some(v.trim()),
                "v" => version = Some(v.trim()),
                _ => {}
            }
        }
        let list = match as_? {
            KIND => false,
            LIST_KIND => true,
            _ => return None,
        };
        let api_version = match (group?, version?) {
            ("meta.k8s.io", "v1") => "meta.k8s.io/v1",
            ("meta.k8s.io", "v1beta1") => "meta.k8s.io/v1beta1",
            _ => return None,
        };
        let protobuf = if base == protobuf::MEDIA_TYPE {
            true
        } else if super::request::is_json(base) {
            false
        } else {
            return None;
        };
        // meta.k8s.io/v1beta1 has a message for the list only.
        if protobuf && !protobuf::has_message(api_version, if list { LIST_KIND } else { KIND }) {
            return None;
        }
        Some(Self { list, api_version, protobuf })
    }

    /// 406 unless this asks for a single object.
    pub fn expect_object(&self, kind: &str) -> ApiResult<()> {
        if self.list {
            return Err(ApiError::not_acceptable(format!(
                "you requested {LIST_KIND}, but the requested object is not a list ({kind})"
            )));
        }
        Ok(())
    }

    /// 406 unless this asks for a list.
    pub fn expect_list(&self, kind: &str) -> ApiResult<()> {
        if !self.list {
            return Err(ApiError::not_acceptable(format!(
                "you requested {KIND}, but the requested object is a list ({kind}List)"
            )));
        }
        Ok(())
    }

    /// `{"kind":"PartialObjectMetadata",…}` of an object's JSON, as JSON. A Status (the
    /// answer of a deletion that completed) stays as it is, as kube-apiserver leaves it.
    pub fn object_json(&self, object: &[u8]) -> ApiResult<Bytes> {
        let head = Head::of(object).map_err(|e| ApiError::internal(format!("stored object: {e}")))?;
        if head.kind.as_ref().map(|k| k.0.as_ref()) == Some("Status") {
            return Ok(Bytes::copy_from_slice(object));
        }
        let metadata = head.metadata.map_or("{}", RawValue::get);
        let mut b = BytesMut::with_capacity(metadata.len() + 80);
        b.put_slice(format!("{{\"kind\":\"{KIND}\",\"apiVersion\":\"{}\",\"metadata\":", self.api_version).as_bytes());
        b.put_slice(metadata.as_bytes());
        b.put_u8(b'}');
        Ok(b.freeze())
    }

    /// An object's metadata in the answer's encoding.
    pub fn object(&self, object: &[u8]) -> ApiResult<Bytes> {
        let json = self.object_json(object)?;
        if self.protobuf { protobuf::encode_json(&json) } else { Ok(json) }
    }

    /// A `PartialObjectMetadataList` of objects' JSON, in the answer's encoding.
    pub fn list(&self, rev: u64, cont: Option<&str>, remaining: Option<u64>, items: &[Bytes]) -> ApiResult<Bytes> {
        let items = items.iter().map(|i| self.object_json(i)).collect::<ApiResult<Vec<_>>>()?;
        let json = list_json(LIST_KIND, self.api_version, rev, cont, remaining, &items);
        if self.protobuf { protobuf::encode_json(&json) } else { Ok(json) }
    }

    /// The media type answers are given in.
    pub fn media_type(&self) -> &'static str {
        if self.protobuf { protobuf::MEDIA_TYPE } else { "application/json" }
    }

    /// The kind and apiVersion of watch bookmarks.
    pub fn event_kind(&self) -> (&'static str, &'static str) {
        (KIND, self.api_version)
    }
}

/// `{"apiVersion":…,"kind":…,"metadata":{"resourceVersion":…},"items":[…]}` from items
/// already encoded.
pub(super) fn list_json(
    kind: &str,
    api_version: &str,
    rev: u64,
    cont: Option<&str>,
    remaining: Option<u64>,
    items: &[Bytes],
) -> Bytes {
    let size: usize = items.iter().map(|i| i.len() + 1).sum();
    let mut b = BytesMut::with_capacity(size + 200);
    b.put_slice(
        format!("{{\"apiVersion\":\"{api_version}\",\"kind\":\"{kind}\",\"metadata\":{{\"resourceVersion\":\"{rev}\"")
            .as_bytes(),
    );
    if let Some(c) = cont {
        b.put_slice(format!(",\"continue\":{}", Value::String(c.to_string())).as_bytes());
    }
    if let Some(n) = remaining {
        b.put_slice(format!(",\"remainingItemCount\":{n}").as_bytes());
    }
    b.put_slice(b"},\"items\":[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            b.put_u8(b',');
        }
        b.put_slice(item);
    }
    b.put_slice(b"]}");
    b.freeze()
}

/// The `kind` and `metadata` of an object's JSON, read no further than both: objects as
/// stored (keys sorted) have them before `spec` and `status`, most of their bytes.
#[derive(Default)]
struct Head<'a> {
    kind: Option<Text<'a>>,
    metadata: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Text<'a>(#[serde(borrow)] Cow<'a, str>);

/// What the reader stops with once it has both members: not an error of the object.
const READ_ENOUGH: &str = "read enough";

impl<'a> Head<'a> {
    fn of(object: &'a [u8]) -> serde_json::Result<Self> {
        let mut head = Head::default();
        let mut de = serde_json::Deserializer::from_slice(object);
        match serde::Deserializer::deserialize_map(&mut de, HeadVisitor(&mut head)) {
            Err(e) if !e.to_string().starts_with(READ_ENOUGH) => Err(e),
            _ => Ok(head),
        }
    }
}

struct HeadVisitor<'h, 'a>(&'h mut Head<'a>);

impl<'de> serde::de::Visitor<'de> for HeadVisitor<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> Result<(), M::Error> {
        while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
            match key.as_ref() {
                "kind" => self.0.kind = map.next_value()?,
                "metadata" => self.0.metadata = map.next_value()?,
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
            if self.0.kind.is_some() && self.0.metadata.is_some() {
                return Err(serde::de::Error::custom(READ_ENOUGH));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(range: &str) -> Option<Partial> {
        Partial::parse(range)
    }

    #[test]
    fn media_ranges() {
        let p = parse("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1").unwrap();
        assert_eq!(p, Partial { list: false, api_version: "meta.k8s.io/v1", protobuf: false });
        let l = parse("application/json; as=PartialObjectMetadataList; g=meta.k8s.io; v=v1beta1").unwrap();
        assert_eq!(l, Partial { list: true, api_version: "meta.k8s.io/v1beta1", protobuf: false });
        let pb = parse("application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1").unwrap();
        assert!(pb.protobuf);
        for other in [
            "application/json",
            "application/json;as=Table;g=meta.k8s.io;v=v1",
            "application/json;as=PartialObjectMetadata;g=apps;v=v1",
            "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2",
            "application/json;as=PartialObjectMetadata;g=meta.k8s.io",
            "text/plain;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
        ] {
            assert_eq!(parse(other), None, "{other}");
        }
    }

    #[test]
    fn metadata_of_an_object_and_a_list() {
        let p = parse("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1").unwrap();
        let obj =
            br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"7"},"data":{"k":"v"}}"#;
        let got: Value = serde_json::from_slice(&p.object(obj).unwrap()).unwrap();
        assert_eq!(
            got,
            serde_json::json!({"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"a","resourceVersion":"7"}})
        );
        assert!(p.expect_object("ConfigMap").is_ok());
        assert_eq!(p.expect_list("ConfigMap").unwrap_err().status()["code"], 406);
        let l = parse("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1").unwrap();
        let list: Value =
            serde_json::from_slice(&l.list(9, Some("next"), Some(3), &[Bytes::from_static(obj)]).unwrap()).unwrap();
        assert_eq!(list["kind"], "PartialObjectMetadataList");
        assert_eq!(
            list["metadata"],
            serde_json::json!({"resourceVersion":"9","continue":"next","remainingItemCount":3})
        );
        assert_eq!(list["items"][0]["kind"], "PartialObjectMetadata");
        assert_eq!(list["items"][0]["metadata"]["name"], "a");
        assert!(list["items"][0].get("data").is_none());
        assert_eq!(l.expect_object("ConfigMap").unwrap_err().status()["code"], 406);
    }

    #[test]
    fn the_metadata_is_found_wherever_it_is_and_what_follows_it_is_not_read() {
        let p = parse("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1").unwrap();
        let metadata = |obj: &[u8]| -> Value {
            serde_json::from_slice::<Value>(&p.object(obj).unwrap()).unwrap()["metadata"].clone()
        };
        // As stored: what follows kind and metadata is left unread, even when it would not parse.
        let stored = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"spec":{"x":"#;
        assert_eq!(metadata(stored), serde_json::json!({"name": "a"}));
        // Another order, escaped keys, an object without kind: read through as needed.
        let late = br#"{"status":{"a":[1,{"b":"}"}]},"metadata":{"name":"b"},"\u006bind":"Thing"}"#;
        assert_eq!(metadata(late), serde_json::json!({"name": "b"}));
        assert_eq!(metadata(br#"{"metadata":{"name":"c"},"data":{}}"#), serde_json::json!({"name": "c"}));
        assert_eq!(metadata(br#"{"data":{}}"#), serde_json::json!({}));
        // A Status stays whole; what is not an object is an error.
        let status = br#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success"}"#;
        assert_eq!(p.object(status).unwrap().as_ref(), status);
        assert!(p.object(b"[1]").is_err());
        assert!(p.object(br#"{"metadata":{"name":"#).is_err());
    }
}
