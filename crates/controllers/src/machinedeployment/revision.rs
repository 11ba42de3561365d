//! Revision bookkeeping: every MachineSet a MachineDeployment has run is numbered, the
//! current one always carries the highest number, and a set brought back by a rollback
//! keeps the numbers it had in `revision-history`.

use std::collections::BTreeMap;

use drydock_api::capi::keys::{REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION};

/// The revision in `annotations`: 0 when absent, an error when not a number.
pub fn revision(annotations: Option<&BTreeMap<String, String>>) -> Result<i64, String> {
    match annotations.and_then(|a| a.get(REVISION_ANNOTATION)) {
        None => Ok(0),
        Some(v) => v.parse::<i64>().map_err(|_| format!("revision annotation {v:?} is not a number")),
    }
}

/// One more than the highest revision among `old` (unparsable ones are skipped).
pub fn next_revision<'a>(old: impl IntoIterator<Item = Option<&'a BTreeMap<String, String>>>) -> i64 {
    old.into_iter().filter_map(|a| revision(a).ok()).max().unwrap_or(0) + 1
}

/// Sets the revision of the current set in its annotations. A revision never decreases;
/// when a set that had a revision gets a new one, the old one is appended to its
/// history. Returns the set's revision.
pub fn set_current(annotations: &mut BTreeMap<String, String>, new_revision: i64) -> Result<i64, String> {
    let had = annotations.contains_key(REVISION_ANNOTATION);
    let current = revision(Some(annotations))?;
    if current >= new_revision && had {
        return Ok(current);
    }
    if had && current != new_revision {
        let history = match annotations.get(REVISION_HISTORY_ANNOTATION) {
            Some(h) if !h.is_empty() => format!("{h},{current}"),
            _ => current.to_string(),
        };
        annotations.insert(REVISION_HISTORY_ANNOTATION.to_string(), history);
    }
    annotations.insert(REVISION_ANNOTATION.to_string(), new_revision.to_string());
    Ok(new_revision)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ann(rev: Option<&str>) -> BTreeMap<String, String> {
        rev.map(|r| [(REVISION_ANNOTATION.to_string(), r.to_string())].into()).unwrap_or_default()
    }

    #[test]
    fn parses_and_counts() {
        assert_eq!(revision(None), Ok(0));
        assert_eq!(revision(Some(&ann(Some("7")))), Ok(7));
        assert!(revision(Some(&ann(Some("x")))).is_err());
        let (a, b, c) = (ann(Some("2")), ann(Some("bad")), ann(None));
        assert_eq!(next_revision([Some(&a), Some(&b), Some(&c), None]), 3);
        assert_eq!(next_revision([]), 1);
    }

    #[test]
    fn rollback_keeps_history() {
        // A (T1) is created at revision 1.
        let mut a = ann(None);
        assert_eq!(set_current(&mut a, 1), Ok(1));
        assert_eq!(a.get(REVISION_HISTORY_ANNOTATION), None);
        // Reconciling again changes nothing.
        assert_eq!(set_current(&mut a, 1), Ok(1));
        // T2 makes B revision 2; reverting to T1 makes A revision 3 with history "1".
        let mut b = ann(None);
        assert_eq!(set_current(&mut b, next_revision([Some(&a)])), Ok(2));
        assert_eq!(set_current(&mut a, next_revision([Some(&b)])), Ok(3));
        assert_eq!(a[REVISION_HISTORY_ANNOTATION], "1");
        // Back to T2: B becomes 4 with history "2"; then A again: 5, history "1,3".
        assert_eq!(set_current(&mut b, next_revision([Some(&a)])), Ok(4));
        assert_eq!(b[REVISION_HISTORY_ANNOTATION], "2");
        assert_eq!(set_current(&mut a, next_revision([Some(&b)])), Ok(5));
        assert_eq!(a[REVISION_HISTORY_ANNOTATION], "1,3");
        // A revision never decreases.
        let mut high = ann(Some("9"));
        assert_eq!(set_current(&mut high, 4), Ok(9));
        assert!(set_current(&mut ann(Some("x")), 1).is_err());
    }
}
