//! Pausing: a paused Cluster (`spec.paused`) stops every controller for its objects; the
//! `cluster.x-k8s.io/paused` annotation stops only the annotated object's controller.
//! Objects skipped while their Cluster was paused are reconciled again when it resumes.

use std::collections::HashSet;

use drydock_api::capi::core::Cluster;
use drydock_api::capi::keys::{PAUSED_ANNOTATION, has_annotation};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use parking_lot::Mutex;

use crate::framework::runner::key_of;

/// True when the object must not be reconciled now.
pub fn is_paused(cluster: &Cluster, meta: &ObjectMeta) -> bool {
    cluster.spec.paused == Some(true)
        || has_annotation(meta.annotations.as_ref(), PAUSED_ANNOTATION)
}

/// Remembers which Clusters were seen paused, to notice when one resumes.
#[derive(Default)]
pub struct ClusterPauses {
    paused: Mutex<HashSet<String>>,
}

impl ClusterPauses {
    /// Records the Cluster's state; true when it was paused and no longer is.
    pub fn resumed(&self, cluster: &Cluster) -> bool {
        let key = key_of(cluster);
        let mut paused = self.paused.lock();
        if cluster.spec.paused == Some(true) {
            paused.insert(key);
            false
        } else {
            paused.remove(&key)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::core::ClusterSpec;

    #[test]
    fn resumes_once() {
        let mut c = Cluster::new("c1", ClusterSpec::default());
        c.metadata.namespace = Some("ns".into());
        let p = ClusterPauses::default();
        assert!(!p.resumed(&c));
        c.spec.paused = Some(true);
        assert!(is_paused(&c, &ObjectMeta::default()));
        assert!(!p.resumed(&c));
        c.spec.paused = None;
        assert!(p.resumed(&c));
        assert!(!p.resumed(&c));
        let annotated = ObjectMeta {
            annotations: Some([(PAUSED_ANNOTATION.to_string(), String::new())].into()),
            ..Default::default()
        };
        assert!(is_paused(&c, &annotated));
    }
}
