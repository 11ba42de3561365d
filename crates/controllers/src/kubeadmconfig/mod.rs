//! The kubeadm bootstrap controller (upstream's CABPK): renders a KubeadmConfig owned by a
//! Machine into the bootstrap data secret the infrastructure provider boots the machine with.
//!
//! Once the Cluster's infrastructure is ready, the first control plane Machine gets
//! `kubeadm init` data; every other Machine waits until the Cluster reports
//! ControlPlaneInitialized and then gets `kubeadm join` data (as a control plane node or a
//! worker). The data is cloud-config by default, Ignition with `spec.format: ignition`. It is
//! written once into a Secret named like the config, and the config reports it as the
//! bootstrap contract (v1beta2) asks: `status.initialization.dataSecretCreated` and
//! `status.dataSecretName`, with the v1beta2 conditions in `status.conditions` and the
//! v1beta1 ones under `status.deprecated.v1beta1`.
//!
//! Data waits for the cluster CA (`<cluster>-ca`, see [`certificates`]): control plane nodes
//! get the cluster's CA files, workers pin the CA in join discovery. Join data carries a
//! bootstrap token whose Secret lives in the workload cluster until the node joined
//! ([`tokens`]); it is made once per config (minting on every reconcile was upstream's CPU
//! sink at scale).

mod certificates;
mod cloud_config;
mod ignition;
mod kubeadm;
mod render;
mod setup;
mod template;
mod tokens;
mod yaml;

use std::collections::BTreeMap;
use std::sync::Arc;

use drydock_api::capi::condition_types::{
    CERTIFICATES_AVAILABLE, DATA_SECRET_AVAILABLE, DATA_SECRET_GENERATION_FAILED, WAITING_FOR_CLUSTER_INFRASTRUCTURE,
    WAITING_FOR_CONTROL_PLANE_AVAILABLE,
};
use drydock_api::capi::conditions::{HasConditions, Severity};
use drydock_api::capi::core::v1beta2::{Cluster, Machine};
use drydock_api::capi::keys::CLUSTER_NAME_LABEL;
use drydock_api::capi::kubeadm::v1beta2::KubeadmConfig;
use drydock_api::capi::owner;
use drydock_api::capi::v1beta2_conditions::{self, HasV1Beta2Conditions, Input, Observed, Reasons, names};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;
use kube::runtime::controller::Controller;
use kube::runtime::reflector::ObjectRef;

use crate::framework::Result;
use crate::framework::events::PendingEvents;
use crate::framework::index::{Changes, Index};
use crate::framework::objects::is_control_plane;
use crate::framework::pause::{self, Pause, cluster_paused};
use crate::framework::requeue::Requeue;
use crate::framework::runner::{self, Queue};
use crate::framework::write::Writer;
use crate::framework::write::controller_ref_of;
use crate::{Context, Running};
use kubeadm::Mode;

/// Name of the controller in metrics and logs.
pub const CONTROLLER: &str = "kubeadmconfig";

/// Secret type of Cluster API bootstrap data.
pub const SECRET_TYPE: &str = "cluster.x-k8s.io/secret";

struct State {
    ctx: Arc<Context>,
    /// Machine names by cluster name.
    machines: Index,
    /// What each Cluster last looked like to the configs waiting on it.
    clusters: Changes<ClusterGate>,
    /// Writes configs, remembering what it superseded.
    writer: Writer,
    /// What configs need of each Cluster's CA.
    cas: certificates::KnownCas,
    /// The join tokens' expirations, as last written or read.
    tokens: tokens::Kept,
}

/// The parts of a Cluster a config waits on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct ClusterGate {
    paused: bool,
    infrastructure_ready: bool,
    control_plane_initialized: bool,
    endpoint_valid: bool,
}

impl ClusterGate {
    fn of(c: &Cluster) -> Self {
        Self {
            paused: cluster_paused(c),
            infrastructure_ready: c.infrastructure_provisioned(),
            control_plane_initialized: c.control_plane_initialized(),
            endpoint_valid: c.spec.control_plane_endpoint.as_ref().is_some_and(|e| e.is_valid()),
        }
    }
}

