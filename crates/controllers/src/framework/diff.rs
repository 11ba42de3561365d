//! Minimal JSON merge patches: the difference between an object as read and as the
//! reconciler wants it, so a reconcile writes only what changed (and nothing when nothing did).
//!
//! Objects are diffed as serialized text ([`Raw`]): both sides come from one `Serialize`
//! implementation, so equal subtrees are equal bytes, compared without building a JSON
//! tree; only the members that differ are parsed, into the patch (RFC 7396: objects merge
//! member by member, arrays and scalars are replaced whole, a removed member is null).

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// An object serialized as JSON text, read member by member.
pub struct Raw<'a> {
    members: Vec<(Cow<'a, str>, &'a RawValue)>,
}

impl<'a> Raw<'a> {
    /// The top-level members of `json` (empty when it is not an object).
    pub fn parse(json: &'a str) -> serde_json::Result<Self> {
        if !is_object(json) {
            return Ok(Self { members: Vec::new() });
        }
        Ok(Self { members: serde_json::from_str::<Members<'a>>(json)?.0 })
    }

    /// The member `key`, unless absent or null.
    pub fn get(&self, key: &str) -> Option<&'a RawValue> {
        self.members.iter().find(|(k, _)| k == key).map(|(_, v)| *v).filter(|v| v.get() != "null")
    }

    /// Removes and returns the member `key`, unless absent or null.
    pub fn take(&mut self, key: &str) -> Option<&'a RawValue> {
        let i = self.members.iter().position(|(k, _)| k == key)?;
        Some(self.members.remove(i).1).filter(|v| v.get() != "null")
    }

    /// The merge patch turning `self` into `new`, or `None` when they are equal.
    pub fn diff(&self, new: &Raw<'a>) -> serde_json::Result<Option<Value>> {
        let mut patch = Map::new();
        for (k, nv) in &new.members {
            match self.members.iter().find(|(ok, _)| ok == k) {
                Some((_, ov)) => {
                    if let Some(d) = raw_diff(ov, nv)? {
                        patch.insert(k.to_string(), d);
                    }
                }
                None => {
                    patch.insert(k.to_string(), serde_json::from_str(nv.get())?);
                }
            }
        }
        for (k, _) in &self.members {
            if !new.members.iter().any(|(nk, _)| nk == k) {
                patch.insert(k.to_string(), Value::Null);
            }
        }
        Ok(if patch.is_empty() { None } else { Some(Value::Object(patch)) })
    }
}

/// The merge patch turning the value `old` into `new` (absent and null alike), or `None`
/// when they are equal.
pub fn raw_diff_opt(old: Option<&RawValue>, new: Option<&RawValue>) -> serde_json::Result<Option<Value>> {
    fn present(v: Option<&RawValue>) -> Option<&RawValue> {
        v.filter(|v| v.get() != "null")
    }
    match (present(old), present(new)) {
        (None, None) => Ok(None),
        (Some(_), None) => Ok(Some(Value::Null)),
        (None, Some(n)) => Ok(Some(serde_json::from_str(n.get())?)),
        (Some(o), Some(n)) => raw_diff(o, n),
    }
}

fn raw_diff(old: &RawValue, new: &RawValue) -> serde_json::Result<Option<Value>> {
    if old.get() == new.get() {
        return Ok(None);
    }
    if is_object(old.get()) && is_object(new.get()) {
        return Raw::parse(old.get())?.diff(&Raw::parse(new.get())?);
    }
    // Arrays and scalars are replaced whole: a null inside a value cannot say "remove".
    Ok(Some(serde_json::from_str(new.get())?))
}

fn is_object(json: &str) -> bool {
    json.trim_start().starts_with('{')
}

