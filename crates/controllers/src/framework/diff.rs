//! Minimal JSON merge patches: the difference between an object as read and as the
//! reconciler wants it, so a reconcile writes only what changed (and nothing when nothing did).
//!
//! Objects are diffed as serialized text: both sides come from one `Serialize`
//! implementation, so equal subtrees are equal bytes, compared without building a JSON
//! tree. The outer levels come split into members ([`Serialized`]); below them a text is
//! read member by member ([`Raw`]) only where the two sides differ, and only the members
//! that differ are parsed, into the patch (RFC 7396: objects merge member by member,
//! arrays and scalars are replaced whole, a removed member is null).

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::serialized::Serialized;

/// An object serialized as JSON text, read member by member.
struct Raw<'a> {
    members: Vec<(Cow<'a, str>, &'a RawValue)>,
}

impl<'a> Raw<'a> {
    /// The top-level members of `json` (empty when it is not an object).
    fn parse(json: &'a str) -> serde_json::Result<Self> {
        if !is_object(json) {
            return Ok(Self { members: Vec::new() });
        }
        Ok(Self { members: serde_json::from_str::<Members<'a>>(json)?.0 })
    }

    /// The merge patch turning `self` into `new`, or `None` when they are equal.
    fn diff(&self, new: &Raw<'a>) -> serde_json::Result<Option<Value>> {
        let mut patch = Map::new();
        for (k, nv) in &new.members {
            match self.members.iter().find(|(ok, _)| ok == k) {
                Some((_, ov)) => {
                    if let Some(d) = raw_diff(ov.get(), nv.get())? {
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
/// when they are equal. Objects split into members ([`Serialized::Object`]) are compared
/// member by member; values kept as text are scanned only where they differ.
pub fn diff(old: Option<&Serialized>, new: Option<&Serialized>) -> serde_json::Result<Option<Value>> {
    match (present(old), present(new)) {
        (None, None) => Ok(None),
        (Some(_), None) => Ok(Some(Value::Null)),
        (None, Some(n)) => n.to_value().map(Some),
        (Some(Serialized::Object(o)), Some(Serialized::Object(n))) => {
            let mut patch = Map::new();
            for (k, nv) in n {
                if let Some(d) = diff(member(o, k), Some(nv))? {
                    patch.insert(k.clone(), d);
                }
            }
            for (k, ov) in o {
                if member(n, k).is_none()
                    && let Some(d) = diff(Some(ov), None)?
                {
                    patch.insert(k.clone(), d);
                }
            }
            Ok(if patch.is_empty() { None } else { Some(Value::Object(patch)) })
        }
        (Some(o), Some(n)) => raw_diff(&o.text(), &n.text()),
    }
}

fn present(v: Option<&Serialized>) -> Option<&Serialized> {
    v.filter(|v| !v.is_null())
}

fn member<'a>(members: &'a [(String, Serialized)], key: &str) -> Option<&'a Serialized> {
    members.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

fn raw_diff(old: &str, new: &str) -> serde_json::Result<Option<Value>> {
    if old == new {
        return Ok(None);
    }
    if is_object(old) && is_object(new) {
        return Raw::parse(old)?.diff(&Raw::parse(new)?);
    }
    // Arrays and scalars are replaced whole: a null inside a value cannot say "remove".
    Ok(Some(serde_json::from_str(new)?))
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

    /// The patch from `old` to `new`, their objects split `levels` levels deep.
    fn diff_at(old: &Value, new: &Value, levels: usize) -> Option<Value> {
        let (o, n) = (Serialized::of(old, levels).unwrap(), Serialized::of(new, levels).unwrap());
        diff(Some(&o), Some(&n)).unwrap()
    }

    #[test]
    fn diffs() {
        for levels in 0..4 {
            let diff = |o: Value, n: Value| diff_at(&o, &n, levels);
            assert_eq!(diff(json!({"a":1}), json!({"a":1})), None, "{levels}");
            assert_eq!(diff(json!({"a":1,"b":2}), json!({"a":1,"c":3})), Some(json!({"b":null,"c":3})), "{levels}");
            assert_eq!(
                diff(json!({"s":{"x":[1]}}), json!({"s":{"x":[1,2]}})),
                Some(json!({"s":{"x":[1,2]}})),
                "{levels}"
            );
            assert_eq!(
                diff(json!({"s":{"x":1,"y":2}}), json!({"s":{"x":1,"y":3}})),
                Some(json!({"s":{"y":3}})),
                "{levels}"
            );
        }
    }

    /// Applying the diff to the old object gives the new one, however deep the objects are
    /// split.
    #[test]
    fn diffs_apply() {
        let cases = [
            (json!({"a":1}), json!({"a":1})),
            (json!({"a":1,"b":2}), json!({"a":1,"c":3})),
            (json!({"s":{"x":[1]}}), json!({"s":{"x":[1,2]}})),
            (json!({"s":{"x":{"y":"z","k\"q":1}}}), json!({"s":{"x":{"y":"w","k\"q":1}}})),
            (json!({"a":{"b":1}}), json!({"a":"scalar"})),
            (json!({"a":"scalar"}), json!({"a":{"b":1}})),
            (json!({"a":null,"b":1}), json!({"b":1})),
            (json!({"spec":{"r":1},"status":{"p":"A"}}), json!({"spec":{"r":2},"status":{"p":"A"}})),
            (json!({"s":{"t":{"u":{"v":1,"w":2}}}}), json!({"s":{"t":{"u":{"v":1}}}})),
        ];
        let strip = |v: &Value| -> Value {
            let mut v = v.clone();
            if let Some(m) = v.as_object_mut() {
                m.retain(|_, x| !x.is_null());
            }
            v
        };
        for levels in 0..5 {
            for (old, new) in &cases {
                let got = diff_at(old, new, levels);
                let mut applied = old.clone();
                if let Some(p) = &got {
                    json_patch_apply(&mut applied, p);
                }
                assert_eq!(strip(&applied), strip(new), "{old} -> {new} at {levels}: {got:?}");
                if old == new {
                    assert_eq!(got, None);
                }
            }
        }
    }

    #[test]
    fn members_and_absent_values() {
        let obj = json!({"metadata":{"name":"m"},"status":{"phase":"Running"},"spec":null});
        let mut s = Serialized::of(&obj, 2).unwrap();
        assert!(s.get("spec").is_none());
        assert_eq!(s.take("status").map(|v| v.text()).as_deref(), Some(r#"{"phase":"Running"}"#));
        assert!(s.get("status").is_none());
        let status = Serialized::of(&json!({"phase":"Running"}), 1).unwrap();
        let null = Serialized::Text("null".into());
        assert_eq!(diff(Some(&status), None).unwrap(), Some(Value::Null));
        assert_eq!(diff(Some(&status), Some(&null)).unwrap(), Some(Value::Null));
        assert_eq!(diff(None, Some(&status)).unwrap(), Some(json!({"phase":"Running"})));
        assert_eq!(diff(None, Some(&null)).unwrap(), None);
        assert_eq!(diff(Some(&status), Some(&status)).unwrap(), None);
        // A member that is null on one side and absent on the other is no change.
        let with_null = Serialized::of(&json!({"phase":"Running","reason":null}), 1).unwrap();
        assert_eq!(diff(Some(&status), Some(&with_null)).unwrap(), None);
        assert_eq!(diff(Some(&with_null), Some(&status)).unwrap(), None);
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