pub fn controller(ctx: &Arc<Context>) -> Running {
    let state = Arc::new(State {
        ctx: ctx.clone(),
        machines: Index::default(),
        clusters: Changes::default(),
        writer: Writer::tracking(CONTROLLER),
        cas: certificates::KnownCas::default(),
        tokens: tokens::Kept::default(),
    });
    let queue = Queue::new(CONTROLLER);
    let i = &ctx.informers;
    let (s1, s2) = (state.clone(), state.clone());
    let c = Controller::for_shared_stream(queue.track(i.kubeadm_configs.subscribe()), i.kubeadm_configs.store.clone())
        .watches_shared_stream(i.machines.subscribe(), queue.map_to(move |m: &Machine| s1.config_of(m)))
        .watches_shared_stream(
            i.clusters.subscribe(),
            queue.map_to(move |c: &Cluster| s2.configs_of_changed_cluster(c)),
        );
    Box::pin(runner::run(
        CONTROLLER,
        c,
        queue,
        ctx.settings.kubeadmconfig_concurrency,
        ctx.clock().clone(),
        state,
        reconcile,
    ))
}

impl State {
    fn config(&self, ns: &str, name: &str) -> Option<Arc<KubeadmConfig>> {
        self.ctx.informers.kubeadm_configs.store.get(&ObjectRef::new(name).within(ns))
    }

    fn machine(&self, ns: &str, name: &str) -> Option<Arc<Machine>> {
        self.ctx.informers.machines.store.get(&ObjectRef::new(name).within(ns))
    }

    /// The Machine a config renders for: its owner Machine, or a MachinePool seen as the
    /// Machine of its template (a worker joining; its data serves every instance, and its
    /// join token lives as long as the pool).
    fn owner_machine(&self, config: &KubeadmConfig) -> Option<Arc<Machine>> {
        let ns = config.namespace().unwrap_or_default();
        if let Some(o) = owner::find_owner(&config.metadata, "cluster.x-k8s.io", "Machine") {
            return self.machine(&ns, &o.name);
        }
        let o = owner::find_owner(&config.metadata, "cluster.x-k8s.io", "MachinePool")?;
        let pool = self.ctx.informers.machine_pools.store.get(&ObjectRef::new(&o.name).within(&ns))?;
        let mut m = Machine::new(&o.name, pool.spec.template.spec.clone());
        m.metadata.namespace = Some(ns);
        m.metadata.uid.clone_from(&pool.metadata.uid);
        m.metadata.labels = pool.spec.template.metadata.labels.clone();
        m.spec.cluster_name.clone_from(&pool.spec.cluster_name);
        // The pool's data secret is this config's own.
        m.spec.bootstrap.data_secret_name = None;
        Some(Arc::new(m))
    }

    /// The Machine's KubeadmConfig while it has no data yet (the only time the Machine
    /// matters to it).
    fn config_of(&self, m: &Machine) -> Vec<ObjectRef<KubeadmConfig>> {
        let ns = m.metadata.namespace.as_deref().unwrap_or_default();
        self.machines.record(ns, &m.spec.cluster_name, &m.name_any());
        config_name(m)
            .filter(|name| self.config(ns, name).is_none_or(|c| !is_ready(&c)))
            .map(|name| vec![ObjectRef::new(name).within(ns)])
            .unwrap_or_default()
    }

    /// Configs of a Cluster's Machines still waiting for data, when the Cluster changed in
    /// a way they wait on.
    fn configs_of_changed_cluster(&self, c: &Cluster) -> Vec<ObjectRef<KubeadmConfig>> {
        let ns = c.metadata.namespace.as_deref().unwrap_or_default();
        let name = c.name_any();
        if c.metadata.deletion_timestamp.is_some() {
            // A Cluster of the same name made later has its own CA.
            self.cas.forget(ns, &name);
            self.tokens.forget(ns, &name);
        }
        let store = &self.ctx.informers.clusters.store;
        let exists =
            |k: &str| k.split_once('/').is_some_and(|(n, c)| store.get(&ObjectRef::new(c).within(n)).is_some());
        if !self.clusters.changed(format!("{ns}/{name}"), ClusterGate::of(c), store.len(), exists) {
            return Vec::new();
        }
        self.machines_of(ns, &name)
            .iter()
            .filter_map(|m| config_name(m).map(String::from))
            .filter(|cfg| self.config(ns, cfg).is_none_or(|c| !is_ready(&c)))
            .map(|cfg| ObjectRef::new(&cfg).within(ns))
            .collect()
    }

    fn machines_of(&self, ns: &str, cluster: &str) -> Vec<Arc<Machine>> {
        self.machines
            .members(ns, cluster, |m| self.machine(ns, m).is_some())
            .iter()
            .filter_map(|m| self.machine(ns, m))
            .filter(|m| m.spec.cluster_name == cluster)
            .collect()
    }

