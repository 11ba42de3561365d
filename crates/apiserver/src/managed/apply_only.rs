//! What the in-process clients (the controllers and the provider) are shown of
//! `metadata.managedFields`: only its Apply entries, in watch events, lists and write
//! responses. Those are all the controllers read (which fields their own applies own); the
//! Update entries, recorded on nearly every write, made decoding each event, listed object
//! and written object the largest cost of field tracking. Gets still carry every entry, so
//! a controller that needs them reads the object. This plays the part of Cluster API's
//! cache transform that strips managedFields.
//!
//! The byte ranges of the Update entries are found once per stored object
//! ([`update_entry_ranges`], kept by [`crate::store::Stored`]); each watcher's copy is then
//! the object with those ranges left out ([`without`]).

use std::sync::LazyLock;

use bytes::{BufMut, Bytes, BytesMut};
use memchr::memmem::Finder;

const KEY: &[u8] = b"\"managedFields\":[";
const APPLY: &[u8] = b"\"operation\":\"Apply\"";

static KEY_FINDER: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(KEY));
static APPLY_FINDER: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(APPLY));

/// The end (exclusive) of the JSON object or array starting at `start`. It jumps from one
/// quote or bracket to the next, and through strings from one quote or backslash to the
/// next: only the brackets of the value's own kind change the depth.
fn value_end(b: &[u8], start: usize) -> usize {
    let (open, close) = if b.get(start) == Some(&b'[') { (b'[', b']') } else { (b'{', b'}') };
    let (mut depth, mut i) = (0usize, start);
    while let Some(off) = memchr::memchr3(b'"', open, close, &b[i..]) {
        let at = i + off;
        match b[at] {
            b'"' => {
                i = string_end(b, at + 1);
                continue;
            }
            c if c == open => depth += 1,
            _ => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return at + 1;
                }
            }
        }
        i = at + 1;
    }
    b.len()
}

/// The end (exclusive) of the string whose contents start at `i`.
fn string_end(b: &[u8], mut i: usize) -> usize {
    while let Some(off) = memchr::memchr2(b'"', b'\\', &b[i..]) {
        let at = i + off;
        if b[at] == b'"' {
            return at + 1;
        }
        i = (at + 2).min(b.len());
    }
    b.len()
}

/// The byte ranges (start, end exclusive) of `d` holding the Update entries of every
/// managedFields array, with the commas between entries, so that leaving them out keeps
/// the JSON valid (the server writes JSON without whitespace). Empty when there are none.
pub fn update_entry_ranges(d: &[u8]) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let mut push = |from: usize, to: usize| {
        if from < to {
            ranges.push((from, to));
        }
    };
    let mut at = 0;
    while let Some(pos) = KEY_FINDER.find(&d[at..]).map(|p| p + at) {
        let open = pos + KEY.len() - 1;
        let end = value_end(d, open);
        // Entries kept, as (start, end exclusive); a comma follows each one but the last.
        let mut kept: Vec<(usize, usize)> = Vec::new();
        let (mut i, mut dropped) = (open + 1, false);
        while i < end && d[i] == b'{' {
            let e = value_end(d, i);
            if APPLY_FINDER.find(&d[i..e]).is_some() {
                kept.push((i, e));
            } else {
                dropped = true;
            }
            i = if e < end && d[e] == b',' { e + 1 } else { e };
        }
        let close = end.saturating_sub(1);
        if dropped {
            match (kept.first(), kept.last()) {
                (Some(first), Some(last)) => {
                    push(open + 1, first.0);
                    for pair in kept.windows(2) {
                        push(pair[0].1 + 1, pair[1].0);
                    }
                    push(last.1, close);
                }
                _ => push(open + 1, close),
            }
        }
        at = end.max(pos + 1);
    }
    ranges
}

/// `d` without `ranges` (in order, not overlapping), and where the byte at `mark`
/// (outside them) went.
pub fn without(d: &[u8], ranges: &[(usize, usize)], mark: usize) -> (Bytes, usize) {
    let gone: usize = ranges.iter().map(|(a, b)| b - a).sum();
    let mut out = BytesMut::with_capacity(d.len() - gone);
    let (mut at, mut moved) = (0, mark);
    for &(from, to) in ranges {
        out.put_slice(&d[at..from]);
        if from <= mark {
            moved -= to - from;
        }
        at = to;
    }
    out.put_slice(&d[at..]);
    (out.freeze(), moved)
}

