//! The Cluster API kinds, served with upstream's groups, versions and field names.
//!
//! - [`core`] holds `cluster.x-k8s.io/v1beta1` (Cluster, ClusterClass, Machine, MachineSet,
//!   MachineDeployment, MachineHealthCheck, MachinePool, MachineDrainRule).
//! - [`kubeadm`] holds `bootstrap.cluster.x-k8s.io/v1beta1` (KubeadmConfig, KubeadmConfigTemplate)
//!   and `controlplane.cluster.x-k8s.io/v1beta1` (KubeadmControlPlane, KubeadmControlPlaneTemplate).
//! - [`inmemory`] holds `infrastructure.cluster.x-k8s.io/v1alpha1` in-memory provider kinds.
//! - [`dev`] holds `infrastructure.cluster.x-k8s.io` v1beta1 and v1beta2 Dev kinds (upstream's
//!   test provider; its in-memory backend runs on drydock's in-memory provider).
//! - [`docker`] holds the Docker provider's kinds (v1beta1 and v1beta2), simulated in memory.
//! - [`ipam`] holds `ipam.cluster.x-k8s.io` claims and addresses (v1beta1) and in-cluster pools (v1alpha2).
//! - [`addons`] holds `addons.cluster.x-k8s.io` ClusterResourceSet and ClusterResourceSetBinding.
//! - [`runtime`] holds `runtime.cluster.x-k8s.io` ExtensionConfig (Runtime Extensions).
//!
//! Shared helpers: [`conditions`] (v1beta1 conditions and the Ready summary),
//! [`condition_types`] (the condition types and reasons controllers set), [`owner`]
//! (owner references), [`keys`] (well-known labels, annotations, finalizers), [`intstr`]
//! (int-or-percent), [`version`] (Kubernetes versions and skew), [`duration`] (Go durations),
//! [`refs`] (object references), [`contract`] (the contract labels of provider CRDs), [`naming`] (Machine naming
//! templates), [`validation`] (label maps, annotations, immutability) and [`common`] (small shared types).
//!
//! Each kind's admission lives next to its types (`<kind>_admission.rs`) and works on the
//! typed struct; [`resources`] lists every kind with its CRD and admission for the API server,
//! and [`crds`] renders the kinds as installable CustomResourceDefinitions.

pub mod addons;
pub mod common;
pub mod condition_types;
pub mod conditions;
pub mod contract;
pub mod conversion;
pub mod core;
pub mod dev;
pub mod docker;
pub mod duration;
pub mod inmemory;
pub mod intstr;
pub mod ipam;
pub mod keys;
pub mod kubeadm;
pub mod naming;
pub mod owner;
pub mod refs;
mod registry;
pub mod runtime;
/// The label selector model, here too for the Cluster API kinds' users.
pub use crate::selector;
pub mod v1beta2_conditions;
pub mod validation;
pub mod version;

mod schema;
#[cfg(test)]
mod testutil;
mod typed;

pub use registry::{crds, kinds, resources};
