//! The bootstrap and infrastructure contracts as a Machine sees them: adopt the referenced
//! object, copy its failure, readiness and results into the Machine.

use std::time::Duration;

use drydock_api::capi::common::ContractVersionedObjectReference;
use drydock_api::capi::condition_types::{WAITING_FOR_DATA_SECRET, WAITING_FOR_INFRASTRUCTURE};
use drydock_api::capi::conditions::{self, HasConditions, MirrorFallback, Severity};
use drydock_api::capi::core::v1beta2::{Cluster, Machine};
use drydock_api::capi::keys::{PAUSED_ANNOTATION, has_annotation};
use drydock_api::capi::v1beta2_conditions::names::{
    BOOTSTRAP_CONFIG_READY, DATA_SECRET_PROVIDED_REASON, INFRASTRUCTURE_READY as V1BETA2_INFRASTRUCTURE_READY,
    NOT_READY_REASON, OBJECT_DELETED_REASON, OBJECT_DOES_NOT_EXIST_REASON, READY as V1BETA2_READY, READY_REASON,
};
use drydock_api::capi::v1beta2_conditions::{self, HasV1Beta2Conditions, Observed};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;

use super::{NOT_FOUND_RECHECK, State, UNWATCHED_RECHECK};
use super::{node, status};
use crate::framework::events::PendingEvents;
use crate::framework::referenced::{self, Referenced, Source};
use crate::framework::requeue::sooner;
use crate::framework::write::controller_ref_of;
use crate::framework::{Error, Result};
use drydock_api::capi::condition_types::BOOTSTRAP_READY;
use drydock_api::capi::condition_types::INFRASTRUCTURE_READY;

/// On-create owners the Machine replaces as controller of its objects.
const CREATOR_KINDS: &[(&str, &str)] =
    &[("cluster.x-k8s.io", "MachineSet"), ("controlplane.cluster.x-k8s.io", "KubeadmControlPlane")];

/// One reconcile of a live Machine: the contract steps, then the Node.
pub(super) struct Steps<'a> {
    state: &'a State,
    /// The Machine as read (its uid owns the adopted objects).
    machine: &'a Machine,
    cluster: &'a Cluster,
    namespace: String,
    now: Time,
}

impl<'a> Steps<'a> {
    pub fn new(state: &'a State, machine: &'a Machine, cluster: &'a Cluster, now: Time) -> Self {
        let namespace = machine.namespace().unwrap_or_default();
        Self { state, machine, cluster, namespace, now }
    }

    /// Runs the steps in order, stopping at the first error. Returns when to look again
    /// (`None`: when a watched object changes).
    pub async fn run(&mut self, m: &mut Machine, events: &mut PendingEvents) -> Result<Option<Duration>> {
        let (bootstrap_recheck, config) = self.bootstrap(m).await?;
        let (infra_recheck, infra) = self.infrastructure(m).await?;
        status::certificates_expiry(m, config.as_ref())?;
        let node_recheck = node::reconcile(self.state, m, self.cluster, infra.as_ref(), events).await?;
        Ok(sooner(sooner(bootstrap_recheck, infra_recheck), node_recheck))
    }

    /// Reads and adopts a referenced object, returned with the full reference it was read
    /// through. `None` when it (or its CRD) is missing, or it is paused (then the recheck to
    /// return is given).
    async fn adopt(
        &self,
        r: &ContractVersionedObjectReference,
        m: &mut Machine,
    ) -> Result<Result<(Referenced, ObjectReference), Option<Duration>>> {
        let ctx = &self.state.ctx;
        let Some(full) = referenced::resolve(ctx, &self.namespace, r).await? else {
            return Ok(Err(Some(NOT_FOUND_RECHECK)));
        };
        let Some(obj) = referenced::read(ctx, &self.namespace, &full).await? else {
            return Ok(Err(Some(NOT_FOUND_RECHECK)));
        };
        if has_annotation(obj.meta().annotations.as_ref(), PAUSED_ANNOTATION) {
            return Ok(Err(None));
        }
        let owner = controller_ref_of(self.machine)?;
        referenced::adopt(ctx, super::CONTROLLER, &full, &obj, &owner, &m.spec.cluster_name, CREATOR_KINDS).await?;
        copy_failure(m, &full, &obj);
        Ok(Ok((obj, full)))
    }