/// A write's answer as in-process clients are shown it; `ranges` are the body's
/// [`update_entry_ranges`] when already known.
pub fn body_apply_entries_only(d: Bytes, ranges: Option<&[(usize, usize)]>) -> Bytes {
    let found;
    let ranges = match ranges {
        Some(r) => r,
        None => {
            found = update_entry_ranges(&d);
            &found
        }
    };
    if ranges.is_empty() { d } else { without(&d, ranges, 0).0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn apply_entries_only(d: &[u8], mark: usize) -> Option<(Bytes, usize)> {
        let ranges = update_entry_ranges(d);
        (!ranges.is_empty()).then(|| without(d, &ranges, mark))
    }

    fn managers(v: &Value) -> Vec<&str> {
        v["metadata"]["managedFields"].as_array().unwrap().iter().map(|e| e["manager"].as_str().unwrap()).collect()
    }

    #[test]
    fn a_value_ends_at_its_own_closing_bracket() {
        for v in [
            json!({"a": "}]{[", "b": ["x", {"c": "\\\""}], "d\\": {}}),
            json!([{"a": "]"}, ["\\", "\"]"], [], {}]),
            json!({}),
        ] {
            let text = format!("{v},\"tail\":1");
            assert_eq!(value_end(text.as_bytes(), 0), v.to_string().len(), "{text}");
        }
        assert_eq!(value_end(b"{\"unterminated", 0), 14);
    }

    #[test]
    fn keeps_apply_entries_only() {
        let obj = json!({"type": "MODIFIED", "object": {"metadata": {"managedFields": [
            {"manager": "a", "operation": "Apply", "fieldsV1": {"f:x": {}}},
            {"manager": "b", "operation": "Update", "fieldsV1": {"f:y": {".": {}, "f:\"]}": {}}}},
            {"manager": "c", "operation": "Apply", "fieldsV1": {}}
        ], "name": "n", "resourceVersion": "7"}}});
        let bytes = serde_json::to_vec(&obj).unwrap();
        let mark = memchr::memmem::find(&bytes, b"\"7\"").unwrap();
        let (out, moved) = apply_entries_only(&bytes, mark).unwrap();
        assert_eq!(&out[moved..moved + 3], b"\"7\"");
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(managers(&v["object"]), ["a", "c"]);
        assert_eq!(v["object"]["metadata"]["name"], "n");
        let none = json!({"metadata": {"managedFields": [{"manager": "b", "operation": "Update"}]}});
        let out = body_apply_entries_only(Bytes::from(serde_json::to_vec(&none).unwrap()), None);
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["metadata"]["managedFields"], json!([]));
        let plain = Bytes::from_static(b"{\"metadata\":{}}");
        assert_eq!(body_apply_entries_only(plain.clone(), None), plain);
        let applied_only = br#"{"metadata":{"managedFields":[{"operation":"Apply"}]}}"#;
        assert!(apply_entries_only(applied_only, 0).is_none());
    }

    #[test]
    fn every_position_of_the_update_entries_leaves_valid_json() {
        let a = |m: &str| json!({"manager": m, "operation": "Apply"});
        let u = |m: &str| json!({"manager": m, "operation": "Update"});
        let cases = [
            (vec![u("u1"), a("a1")], vec!["a1"]),
            (vec![a("a1"), u("u1")], vec!["a1"]),
            (vec![a("a1"), u("u1"), u("u2"), a("a2"), u("u3")], vec!["a1", "a2"]),
            (vec![u("u1"), u("u2")], vec![]),
        ];
        for (list, want) in cases {
            let obj = json!({"metadata": {"managedFields": list, "name": "n"}, "spec": {"x": 1}});
            let bytes = serde_json::to_vec(&obj).unwrap();
            let mark = memchr::memmem::find(&bytes, b"\"spec\"").unwrap();
            let (out, moved) = apply_entries_only(&bytes, mark).unwrap();
            let v: Value = serde_json::from_slice(&out).unwrap();
            assert_eq!(managers(&v), want);
            assert_eq!(&out[moved..moved + 6], b"\"spec\"");
            assert_eq!((v["metadata"]["name"].as_str(), v["spec"]["x"].as_i64()), (Some("n"), Some(1)));
        }
    }
}
