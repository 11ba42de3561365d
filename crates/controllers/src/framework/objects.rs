//! Small facts about Cluster API objects that several controllers read.

use drydock_api::capi::core::v1beta2::Machine;
use drydock_api::capi::keys::CONTROL_PLANE_LABEL;

/// The API group of Cluster API's core kinds.
pub const CAPI_GROUP: &str = "cluster.x-k8s.io";

/// True for a Machine of a control plane (it carries the control-plane label).
pub fn is_control_plane(m: &Machine) -> bool {
    m.metadata.labels.as_ref().is_some_and(|l| l.contains_key(CONTROL_PLANE_LABEL))
}