    async fn bootstrap(&self, m: &mut Machine) -> Result<(Option<Duration>, Option<Referenced>)> {
        let Some(r) = m.spec.bootstrap.config_ref.clone() else {
            // Bootstrap data supplied directly. Upstream leaves BootstrapReady unset here (a
            // known gap); a Machine with its data secret is ready to boot.
            if m.spec.bootstrap.data_secret_name.is_some() {
                set_bootstrap_ready(m, true);
                m.mark_true(BOOTSTRAP_READY, self.now.clone());
                m.set_v1beta2(Observed::true_(BOOTSTRAP_CONFIG_READY, DATA_SECRET_PROVIDED_REASON), &self.now);
            }
            return Ok((None, None));
        };
        let (config, r) = match self.adopt(&r, m).await? {
            Ok(c) => c,
            Err(recheck) => {
                if recheck.is_some() {
                    let msg = format!("Waiting for bootstrap config {} to exist", versioned_name(&r));
                    m.mark_false(BOOTSTRAP_READY, WAITING_FOR_DATA_SECRET, Severity::Info, &msg, self.now.clone());
                    let missing = format!("{} does not exist", versioned_name(&r));
                    let observed = Observed::false_(BOOTSTRAP_CONFIG_READY, OBJECT_DOES_NOT_EXIST_REASON, missing);
                    m.set_v1beta2(observed, &self.now);
                }
                return Ok((recheck, None));
            }
        };
        m.set_v1beta2(mirror_ready(BOOTSTRAP_CONFIG_READY, &config, &r, config.data_secret_created()), &self.now);
        if m.spec.bootstrap.data_secret_name.is_some() {
            set_bootstrap_ready(m, true);
            m.mark_true(BOOTSTRAP_READY, self.now.clone());
            return Ok((None, Some(config)));
        }
        if config.is_deleting() {
            return Ok((None, Some(config)));
        }
        let ready = config.data_secret_created();
        let fallback = if ready {
            MirrorFallback::True
        } else {
            MirrorFallback::False { reason: WAITING_FOR_DATA_SECRET, severity: Severity::Info, message: "" }
        };
        m.set_condition(conditions::mirror(&config.conditions(), BOOTSTRAP_READY, fallback, self.now.clone()));
        if !ready {
            set_bootstrap_ready(m, false);
            return Ok((unwatched(&r), Some(config)));
        }
        let secret = config.data_secret_name().ok_or_else(|| {
            Error::inconsistent(format!("bootstrap config {}", ref_name(&r)), "ready but has no status.dataSecretName")
        })?;
        m.spec.bootstrap.data_secret_name = Some(secret);
        set_bootstrap_ready(m, true);
        Ok((None, Some(config)))
    }

