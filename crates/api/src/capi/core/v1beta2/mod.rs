//! `cluster.x-k8s.io/v1beta2`: the core kinds as Cluster API v1.11+ serves and stores them
//! (the hub of conversion; [`super::conversion`] converts to and from v1beta1).

/// The status plumbing of the hub kinds: v1beta1 conditions under `status.deprecated.v1beta1`
/// (`$deprecated`), v1beta2 ones in `status.conditions`.
macro_rules! impl_hub_conditions {
    ($kind:ty, $deprecated:ty) => {
        crate::capi::v1beta2_conditions::impl_has_hub_conditions!($kind);

        impl crate::capi::conditions::HasConditions for $kind {
            fn conditions(&self) -> &[crate::capi::conditions::Condition] {
                self.deprecated_v1beta1().and_then(|d| d.conditions.as_deref()).unwrap_or(&[])
            }
            fn conditions_mut(&mut self) -> &mut Vec<crate::capi::conditions::Condition> {
                self.deprecated_v1beta1_mut().conditions.get_or_insert_with(Vec::new)
            }
        }

        impl $kind {
            /// `status.deprecated.v1beta1`, created when missing.
            pub fn deprecated_v1beta1_mut(&mut self) -> &mut $deprecated {
                self.status
                    .get_or_insert_with(Default::default)
                    .deprecated
                    .get_or_insert_with(Default::default)
                    .v1beta1
                    .get_or_insert_with(Default::default)
            }

            /// `status.deprecated.v1beta1`, if any.
            pub fn deprecated_v1beta1(&self) -> Option<&$deprecated> {
                self.status.as_ref()?.deprecated.as_ref()?.v1beta1.as_ref()
            }
        }
    };
}

/// [`impl_hub_conditions`], and the accessors Cluster and Machine share: of
/// `status.initialization` (`$init`) and of the v1beta1 failure fields.
macro_rules! impl_hub_status {
    ($kind:ty, $init:ty, $deprecated:ty) => {
        impl_hub_conditions!($kind, $deprecated);

        impl $kind {
            fn initialization(&self) -> Option<&$init> {
                self.status.as_ref()?.initialization.as_ref()
            }

            /// `status.initialization`, created when missing.
            pub fn initialization_mut(&mut self) -> &mut $init {
                self.status.get_or_insert_with(Default::default).initialization.get_or_insert_with(Default::default)
            }

            /// The v1beta1 failure fields (`status.deprecated.v1beta1`), if any is set.
            pub fn failure(&self) -> Option<&$deprecated> {
                let d = self.deprecated_v1beta1()?;
                (d.failure_reason.is_some() || d.failure_message.is_some()).then_some(d)
            }
        }
    };
}

mod cluster;
mod clusterclass;
mod clusterclass_variables;
mod machine;
mod machinedeployment;
mod machinedrainrule;
mod machinehealthcheck;
mod machinepool;
mod machineset;
mod topology;

pub use cluster::*;
pub use clusterclass::*;
pub use clusterclass_variables::*;
pub use machine::*;
pub use machinedeployment::*;
pub use machinedrainrule::*;
pub use machinehealthcheck::*;
pub use machinepool::*;
pub use machineset::*;
pub use topology::*;
