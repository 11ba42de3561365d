//! A stored field set changed without decoding it: the writer's entry of the common update
//! ([`super::live`]) grows or shrinks by what the write took and removed, and the subtrees
//! neither reaches are copied as stored.

use std::collections::BTreeMap;

use serde_json::value::RawValue;

use super::live::Level;
use super::set::{FieldSet, is_element};

/// A stored field set with `took` added and then `removed` taken out, encoded as decoding
/// it into a [`FieldSet`], `union` and `subtract` would encode it; subtrees neither set
/// reaches are copied as stored. `None` if it is malformed or not in the encoder's order.
pub(super) fn merged(raw: &RawValue, took: &FieldSet, removed: &FieldSet) -> Option<Box<RawValue>> {
    let mut out = String::with_capacity(raw.get().len() + 64);
    merge_node(&Level::parse(raw)?, true, Some(took), Some(removed), &mut out)?;
    RawValue::from_string(out).ok()
}

/// Writes one node of [`merged`]; `Some(true)` when it came out empty (neither a member
/// nor a parent).
fn merge_node(
    level: &Level<'_>,
    root: bool,
    took: Option<&FieldSet>,
    removed: Option<&FieldSet>,
    out: &mut String,
) -> Option<bool> {
    let dot = level.0.iter().position(|(k, _)| k.0 == ".");
    if dot.is_some_and(|i| root || i != 0) {
        return None;
    }
    let stored = &level.0[usize::from(dot.is_some())..];
    if !stored.windows(2).all(|w| w[0].0.0 < w[1].0.0) {
        return None;
    }
    let member = (!root && level.is_member() || took.is_some_and(|t| t.member)) && !removed.is_some_and(|r| r.member);
    let start = out.len();
    out.push('{');
    if member && !root {
        out.push_str("\".\":{}");
    }
    let no_children = BTreeMap::new();
    let mut took_children = took.map_or(&no_children, |t| &t.children).iter().peekable();
    let mut stored = stored.iter().peekable();
    let mut children = 0;
    loop {
        let (key, raw, t) = match (stored.peek(), took_children.peek()) {
            (None, None) => break,
            (Some((k, _)), Some((tk, _))) if k.0.as_ref() == tk.as_str() => {
                let ((k, raw), (_, t)) = (stored.next()?, took_children.next()?);
                (k.0.as_ref(), Some(*raw), Some(t))
            }
            (Some((k, _)), Some((tk, _))) if k.0.as_ref() > tk.as_str() => {
                let (tk, t) = took_children.next()?;
                (tk.as_str(), None, Some(t))
            }
            (Some(_), _) => {
                let (k, raw) = stored.next()?;
                (k.0.as_ref(), Some(*raw), None)
            }
            (None, Some(_)) => {
                let (tk, t) = took_children.next()?;
                (tk.as_str(), None, Some(t))
            }
        };
        if !is_element(key) {
            return None;
        }
        let r = removed.and_then(|r| r.children.get(key));
        let mark = out.len();
        if member || children > 0 {
            out.push(',');
        }
        out.push_str(&serde_json::to_string(key).ok()?);
        out.push(':');
        let gone = match (raw, t, r) {
            (Some(raw), _, _) if t.is_some() || r.is_some() => merge_node(&Level::parse(raw)?, false, t, r, out)?,
            (Some(raw), _, _) => {
                out.push_str(raw.get());
                false
            }
            (None, Some(t), None) => t.write_node(out).map(|()| false)?,
            (None, Some(t), Some(r)) => {
                let mut left = t.clone();
                left.subtract(r);
                left.write_node(out)?;
                left.is_empty()
            }
            (None, None, _) => return None,
        };
        // What the removal emptied goes, as `subtract` drops it.
        if gone && r.is_some() {
            out.truncate(mark);
        } else {
            children += 1;
        }
    }
    if member && children == 0 && !root {
        out.truncate(start + 1);
    }
    out.push('}');
    Some(!member && children == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small pseudo-random field set (a fixed sequence: the test is repeatable).
    fn random_set(seed: &mut u64, depth: usize, root: bool) -> FieldSet {
        const KEYS: &[&str] = &["f:a", "f:b", "f:c", r#"k:{"name":"x"}"#, r#"v:"y""#, "f:é\"q"];
        let mut s = FieldSet { member: !root && next(seed).is_multiple_of(2), children: BTreeMap::new() };
        if depth > 0 {
            for k in KEYS {
                if next(seed).is_multiple_of(3) {
                    let c = random_set(seed, depth - 1, false);
                    if !c.is_empty() {
                        s.children.insert((*k).to_string(), c);
                    }
                }
            }
        }
        if !root && s.children.is_empty() {
            s.member = true;
        }
        s
    }

    fn next(seed: &mut u64) -> usize {
        *seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (*seed >> 33) as usize
    }

    fn decoded(stored: &RawValue, took: &FieldSet, removed: &FieldSet) -> String {
        let mut set = FieldSet::from_raw(stored).expect("well-formed");
        set.union(took);
        set.subtract(removed);
        serde_json::to_string(&set).expect("encodes")
    }

    #[test]
    fn merging_on_the_stored_encoding_gives_what_decoding_gives() {
        let mut seed = 7;
        for _ in 0..2000 {
            let stored = random_set(&mut seed, 3, true);
            let took = random_set(&mut seed, 3, true);
            let removed = random_set(&mut seed, 3, true);
            let raw = serde_json::value::to_raw_value(&stored).expect("encodes");
            let fast = merged(&raw, &took, &removed).expect("canonical input");
            assert_eq!(fast.get(), decoded(&raw, &took, &removed), "stored {raw} took {took:?} removed {removed:?}");
        }
    }

    #[test]
    fn a_set_out_of_the_encoders_order_is_left_to_decoding() {
        let none = FieldSet::default();
        let mut took = FieldSet::default();
        took.insert(&["f:a".to_string()]);
        for text in [r#"{"f:b":{},"f:a":{}}"#, r#"{"f:a":{"f:x":{},".":{}}}"#, r#"{".":{}}"#, r#"{"x:bad":{}}"#] {
            let raw = RawValue::from_string(text.to_string()).expect("JSON");
            assert!(merged(&raw, &took, &none).is_none(), "{text}");
        }
        // A node the write reaches is written as the encoder writes it.
        let raw = RawValue::from_string(r#"{"f:a":{".":{}},"f:b":{".":{}}}"#.to_string()).expect("JSON");
        assert_eq!(merged(&raw, &took, &none).expect("merged").get(), r#"{"f:a":{},"f:b":{".":{}}}"#);
    }
}
