//! Kinds that select their children with `spec.selector`: parsing it, and mapping a child's
//! event to the objects it concerns (its controller, or those that would adopt it).

use std::sync::Arc;

use drydock_api::admission::FieldPath;
use drydock_api::capi::core::v1beta2::{MachineDeployment, MachineHealthCheck, MachineSet};
use drydock_api::capi::owner;
use drydock_api::capi::selector::Selector;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::Resource;
use kube::runtime::reflector::ObjectRef;

use super::cluster_index::{ClusterIndex, ClusterScoped};
use super::error::{Error, Result};
use super::objects::CAPI_GROUP;

/// Kinds with a label selector in `spec.selector`.
pub trait Selects {
    fn label_selector(&self) -> &LabelSelector;
}

impl Selects for MachineSet {
    fn label_selector(&self) -> &LabelSelector {
        &self.spec.selector
    }
}

impl Selects for MachineDeployment {
    fn label_selector(&self) -> &LabelSelector {
        &self.spec.selector
    }
}

impl Selects for MachineHealthCheck {
    fn label_selector(&self) -> &LabelSelector {
        &self.spec.selector
    }
}

/// The object's `spec.selector`, parsed.
pub fn parse_selector<O: Selects>(o: &O) -> Result<Selector> {
    Selector::parse(o.label_selector(), &FieldPath::new("spec").child("selector")).map_err(|errs| {
        let msgs: Vec<String> = errs.iter().map(ToString::to_string).collect();
        Error::InvalidSpec(format!("spec.selector: {}", msgs.join("; ")))
    })
}

/// A mapper for child events: records the child in `children`, then finds the owners it
/// concerns in `owners` (see [`owners_of`]).
pub fn owners_of_recorded<C, O>(
    children: &Arc<ClusterIndex<C>>,
    kind: &'static str,
    owners: &Arc<ClusterIndex<O>>,
) -> impl Fn(&C) -> Vec<ObjectRef<O>> + Send + Sync + 'static
where
    C: Resource<DynamicType = ()> + ClusterScoped + Clone + Send + Sync + 'static,
    O: Resource<DynamicType = ()> + ClusterScoped + Selects + Clone + Send + Sync + 'static,
{
    let (children, owners) = (children.clone(), owners.clone());
    move |child| {
        children.observe(child);
        owners_of(child, kind, &owners)
    }
}

/// The objects of kind `kind` (a core Cluster API kind) an event of `child` concerns: its
/// controller, when it is one, or for a child without a controller and not being deleted,
/// those of its cluster whose non-empty selector matches it (to adopt it).
pub fn owners_of<C, O>(child: &C, kind: &str, owners: &ClusterIndex<O>) -> Vec<ObjectRef<O>>
where
    C: Resource + ClusterScoped,
    O: Resource<DynamicType = ()> + ClusterScoped + Selects + Clone + 'static,
{
    let meta = child.meta();
    let ns = meta.namespace.as_deref().unwrap_or_default();
    if let Some(c) = owner::get_controller(meta) {
        let ours = c.kind == kind && owner::api_group(&c.api_version) == CAPI_GROUP;
        return if ours { vec![ObjectRef::new(&c.name).within(ns)] } else { Vec::new() };
    }
    if meta.deletion_timestamp.is_some() {
        return Vec::new();
    }
    let empty = Default::default();
    let labels = meta.labels.as_ref().unwrap_or(&empty);
    owners
        .list(ns, child.cluster_name())
        .iter()
        .filter(|o| parse_selector(&***o).is_ok_and(|s| !s.is_empty() && s.matches(labels)))
        .map(|o| ObjectRef::from_obj(&**o))
        .collect()
}