    /// Whether `machine` is the one to run `kubeadm init`: among the cluster's live control
    /// plane Machines, one whose config already has data, else one whose config asks for init,
    /// else the oldest. Deciding from the stores needs no lock object; the control plane
    /// provider creates one Machine until the cluster is initialized anyway.
    fn is_init_machine(&self, ns: &str, machine: &Machine) -> bool {
        let rank = |m: &Machine| {
            let cfg = config_name(m).and_then(|c| self.config(ns, c));
            let ready = cfg.as_ref().is_some_and(|c| is_ready(c));
            let init = cfg.as_ref().is_some_and(|c| c.spec.init_configuration.is_some());
            (!ready, !init, m.metadata.creation_timestamp.as_ref().map(|t| t.0), m.name_any())
        };
        self.machines_of(ns, &machine.spec.cluster_name)
            .iter()
            .filter(|m| is_control_plane(m) && m.metadata.deletion_timestamp.is_none())
            .min_by_key(|m| rank(m))
            .is_none_or(|first| first.name_any() == machine.name_any())
    }
}

/// The name of the KubeadmConfig a Machine references, if it references one.
fn config_name(m: &Machine) -> Option<&str> {
    let r = m.spec.bootstrap.config_ref.as_ref()?;
    r.is_kind("bootstrap.cluster.x-k8s.io", "KubeadmConfig").then_some(r.name.as_str())
}

/// Whether the config's data secret exists (the bootstrap contract's flag, and its name).
fn is_ready(c: &KubeadmConfig) -> bool {
    c.status.as_ref().is_some_and(|s| {
        s.initialization.as_ref().and_then(|i| i.data_secret_created) == Some(true) && s.data_secret_name.is_some()
    })
}

/// What to do with a config, from what the stores say.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Next {
    /// Data already generated.
    Done,
    /// The Machine brings its own data secret.
    UseMachineSecret(String),
    Wait {
        reason: &'static str,
        message: &'static str,
    },
    Render(Mode),
}

fn next(config: &KubeadmConfig, machine: &Machine, cluster: &Cluster, init_machine: bool) -> Next {
    if is_ready(config) {
        return Next::Done;
    }
    if let Some(s) = &machine.spec.bootstrap.data_secret_name {
        return Next::UseMachineSecret(s.clone());
    }
    let gate = ClusterGate::of(cluster);
    if !gate.infrastructure_ready {
        return Next::Wait { reason: WAITING_FOR_CLUSTER_INFRASTRUCTURE, message: "" };
    }
    let control_plane = is_control_plane(machine);
    if !gate.control_plane_initialized {
        if control_plane && init_machine {
            return Next::Render(Mode::Init);
        }
        let message = "Waiting for the control plane to be initialized";
        return Next::Wait { reason: WAITING_FOR_CONTROL_PLANE_AVAILABLE, message };
    }
    if !gate.endpoint_valid {
        let message = "Waiting for Cluster.spec.controlPlaneEndpoint";
        return Next::Wait { reason: WAITING_FOR_CONTROL_PLANE_AVAILABLE, message };
    }
    Next::Render(Mode::Join { control_plane })
}

