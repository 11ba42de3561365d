//! The other served versions of a written kind, for the managedFields of managers recorded
//! in them ([`managed::Versions`]).

use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use super::{Api, Target};
use crate::managed::{self, MergeType};
use crate::registry::{Registry, Resource};

/// The versions of `t`'s kind that its logical cluster serves.
pub(super) struct ServedVersions<'a> {
    api: &'a Api,
    t: &'a Target,
    /// Looked up on first use: most writes never need another version.
    registry: std::sync::OnceLock<std::sync::Arc<Registry>>,
    /// Whether another version was asked for.
    asked: AtomicBool,
}

impl<'a> ServedVersions<'a> {
    pub fn new(api: &'a Api, t: &'a Target) -> Self {
        Self { api, t, registry: std::sync::OnceLock::new(), asked: AtomicBool::new(false) }
    }

    /// Whether the write was looked at in another version.
    pub fn asked(&self) -> bool {
        self.asked.load(Ordering::Relaxed)
    }
}

impl ServedVersions<'_> {
    /// The resource of `api_version` (another version of the written kind), if served.
    fn other(&self, api_version: &str) -> Option<&Resource> {
        self.asked.store(true, Ordering::Relaxed);
        let def = &self.t.res.def;
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        if group != def.group {
            return None;
        }
        let registry = self.registry.get_or_init(|| self.api.registries.for_cluster(&self.t.cluster));
        registry.lookup(&def.group, version, &def.plural).map(AsRef::as_ref)
    }
}

impl managed::Versions for ServedVersions<'_> {
    fn view(&self, obj: &Value, api_version: &str) -> Option<(Value, &MergeType)> {
        // Callers ask only for versions other than the writer's.
        let other = self.other(api_version)?;
        let stored = self.api.to_storage(&self.t.res, obj.clone()).ok()?;
        let seen = self.api.served(other, stored).ok()?;
        Some((seen, other.merge_type()))
    }

    fn back(&self, obj: &Value, api_version: &str) -> Option<Value> {
        let other = self.other(api_version)?;
        let stored = self.api.to_storage(other, obj.clone()).ok()?;
        self.api.served(&self.t.res, stored).ok()
    }
}
