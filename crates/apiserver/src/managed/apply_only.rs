//! What the in-process clients (the controllers and the provider) are shown of
//! `metadata.managedFields`: only its Apply entries, in watch events and write responses.
//! Those are all the controllers read (which fields their own applies own); the Update
//! entries, recorded on nearly every write, made decoding each event and each written
//! object the largest cost of field tracking. Gets and lists still carry every entry, so a
//! controller that needs them reads the object. This plays the part of Cluster API's cache
//! transform that strips managedFields.

use bytes::Bytes;

const KEY: &[u8] = b"\"managedFields\":[";
const APPLY: &[u8] = b"\"operation\":\"Apply\"";

/// The end (exclusive) of the JSON value starting at `start` (an object or array).
fn value_end(b: &[u8], start: usize) -> usize {
    let (mut depth, mut in_str, mut i) = (0usize, false, start);
    while i < b.len() {
        let c = b[i];
        if in_str {
            if c == b'\\' {
                i += 1;
            } else if c == b'"' {
                in_str = false;
            }
        } else {
            match c {
                b'"' => in_str = true,
                b'[' | b'{' => depth += 1,
                b']' | b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return i + 1;
                    }
                }
                _ => {}
            }
        }
        i += 1;
    }
    b.len()
}

/// `d` with the Update entries of every managedFields array left out (the server writes
/// JSON without whitespace), and where the byte at `mark` (outside those arrays) went;
/// `None` when there was nothing to leave out.
pub fn apply_entries_only(d: &[u8], mark: usize) -> Option<(Bytes, usize)> {
    let first = memchr::memmem::find(d, KEY)?;
    let mut out: Vec<u8> = Vec::with_capacity(d.len());
    let (mut moved, mut dropped) = (mark, false);
    let mut copy = |out: &mut Vec<u8>, from: usize, to: usize| {
        if (from..to).contains(&mark) {
            moved = out.len() + (mark - from);
        }
        out.extend_from_slice(&d[from..to]);
    };
    let mut at = 0;
    let mut next = Some(first);
    while let Some(pos) = next {
        let open = pos + KEY.len() - 1;
        copy(&mut out, at, open + 1);
        let end = value_end(d, open);
        let mut i = open + 1;
        let mut kept = 0;
        while i < end && d[i] == b'{' {
            let e = value_end(d, i);
            if memchr::memmem::find(&d[i..e], APPLY).is_some() {
                if kept > 0 {
                    out.push(b',');
                }
                copy(&mut out, i, e);
                kept += 1;
            } else {
                dropped = true;
            }
            i = if e < end && d[e] == b',' { e + 1 } else { e };
        }
        out.push(b']');
        at = end;
        next = memchr::memmem::find(&d[at..], KEY).map(|p| p + at);
    }
    copy(&mut out, at, d.len());
    dropped.then(|| (out.into(), moved))
}

/// [`apply_entries_only`] of a whole body (a write's answer).
pub fn body_apply_entries_only(d: Bytes) -> Bytes {
    apply_entries_only(&d, 0).map_or(d, |(b, _)| b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let managers: Vec<&str> = v["object"]["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["manager"].as_str().unwrap())
            .collect();
        assert_eq!(managers, ["a", "c"]);
        assert_eq!(v["object"]["metadata"]["name"], "n");
        let none = json!({"metadata": {"managedFields": [{"manager": "b", "operation": "Update"}]}});
        let out = body_apply_entries_only(Bytes::from(serde_json::to_vec(&none).unwrap()));
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["metadata"]["managedFields"], json!([]));
        let plain = Bytes::from_static(b"{\"metadata\":{}}");
        assert_eq!(body_apply_entries_only(plain.clone()), plain);
        let applied_only = br#"{"metadata":{"managedFields":[{"operation":"Apply"}]}}"#;
        assert!(apply_entries_only(applied_only, 0).is_none());
    }
}