async fn reconcile(config: Arc<KubeadmConfig>, state: Arc<State>) -> Result<Requeue> {
    if state.writer.is_stale(config.as_ref()) || config.metadata.deletion_timestamp.is_some() {
        return Ok(Requeue::await_change());
    }
    let ns = config.namespace().unwrap_or_default();
    // Configs are rendered for their Machine (or MachinePool), which makes itself the owner.
    let Some(machine) = state.owner_machine(&config) else {
        return Ok(Requeue::await_change());
    };
    let cluster_name =
        config.labels().get(CLUSTER_NAME_LABEL).cloned().unwrap_or_else(|| machine.spec.cluster_name.clone());
    let Some(cluster) = state.ctx.informers.clusters.store.get(&ObjectRef::new(&cluster_name).within(&ns)) else {
        return Ok(Requeue::await_change());
    };
    let api = state.ctx.api::<KubeadmConfig>(&ns);
    if let Some(p) = Pause::of(&cluster, &config.metadata, false) {
        // Only the Paused condition is written, once.
        let mut c = (*config).clone();
        pause::set_v1beta2_condition(&mut c, Some((p, &cluster)), &state.ctx.clock().condition_time());
        state.writer.apply(&api, &config, &c).await?;
        return Ok(Requeue::await_change());
    }
    let now = state.ctx.clock().condition_time();
    let mut c = (*config).clone();
    let mut events = PendingEvents::default();
    let init_machine = is_control_plane(&machine) && state.is_init_machine(&ns, &machine);
    let result = match next(&config, &machine, &cluster, init_machine) {
        // The join token lives while the Machine joins.
        Next::Done if tokens::needed(&machine) && !init_machine => refresh_token(&state, &config, &cluster).await,
        Next::Done => Ok(None),
        Next::UseMachineSecret(name) => {
            set_ready(&mut c, name, &now);
            Ok(None)
        }
        Next::Wait { reason, message } => {
            c.mark_false(DATA_SECRET_AVAILABLE, reason, Severity::Info, message, now.clone());
            Ok(None)
        }
        Next::Render(mode) => {
            let subject = Subject { config: &config, machine: &machine, cluster: &cluster };
            generate(&state, &subject, mode, &mut c, &mut events, &now).await
        }
    };
    c.set_ready_summary(&[DATA_SECRET_AVAILABLE, CERTIFICATES_AVAILABLE], now.clone());
    set_v1beta2(&mut c, &now);
    if result.is_ok() {
        let generation = c.metadata.generation;
        c.status.get_or_insert_with(Default::default).observed_generation = generation;
    }
    state.writer.apply(&api, &config, &c).await?;
    events.publish(&state.ctx, config.as_ref()).await;
    result.map(Requeue::after_opt)
}

/// The v1beta2 conditions, from the v1beta1 ones just computed: `DataSecretAvailable`,
/// `CertificatesAvailable` (once certificates were looked at: a Machine bringing its own
/// data secret never needs them), `Ready` summarising both, and `Paused` (False: a paused
/// config is not reconciled this far).
fn set_v1beta2(c: &mut KubeadmConfig, now: &Time) {
    let data = if is_ready(c) {
        Observed::true_(names::DATA_SECRET_AVAILABLE, names::AVAILABLE_REASON)
    } else {
        Observed::false_(
            names::DATA_SECRET_AVAILABLE,
            names::NOT_AVAILABLE_REASON,
            v1beta1_detail(c, DATA_SECRET_AVAILABLE),
        )
    };
    c.set_v1beta2(data, now);
    if let Some(v1) = c.get_condition(CERTIFICATES_AVAILABLE) {
        let available = v1.is_true();
        let detail = if available { String::new() } else { v1beta1_detail(c, CERTIFICATES_AVAILABLE) };
        let certs = Observed::when(
            names::CERTIFICATES_AVAILABLE,
            available,
            names::AVAILABLE_REASON,
            names::NOT_AVAILABLE_REASON,
            detail,
        );
        c.set_v1beta2(certs, now);
    }
    let inputs =
        [Input::positive(names::DATA_SECRET_AVAILABLE), Input::positive(names::CERTIFICATES_AVAILABLE).optional()];
    let ready = v1beta2_conditions::summary(names::READY, c.v1beta2_conditions(), &inputs, Reasons::READY);
    c.set_v1beta2(ready, now);
    pause::set_v1beta2_condition(c, None, now);
}

/// A v1beta1 condition's message, else its reason.
fn v1beta1_detail(c: &KubeadmConfig, type_: &str) -> String {
    let Some(cond) = c.get_condition(type_) else {
        return String::new();
    };
    match (cond.message.as_deref(), cond.reason.as_deref()) {
        (Some(m), _) if !m.is_empty() => m.to_string(),
        (_, Some(r)) => r.to_string(),
        _ => String::new(),
    }
}

fn set_ready(c: &mut KubeadmConfig, secret: String, now: &Time) {
    let s = c.status.get_or_insert_with(Default::default);
    s.initialization.get_or_insert_default().data_secret_created = Some(true);
    s.data_secret_name = Some(secret);
    c.mark_true(DATA_SECRET_AVAILABLE, now.clone());
}

/// Keeps a joining Machine's token alive; returns when to look again.
async fn refresh_token(
    state: &State,
    config: &KubeadmConfig,
    cluster: &Cluster,
) -> Result<Option<std::time::Duration>> {
    let ctx = &state.ctx;
    let Some(ca) = certificates::lookup(ctx, &state.cas, (config, cluster), false).await? else { return Ok(None) };
    let Some(token) = tokens::of(config, &ca) else { return Ok(None) };
    tokens::keep(ctx, &state.tokens, cluster, &token, ctx.clock().now()).await?;
    Ok(Some(tokens::RECHECK))
}