    async fn infrastructure(&self, m: &mut Machine) -> Result<(Option<Duration>, Option<Referenced>)> {
        let r = m.spec.infrastructure_ref.clone();
        let (infra, r) = match self.adopt(&r, m).await? {
            Ok(i) => i,
            Err(None) => return Ok((None, None)),
            Err(Some(recheck)) => {
                if m.infrastructure_provisioned() {
                    let s = m.deprecated_v1beta1_mut();
                    s.failure_reason = Some("InvalidConfiguration".into());
                    s.failure_message = Some(format!(
                        "Machine infrastructure resource {} with name {:?} has been deleted after being ready",
                        r.kind, r.name
                    ));
                    let gone = format!("{} has been deleted", versioned_name(&r));
                    m.set_v1beta2(
                        Observed::false_(V1BETA2_INFRASTRUCTURE_READY, OBJECT_DELETED_REASON, gone),
                        &self.now,
                    );
                    return Err(Error::Missing(format!("infrastructure machine {}", versioned_name(&r))));
                }
                let msg = format!("Waiting for infrastructure machine {} to exist", versioned_name(&r));
                m.mark_false(INFRASTRUCTURE_READY, WAITING_FOR_INFRASTRUCTURE, Severity::Info, &msg, self.now.clone());
                let missing = format!("{} does not exist", versioned_name(&r));
                let observed = Observed::false_(V1BETA2_INFRASTRUCTURE_READY, OBJECT_DOES_NOT_EXIST_REASON, missing);
                m.set_v1beta2(observed, &self.now);
                return Ok((Some(recheck), None));
            }
        };
        let ready = infra.provisioned();
        set_provisioned(m, ready);
        m.set_v1beta2(mirror_ready(V1BETA2_INFRASTRUCTURE_READY, &infra, &r, ready), &self.now);
        let fallback = if ready {
            MirrorFallback::True
        } else {
            MirrorFallback::False { reason: WAITING_FOR_INFRASTRUCTURE, severity: Severity::Info, message: "" }
        };
        m.set_condition(conditions::mirror(&infra.conditions(), INFRASTRUCTURE_READY, fallback, self.now.clone()));
        // Once provisioned, a Machine goes on with what its infrastructure reported.
        if !m.infrastructure_provisioned() {
            return Ok((unwatched(&r), Some(infra)));
        }
        let provider_id = infra.provider_id().ok_or_else(|| {
            Error::inconsistent(format!("infrastructure machine {}", ref_name(&r)), "ready but has no spec.providerID")
        })?;
        if let Some(addresses) = infra.addresses() {
            m.status.get_or_insert_with(Default::default).addresses = Some(addresses);
        }
        if let Some(fd) = infra.failure_domain() {
            m.spec.failure_domain = Some(fd);
        }
        // Where the Machine runs (v1beta2): the infrastructure's placement, else the one asked
        // for, as upstream reports it for providers that do not place machines themselves.
        if let Some(fd) = m.spec.failure_domain.clone().filter(|fd| !fd.is_empty()) {
            m.status.get_or_insert_with(Default::default).failure_domain = Some(fd);
        }
        m.spec.provider_id = Some(provider_id);
        Ok((None, Some(infra)))
    }
}

/// `type_` (v1beta2) mirroring the provider object's v1beta2 `Ready`, else from its contract
/// flag (`ready`).
pub(super) fn mirror_ready(type_: &str, obj: &Referenced, r: &ObjectReference, ready: bool) -> Observed {
    let conditions = obj.v1beta2_conditions();
    let fallback = if ready {
        Observed::true_(type_, READY_REASON)
    } else {
        Observed::false_(type_, NOT_READY_REASON, format!("{} is not ready", ref_name(r)))
    };
    v1beta2_conditions::mirror(type_, v1beta2_conditions::get(&conditions, V1BETA2_READY), fallback)
}

/// `status.initialization.bootstrapDataSecretCreated`: once true, it stays (initial
/// provisioning is done once).
fn set_bootstrap_ready(m: &mut Machine, ready: bool) {
    let i = m.initialization_mut();
    i.bootstrap_data_secret_created = Some(ready || i.bootstrap_data_secret_created == Some(true));
}

/// `status.initialization.infrastructureProvisioned`: once true, it stays.
fn set_provisioned(m: &mut Machine, ready: bool) {
    let i = m.initialization_mut();
    i.infrastructure_provisioned = Some(ready || i.infrastructure_provisioned == Some(true));
}

/// Kinds nothing watches are rechecked on a timer while not ready.
fn unwatched(r: &ObjectReference) -> Option<Duration> {
    (!Source::of(r).is_watched()).then_some(UNWATCHED_RECHECK)
}

fn ref_name(r: &ObjectReference) -> String {
    format!("{} {}", r.kind.as_deref().unwrap_or_default(), r.name.as_deref().unwrap_or_default())
}

fn versioned_name(r: &ContractVersionedObjectReference) -> String {
    format!("{} {}", r.kind, r.name)
}

/// Copies a provider's terminal failure into the Machine (never cleared: a failed machine
/// is replaced, not repaired).
fn copy_failure(m: &mut Machine, r: &ObjectReference, obj: &Referenced) {
    let (reason, message) = obj.failure();
    if reason.is_none() && message.is_none() {
        return;
    }
    let s = m.deprecated_v1beta1_mut();
    if reason.is_some() {
        s.failure_reason = reason;
    }
    if let Some(msg) = message {
        s.failure_message = Some(format!(
            "Failure detected from referenced resource {}, Kind={} with name {:?}: {msg}",
            r.api_version.as_deref().unwrap_or_default(),
            r.kind.as_deref().unwrap_or_default(),
            r.name.as_deref().unwrap_or_default()
        ));
    }
}
