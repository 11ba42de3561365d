//! Owner-reference helpers: building references to an owner, finding the controller, and
//! checking ownership by group and kind the way Cluster API does (the API version is
//! ignored so that a version bump of the owner's API does not orphan anything).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::Resource;

/// A controller reference to `owner` (`controller` and `blockOwnerDeletion` true).
/// `None` when the owner has no name or uid yet.
pub fn controller_ref<K: Resource<DynamicType = ()>>(owner: &K) -> Option<OwnerReference> {
    Some(OwnerReference { controller: Some(true), block_owner_deletion: Some(true), ..owner.owner_ref(&())? })
}

/// A plain (non-controller) owner reference to `owner`.
pub fn owner_ref<K: Resource<DynamicType = ()>>(owner: &K) -> Option<OwnerReference> {
    owner.owner_ref(&())
}

/// The group part of an `apiVersion` (`""` for the core group).
pub fn api_group(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

/// The controller reference of an object, if any.
pub fn get_controller(meta: &ObjectMeta) -> Option<&OwnerReference> {
    meta.owner_references.iter().flatten().find(|r| r.controller == Some(true))
}

/// True if `meta` has a controller reference with `owner`'s uid.
pub fn is_controlled_by<K: Resource>(meta: &ObjectMeta, owner: &K) -> bool {
    match (get_controller(meta), owner.meta().uid.as_deref()) {
        (Some(r), Some(uid)) => r.uid == uid,
        _ => false,
    }
}

/// True if any owner reference of `meta` has `owner`'s uid.
pub fn is_owned_by<K: Resource>(meta: &ObjectMeta, owner: &K) -> bool {
    owner.meta().uid.as_deref().is_some_and(|uid| meta.owner_references.iter().flatten().any(|r| r.uid == uid))
}

/// The first owner reference of `kind` in `group` (any version).
pub fn find_owner<'a>(meta: &'a ObjectMeta, group: &str, kind: &str) -> Option<&'a OwnerReference> {
    meta.owner_references.iter().flatten().find(|r| r.kind == kind && api_group(&r.api_version) == group)
}

/// True if `meta` has an owner reference of `kind` in `group` (any version).
pub fn has_owner(meta: &ObjectMeta, group: &str, kind: &str) -> bool {
    find_owner(meta, group, kind).is_some()
}

fn same_target(a: &OwnerReference, b: &OwnerReference) -> bool {
    a.kind == b.kind && a.name == b.name && api_group(&a.api_version) == api_group(&b.api_version)
}

/// Adds `reference`, or replaces an existing reference to the same group/kind/name (so a
/// newer API version or uid wins). Returns true when `meta` changed.
pub fn ensure_owner_ref(meta: &mut ObjectMeta, reference: OwnerReference) -> bool {
    let refs = meta.owner_references.get_or_insert_with(Vec::new);
    match refs.iter_mut().find(|r| same_target(r, &reference)) {
        Some(existing) if *existing == reference => false,
        Some(existing) => {
            *existing = reference;
            true
        }
        None => {
            refs.push(reference);
            true
        }
    }
}

/// Removes references to the same group/kind/name as `reference`. Returns true when `meta`
/// changed.
pub fn remove_owner_ref(meta: &mut ObjectMeta, reference: &OwnerReference) -> bool {
    let Some(refs) = meta.owner_references.as_mut() else { return false };
    let before = refs.len();
    refs.retain(|r| !same_target(r, reference));
    refs.len() != before
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capi::core::{Cluster, ClusterSpec};

    fn cluster(uid: &str) -> Cluster {
        let mut c = Cluster::new("c1", ClusterSpec::default());
        c.metadata.uid = Some(uid.to_string());
        c
    }

    #[test]
    fn controller_ref_and_checks() {
        let owner = cluster("u-1");
        let r = controller_ref(&owner).unwrap();
        assert_eq!(r.api_version, "cluster.x-k8s.io/v1beta1");
        assert_eq!((r.kind.as_str(), r.name.as_str()), ("Cluster", "c1"));
        assert_eq!((r.controller, r.block_owner_deletion), (Some(true), Some(true)));

        let mut meta = ObjectMeta::default();
        assert!(!is_owned_by(&meta, &owner));
        assert!(ensure_owner_ref(&mut meta, r.clone()));
        assert!(!ensure_owner_ref(&mut meta, r.clone()));
        assert!(is_owned_by(&meta, &owner));
        assert!(is_controlled_by(&meta, &owner));
        assert!(!is_controlled_by(&meta, &cluster("u-2")));
        assert!(has_owner(&meta, "cluster.x-k8s.io", "Cluster"));
        assert!(!has_owner(&meta, "cluster.x-k8s.io", "MachineSet"));
        assert_eq!(get_controller(&meta).map(|r| r.name.as_str()), Some("c1"));

        // A reference at another API version of the same owner replaces the old one.
        let newer = OwnerReference { api_version: "cluster.x-k8s.io/v1beta2".into(), ..r.clone() };
        assert!(ensure_owner_ref(&mut meta, newer));
        assert_eq!(meta.owner_references.as_ref().unwrap().len(), 1);
        assert!(remove_owner_ref(&mut meta, &r));
        assert!(!has_owner(&meta, "cluster.x-k8s.io", "Cluster"));
    }

    #[test]
    fn plain_owner_ref_is_not_a_controller() {
        let r = owner_ref(&cluster("u-1")).unwrap();
        assert_ne!(r.controller, Some(true));
        assert_eq!(api_group("v1"), "");
        assert_eq!(api_group("apps/v1"), "apps");
    }
}