/// The config being rendered, for its Machine in its Cluster.
pub(super) struct Subject<'a> {
    pub config: &'a KubeadmConfig,
    pub machine: &'a Machine,
    pub cluster: &'a Cluster,
}

/// Renders the data once the cluster CA exists, writes the secret and marks the config
/// ready. Returns when to look again while waiting for the CA.
async fn generate(
    state: &State,
    subject: &Subject<'_>,
    mode: Mode,
    c: &mut KubeadmConfig,
    events: &mut PendingEvents,
    now: &Time,
) -> Result<Option<std::time::Duration>> {
    let Subject { config, machine, cluster } = *subject;
    let generates = certificates::generates(mode, cluster);
    let ca = match certificates::lookup(&state.ctx, &state.cas, (config, cluster), generates).await {
        Ok(Some(ca)) => ca,
        Ok(None) => {
            certificates::mark_waiting(c, &cluster.name_any(), now);
            return Ok(Some(certificates::RECHECK));
        }
        Err(e) => {
            certificates::mark_failed(c, generates, &e, now);
            return Err(e);
        }
    };
    c.mark_true(CERTIFICATES_AVAILABLE, now.clone());
    let token = match mode {
        Mode::Join { .. } => {
            let token = tokens::of(config, &ca);
            // Data never waits on the workload cluster: its token Secret is written when it
            // answers, here or on the next look (the config is requeued while it joins).
            if let Some(t) = &token
                && let Err(e) = tokens::keep(&state.ctx, &state.tokens, cluster, t, state.ctx.clock().now()).await
            {
                tracing::info!(config = %config.name_any(), error = %e, "bootstrap token Secret not written yet");
            }
            token
        }
        Mode::Init => None,
    };
    let rendered = match render::render(state, subject, mode, ca.pin, token.as_deref()).await {
        Ok(r) => r,
        Err(e) => {
            c.mark_false(
                DATA_SECRET_AVAILABLE,
                DATA_SECRET_GENERATION_FAILED,
                Severity::Warning,
                &e.to_string(),
                now.clone(),
            );
            return Err(e);
        }
    };
    let name = config.name_any();
    let secret = Secret {
        metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            name: Some(name.clone()),
            namespace: config.namespace(),
            labels: Some(BTreeMap::from([(CLUSTER_NAME_LABEL.to_string(), cluster.name_any())])),
            owner_references: Some(vec![controller_ref_of(config)?]),
            ..Default::default()
        },
        type_: Some(SECRET_TYPE.into()),
        data: Some(BTreeMap::from([
            ("value".to_string(), ByteString(rendered.value.into_bytes())),
            ("format".to_string(), ByteString(rendered.format.as_bytes().to_vec())),
        ])),
        ..Default::default()
    };
    // A second render (from a stale read of the config) finds the secret and stays quiet.
    let secrets = state.ctx.api::<Secret>(&config.namespace().unwrap_or_default());
    let created = match crate::framework::write::create(&secrets, CONTROLLER, &secret).await {
        Ok(_) => true,
        Err(kube::Error::Api(s)) if s.code == 409 => false,
        Err(e) => return Err(e.into()),
    };
    set_ready(c, name.clone(), now);
    // A join token is looked after until the node joined.
    let again = token.map(|_| tokens::RECHECK);
    if !created {
        return Ok(again);
    }
    let what = if mode == Mode::Init { "init" } else { "join" };
    events.normal(
        "BootstrapDataGenerated",
        format!("{} {what} data for Machine {} written to Secret {name}", rendered.format, machine.name_any()),
    );
    if let Some(note) = rendered.note {
        events.warning("AdditionalConfigNotMerged", note);
    }
    Ok(again)
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::core::v1beta2::APIEndpoint;

    fn now() -> k8s_openapi::apimachinery::pkg::apis::meta::v1::Time {
        drydock_api::capi::conditions::time_at(jiff::Timestamp::now())
    }
    use drydock_api::capi::keys::CONTROL_PLANE_LABEL;
    use drydock_api::capi::kubeadm::v1beta2::{KubeadmConfigInitializationStatus, KubeadmConfigStatus};

    fn cluster(infra: bool, initialized: bool) -> Cluster {
        let mut c = Cluster::new("c1", Default::default());
        c.spec.control_plane_endpoint = Some(APIEndpoint { host: Some("h".into()), port: Some(6443) });
        let init = c.initialization_mut();
        init.infrastructure_provisioned = Some(infra);
        init.control_plane_initialized = Some(initialized);
        c
    }

    fn machine(control_plane: bool) -> Machine {
        let mut m = Machine::new("m1", Default::default());
        if control_plane {
            m.metadata.labels = Some([(CONTROL_PLANE_LABEL.to_string(), String::new())].into());
        }
        m
    }

    #[test]
    fn init_join_or_wait() {
        let cfg = KubeadmConfig::new("m1", Default::default());
        let wait_infra = next(&cfg, &machine(true), &cluster(false, false), true);
        assert!(matches!(wait_infra, Next::Wait { reason: WAITING_FOR_CLUSTER_INFRASTRUCTURE, .. }));
        assert_eq!(next(&cfg, &machine(true), &cluster(true, false), true), Next::Render(Mode::Init));
        let second_cp = next(&cfg, &machine(true), &cluster(true, false), false);
        assert!(matches!(second_cp, Next::Wait { reason: WAITING_FOR_CONTROL_PLANE_AVAILABLE, .. }));
        let worker = next(&cfg, &machine(false), &cluster(true, false), true);
        assert!(matches!(worker, Next::Wait { reason: WAITING_FOR_CONTROL_PLANE_AVAILABLE, .. }));
        assert_eq!(
            next(&cfg, &machine(false), &cluster(true, true), false),
            Next::Render(Mode::Join { control_plane: false })
        );
        assert_eq!(
            next(&cfg, &machine(true), &cluster(true, true), false),
            Next::Render(Mode::Join { control_plane: true })
        );
    }

    #[test]
    fn ready_configs_and_machine_secrets() {
        let mut cfg = KubeadmConfig::new("m1", Default::default());
        let mut m = machine(false);
        m.spec.bootstrap.data_secret_name = Some("own".into());
        assert_eq!(next(&cfg, &m, &cluster(false, false), false), Next::UseMachineSecret("own".into()));
        cfg.status = Some(KubeadmConfigStatus {
            initialization: Some(KubeadmConfigInitializationStatus { data_secret_created: Some(true) }),
            data_secret_name: Some("m1".into()),
            ..Default::default()
        });
        assert_eq!(next(&cfg, &m, &cluster(false, false), false), Next::Done);
    }

    #[test]
    fn v1beta2_ready_summarises_data_secret_and_certificates() {
        let mut cfg = KubeadmConfig::new("m1", Default::default());
        let t = now();
        cfg.mark_false(DATA_SECRET_AVAILABLE, WAITING_FOR_CLUSTER_INFRASTRUCTURE, Severity::Info, "", t.clone());
        set_v1beta2(&mut cfg, &t);
        let data = cfg.v1beta2_condition(names::DATA_SECRET_AVAILABLE).unwrap();
        assert_eq!((data.status.as_str(), data.reason.as_str()), ("False", "NotAvailable"));
        assert_eq!(data.message, WAITING_FOR_CLUSTER_INFRASTRUCTURE);
        assert!(cfg.v1beta2_condition(names::CERTIFICATES_AVAILABLE).is_none(), "not looked at yet");
        let ready = cfg.v1beta2_condition(names::READY).unwrap();
        assert_eq!((ready.status.as_str(), ready.reason.as_str()), ("False", "NotReady"));
        assert_eq!(ready.message, "* DataSecretAvailable: WaitingForClusterInfrastructure");

        cfg.mark_true(CERTIFICATES_AVAILABLE, t.clone());
        set_ready(&mut cfg, "m1".into(), &t);
        set_v1beta2(&mut cfg, &t);
        let types: Vec<_> = cfg.v1beta2_conditions().iter().map(|c| (c.type_.as_str(), c.status.as_str())).collect();
        assert_eq!(
            types,
            [
                ("Ready", "True"),
                ("CertificatesAvailable", "True"),
                ("DataSecretAvailable", "True"),
                ("Paused", "False")
            ]
        );
        // The v1beta2 status shape: the contract flag, and the v1beta1 conditions kept apart.
        let s = cfg.status.as_ref().unwrap();
        assert_eq!(s.initialization.as_ref().and_then(|i| i.data_secret_created), Some(true));
        let old = s.deprecated.as_ref().and_then(|d| d.v1beta1.as_ref()).and_then(|v| v.conditions.as_ref()).unwrap();
        assert!(old.iter().any(|c| c.type_ == DATA_SECRET_AVAILABLE && c.is_true()), "{old:?}");
        let before = cfg.clone();
        set_v1beta2(&mut cfg, &now());
        assert_eq!(cfg, before, "recomputing changes nothing");
    }
}
