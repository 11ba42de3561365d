//! JSON objects walked in key order. serde_json's maps iterate their keys sorted, so a
//! walk over an object can meet its counterpart in another version of the object (the
//! stored one, the one before a change) in the same pass, instead of looking each member
//! up: a lookup in a small map compares the key with every key before it.

use std::cmp::Ordering;
use std::iter::Peekable;

use serde_json::{Map, Value};

/// Lookups of keys in ascending order in a sequence sorted by key, each resuming where the
/// last one stopped.
pub struct Ascending<'k, V, I: Iterator<Item = (&'k String, V)>> {
    items: Option<Peekable<I>>,
}

impl<'k, V, I: Iterator<Item = (&'k String, V)>> Ascending<'k, V, I> {
    pub fn new(items: Option<I>) -> Self {
        Self { items: items.map(Iterator::peekable) }
    }

    /// The value of `key`, if the sequence has it. Keys must come in ascending order.
    pub fn get(&mut self, key: &str) -> Option<V> {
        let items = self.items.as_mut()?;
        while let Some((k, _)) = items.peek() {
            match k.as_str().cmp(key) {
                Ordering::Less => {
                    items.next();
                }
                Ordering::Equal => return items.next().map(|(_, v)| v),
                Ordering::Greater => break,
            }
        }
        None
    }
}

/// The members of a stored object, asked for in ascending key order.
pub type Counterparts<'o> = Ascending<'o, &'o Value, serde_json::map::Iter<'o>>;

impl<'o> Counterparts<'o> {
    pub fn of(old: Option<&'o Map<String, Value>>) -> Self {
        Self::new(old.map(Map::iter))
    }
}

/// The members of two versions of an object side by side, in key order: each key once, with
/// its value in either.
pub fn side_by_side<'a>(
    old: Option<&'a Map<String, Value>>,
    new: Option<&'a Map<String, Value>>,
) -> impl Iterator<Item = (&'a String, Option<&'a Value>, Option<&'a Value>)> {
    let (mut old, mut new) = (old.into_iter().flatten().peekable(), new.into_iter().flatten().peekable());
    std::iter::from_fn(move || {
        let order = match (old.peek(), new.peek()) {
            (None, None) => return None,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some((o, _)), Some((n, _))) => o.cmp(n),
        };
        Some(match order {
            Ordering::Less => old.next().map(|(k, v)| (k, Some(v), None))?,
            Ordering::Greater => new.next().map(|(k, v)| (k, None, Some(v)))?,
            Ordering::Equal => {
                let ((k, o), (_, n)) = (old.next()?, new.next()?);
                (k, Some(o), Some(n))
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn json_maps_iterate_their_keys_in_order() {
        // Everything here relies on it: a map that kept insertion order would need lookups.
        let v = json!({"b": 1, "a": 2, "c": 3, "B": 4});
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["B", "a", "b", "c"]);
    }

    #[test]
    fn ascending_lookups_find_what_searches_find() {
        let old = json!({"a": 1, "c": 3, "d": 4, "f": 6});
        let mut found = Counterparts::of(old.as_object());
        let got: Vec<Option<&Value>> = ["b", "c", "d", "e", "g"].iter().map(|k| found.get(k)).collect();
        assert_eq!(got, [None, Some(&json!(3)), Some(&json!(4)), None, None]);
        assert_eq!(Counterparts::of(None).get("a"), None);
    }

    #[test]
    fn two_versions_meet_member_by_member() {
        let (old, new) = (json!({"a": 1, "c": 3, "e": 5}), json!({"b": 2, "c": 30, "f": 6}));
        let got: Vec<(&str, Option<&Value>, Option<&Value>)> =
            side_by_side(old.as_object(), new.as_object()).map(|(k, o, n)| (k.as_str(), o, n)).collect();
        let (one, two, three, thirty, five, six) = (json!(1), json!(2), json!(3), json!(30), json!(5), json!(6));
        assert_eq!(
            got,
            [
                ("a", Some(&one), None),
                ("b", None, Some(&two)),
                ("c", Some(&three), Some(&thirty)),
                ("e", Some(&five), None),
                ("f", None, Some(&six)),
            ]
        );
        assert_eq!(side_by_side(None, new.as_object()).count(), 3);
        assert_eq!(side_by_side(old.as_object(), None).count(), 3);
        assert_eq!(side_by_side(None, None).count(), 0);
    }
}