/// An object's members, keys borrowed from the text unless they hold escapes.
struct Members<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut members = Vec::with_capacity(map.size_hint().unwrap_or(8));
                while let Some((k, v)) = map.next_entry::<Key<'de>, &'de RawValue>()? {
                    members.push((k.0, v));
                }
                Ok(Members(members))
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn diff(old: &Value, new: &Value) -> Option<Value> {
        let (o, n) = (raw(old), raw(new));
        Raw::parse(&o).unwrap().diff(&Raw::parse(&n).unwrap()).unwrap()
    }

    #[test]
    fn diffs() {
        assert_eq!(diff(&json!({"a":1}), &json!({"a":1})), None);
        assert_eq!(diff(&json!({"a":1,"b":2}), &json!({"a":1,"c":3})), Some(json!({"b":null,"c":3})));
        assert_eq!(diff(&json!({"s":{"x":[1]}}), &json!({"s":{"x":[1,2]}})), Some(json!({"s":{"x":[1,2]}})));
        assert_eq!(diff(&json!({"s":{"x":1,"y":2}}), &json!({"s":{"x":1,"y":3}})), Some(json!({"s":{"y":3}})));
    }

    fn raw(v: &Value) -> String {
        serde_json::to_string(v).unwrap()
    }

    /// Applying the diff to the old object gives the new one.
    #[test]
    fn diffs_apply() {
        let cases = [
            (json!({"a":1}), json!({"a":1})),
            (json!({"a":1,"b":2}), json!({"a":1,"c":3})),
            (json!({"s":{"x":[1]}}), json!({"s":{"x":[1,2]}})),
            (json!({"s":{"x":{"y":"z","k\"q":1}}}), json!({"s":{"x":{"y":"w","k\"q":1}}})),
            (json!({"a":{"b":1}}), json!({"a":"scalar"})),
            (json!({"a":null,"b":1}), json!({"b":1})),
            (json!({"spec":{"r":1},"status":{"p":"A"}}), json!({"spec":{"r":2},"status":{"p":"A"}})),
        ];
        for (old, new) in cases {
            let got = diff(&old, &new);
            let mut applied = old.clone();
            if let Some(p) = &got {
                json_patch_apply(&mut applied, p);
            }
            let strip = |v: &Value| -> Value {
                let mut v = v.clone();
                if let Some(m) = v.as_object_mut() {
                    m.retain(|_, x| !x.is_null());
                }
                v
            };
            assert_eq!(strip(&applied), strip(&new), "{old} -> {new}: {got:?}");
            if old == new {
                assert_eq!(got, None);
            }
        }
    }

    #[test]
    fn raw_members_and_absent_values() {
        let text = raw(&json!({"metadata":{"name":"m"},"status":{"phase":"Running"},"spec":null}));
        let mut r = Raw::parse(&text).unwrap();
        assert!(r.get("spec").is_none());
        assert_eq!(r.take("status").map(RawValue::get), Some(r#"{"phase":"Running"}"#));
        assert!(r.get("status").is_none());
        let status: Box<RawValue> = RawValue::from_string(r#"{"phase":"Running"}"#.into()).unwrap();
        let null: Box<RawValue> = RawValue::from_string("null".into()).unwrap();
        assert_eq!(raw_diff_opt(Some(&status), None).unwrap(), Some(Value::Null));
        assert_eq!(raw_diff_opt(Some(&status), Some(&null)).unwrap(), Some(Value::Null));
        assert_eq!(raw_diff_opt(None, Some(&status)).unwrap(), Some(json!({"phase":"Running"})));
        assert_eq!(raw_diff_opt(None, Some(&null)).unwrap(), None);
        assert_eq!(raw_diff_opt(Some(&status), Some(&status)).unwrap(), None);
    }

    fn json_patch_apply(doc: &mut Value, patch: &Value) {
        if let (Value::Object(d), Value::Object(p)) = (&mut *doc, patch) {
            for (k, v) in p {
                if v.is_null() {
                    d.remove(k);
                } else if v.is_object() && d.get(k).is_some_and(Value::is_object) {
                    json_patch_apply(d.get_mut(k).unwrap(), v);
                } else {
                    d.insert(k.clone(), v.clone());
                }
            }
        }
    }
}
