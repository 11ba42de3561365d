//! Resource ids: each storage key `group/plural` is interned to a small [`ResId`] the first
//! time it is seen, and keeps it for the life of the process. Ids therefore do not depend on
//! registration order: the log can be replayed before the CRDs that serve its rows are
//! known, and every served version of a resource shares one table.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::RwLock;

use super::{ResId, ResourceNames};

#[derive(Default)]
struct Inner {
    by_key: HashMap<Arc<str>, ResId>,
    keys: Vec<Arc<str>>,
    /// Selectable field paths of each resource's storage version (empty until registered).
    selectable: Vec<Arc<[String]>>,
}

/// The interner shared by the store and every registry snapshot.
#[derive(Default)]
pub struct ResIds {
    inner: RwLock<Inner>,
}

impl ResIds {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// The id of `group/plural`, allocated on first sight.
    pub fn intern(&self, group: &str, plural: &str) -> ResId {
        self.intern_key(&format!("{group}/{plural}"))
    }

    fn intern_key(&self, key: &str) -> ResId {
        if let Some(id) = self.inner.read().by_key.get(key) {
            return *id;
        }
        let mut inner = self.inner.write();
        if let Some(id) = inner.by_key.get(key) {
            return *id;
        }
        let id = inner.keys.len() as ResId;
        let key: Arc<str> = Arc::from(key);
        inner.by_key.insert(key.clone(), id);
        inner.keys.push(key);
        inner.selectable.push(Arc::from(Vec::new()));
        id
    }

    /// Records the selectable fields of a resource's storage version, used when objects are
    /// encoded from the log. True when they changed (stored objects then need reindexing).
    pub fn set_selectable(&self, id: ResId, fields: &[String]) -> bool {
        if self.inner.read().selectable.get(id as usize).is_some_and(|s| s.as_ref() == fields) {
            return false;
        }
        let mut inner = self.inner.write();
        match inner.selectable.get_mut(id as usize) {
            Some(slot) if slot.as_ref() != fields => {
                *slot = Arc::from(fields.to_vec());
                true
            }
            _ => false,
        }
    }
}

impl ResourceNames for ResIds {
    fn log_prefix(&self, res: ResId) -> String {
        self.inner.read().keys.get(res as usize).map(|k| k.to_string()).unwrap_or_default()
    }
    fn resolve(&self, group_plural: &str) -> Option<ResId> {
        Some(self.intern_key(group_plural))
    }
    fn count(&self) -> usize {
        self.inner.read().keys.len()
    }
    fn selectable(&self, res: ResId) -> Arc<[String]> {
        self.inner.read().selectable.get(res as usize).cloned().unwrap_or_else(|| Arc::from(Vec::new()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_per_storage_key() {
        let ids = ResIds::new();
        let a = ids.intern("example.com", "widgets");
        let b = ids.intern("", "pods");
        assert_ne!(a, b);
        assert_eq!(ids.intern("example.com", "widgets"), a);
        assert_eq!(ids.resolve("example.com/widgets"), Some(a));
        assert_eq!(ids.log_prefix(b), "/pods");
        assert_eq!(ids.count(), 2);
        ids.set_selectable(a, &["spec.color".to_string()]);
        assert_eq!(ids.selectable(a).as_ref(), ["spec.color".to_string()]);
    }
}
