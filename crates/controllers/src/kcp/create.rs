//! A new control plane Machine: its infrastructure machine (cloned from the KCP's
//! template), its KubeadmConfig (init for the first Machine, join for the others) and the
//! Machine itself, all controlled by the KCP. If a later step fails the earlier objects are
//! deleted, so a retry starts clean under a new name.

use std::collections::BTreeMap;

use drydock_api::capi::common::ContractVersionedObjectReference;
use drydock_api::capi::conversion::ref_up;
use drydock_api::capi::core::v1beta2::{Bootstrap, Machine, MachineSpec};
use drydock_api::capi::keys::{
    CLUSTER_NAME_LABEL, CONTROL_PLANE_LABEL, CONTROL_PLANE_NAME_LABEL, KCP_CLEANUP_HOOK_ANNOTATION,
    KUBEADM_CLUSTER_CONFIGURATION_ANNOTATION, MACHINE_FINALIZER, REMEDIATION_FOR_ANNOTATION,
    REMEDIATION_IN_PROGRESS_ANNOTATION,
};
use drydock_api::capi::kubeadm::v1beta2::{KubeadmConfig, KubeadmConfigSpec, KubeadmControlPlane};
use drydock_api::capi::owner::controller_ref;
use drydock_api::capi::validation::format_label_value;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::api::{Api, DynamicObject};
use kube::{Resource, ResourceExt};

use crate::Context;
use crate::external::{self, CloneSpec};
use crate::framework::names::{generated_name, random_suffix};
use crate::framework::propagate::NodeTimeouts;
use crate::framework::write::{self, delete_if_present};
use crate::framework::{Error, Result};

/// Labels of every object of a control plane Machine.
pub fn machine_labels(kcp: &KubeadmControlPlane, cluster: &str) -> BTreeMap<String, String> {
    let mut labels = kcp.spec.machine_template.metadata.as_ref().and_then(|m| m.labels.clone()).unwrap_or_default();
    labels.insert(CLUSTER_NAME_LABEL.into(), cluster.to_string());
    labels.insert(CONTROL_PLANE_LABEL.into(), String::new());
    labels.insert(CONTROL_PLANE_NAME_LABEL.into(), format_label_value(&kcp.name_any()));
    labels
}

/// Annotations every object of a control plane Machine carries (the template's).
pub fn machine_annotations(kcp: &KubeadmControlPlane) -> BTreeMap<String, String> {
    kcp.spec.machine_template.metadata.as_ref().and_then(|m| m.annotations.clone()).unwrap_or_default()
}

/// `<kcp>-<5 random characters>` (see [`crate::framework::names`]).
pub fn machine_name(kcp: &str) -> String {
    generated_name(kcp, &random_suffix())
}

/// The KubeadmConfig spec of a new Machine: the KCP's, with InitConfiguration for the
/// Machine that runs `kubeadm init` and JoinConfiguration for the others.
pub fn bootstrap_spec(kcp: &KubeadmControlPlane, init: bool) -> KubeadmConfigSpec {
    let mut spec = kcp.spec.kubeadm_config_spec.clone();
    if init {
        spec.join_configuration = None;
    } else {
        spec.init_configuration = None;
    }
    spec
}

/// Creates one control plane Machine; returns its name.
pub async fn create_machine(
    ctx: &Context,
    controller: &str,
    kcp: &KubeadmControlPlane,
    cluster: &str,
    init: bool,
    failure_domain: Option<String>,
) -> Result<String> {
    let ns = kcp.namespace().unwrap_or_default();
    let name = machine_name(&kcp.name_any());
    let owner = controller_ref(kcp).ok_or_else(|| Error::inconsistent("control plane", "no uid yet"))?;
    let labels = machine_labels(kcp, cluster);
    let annotations = machine_annotations(kcp);

    let template = ctx
        .contracts
        .object_ref(&kcp.spec.machine_template.spec.infrastructure_ref, &ns)
        .await
        .map_err(Error::during("resolving spec.machineTemplate.spec.infrastructureRef"))?;
    let infra_ref = external::clone_from_template(
        ctx,
        controller,
        CloneSpec {
            template: &template,
            namespace: &ns,
            name: &name,
            cluster_name: cluster,
            labels: labels.clone(),
            annotations: annotations.clone(),
            owner: Some(owner.clone()),
        },
    )
    .await
    .map_err(Error::during("cloning the infrastructure template"))?;

    let mut config = KubeadmConfig::new(&name, bootstrap_spec(kcp, init));
    config.metadata.namespace = Some(ns.clone());
    config.metadata.labels = Some(labels.clone());
    config.metadata.annotations = Some(annotations.clone()).filter(|a| !a.is_empty());
    config.metadata.owner_references = Some(vec![owner.clone()]);
    let configs: Api<KubeadmConfig> = ctx.api(&ns);
    if let Err(e) = write::create(&configs, controller, &config).await {
        cleanup(ctx, controller, &ns, &infra_ref, None).await;
        return Err(Error::during(format!("creating KubeadmConfig {name}"))(e));
    }

    let mut own_annotations = annotations;
    own_annotations.insert(
        KUBEADM_CLUSTER_CONFIGURATION_ANNOTATION.into(),
        serde_json::to_string(&kcp.spec.kubeadm_config_spec.cluster_configuration)?,
    );
    // Its etcd member is removed in this hook, once the Machine is drained.
    own_annotations.insert(KCP_CLEANUP_HOOK_ANNOTATION.into(), String::new());
    // A replacement of a remediated Machine records which one (retry limits count on it).
    if let Some(r) = kcp.annotations().get(REMEDIATION_IN_PROGRESS_ANNOTATION) {
        own_annotations.insert(REMEDIATION_FOR_ANNOTATION.into(), r.clone());
    }
    let timeouts = NodeTimeouts::from_seconds(kcp.spec.machine_template.spec.deletion.as_ref());
    let mut machine = Machine::new(
        &name,
        MachineSpec {
            cluster_name: cluster.to_string(),
            bootstrap: Bootstrap {
                config_ref: Some(ContractVersionedObjectReference {
                    api_group: KubeadmConfig::group(&()).into_owned(),
                    kind: KubeadmConfig::kind(&()).into_owned(),
                    name: name.clone(),
                }),
                data_secret_name: None,
            },
            infrastructure_ref: ref_up(&infra_ref),
            version: Some(kcp.spec.version.clone()),
            failure_domain,
            ..Default::default()
        },
    );
    timeouts.apply(&mut machine.spec);
    machine.metadata.namespace = Some(ns.clone());
    machine.metadata.labels = Some(labels);
    machine.metadata.annotations = Some(own_annotations);
    machine.metadata.owner_references = Some(vec![owner]);
    machine.metadata.finalizers = Some(vec![MACHINE_FINALIZER.into()]);
    let machines: Api<Machine> = ctx.api(&ns);
    if let Err(e) = write::create(&machines, controller, &machine).await {
        cleanup(ctx, controller, &ns, &infra_ref, Some(&name)).await;
        return Err(Error::during(format!("creating Machine {name}"))(e));
    }
    Ok(name)
}

/// Best-effort removal of what a failed creation left behind.
async fn cleanup(ctx: &Context, controller: &str, ns: &str, infra: &ObjectReference, config: Option<&str>) {
    let api: Api<DynamicObject> = external::api_for(ctx, ns, infra).await;
    let name = infra.name.as_deref().unwrap_or_default();
    if let Err(e) = delete_if_present(&api, controller, name).await {
        tracing::warn!(error = %e, name, "could not delete the infrastructure machine of a failed creation");
    }
    if let Some(c) = config
        && let Err(e) = delete_if_present(&ctx.api::<KubeadmConfig>(ns), controller, c).await
    {
        tracing::warn!(error = %e, name = c, "could not delete the KubeadmConfig of a failed creation");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_labels_and_bootstrap() {
        let mut kcp = KubeadmControlPlane::new("cp", Default::default());
        kcp.spec.kubeadm_config_spec.init_configuration = Some(Default::default());
        kcp.spec.kubeadm_config_spec.join_configuration = Some(Default::default());
        kcp.spec.kubeadm_config_spec.cluster_configuration = Some(Default::default());
        let init = bootstrap_spec(&kcp, true);
        assert!(init.init_configuration.is_some() && init.join_configuration.is_none());
        assert!(init.cluster_configuration.is_some());
        let join = bootstrap_spec(&kcp, false);
        assert!(join.init_configuration.is_none() && join.join_configuration.is_some());
        assert!(join.cluster_configuration.is_some(), "joins keep the ClusterConfiguration");

        let n = machine_name("cp");
        assert!(n.starts_with("cp-") && n.len() == 8, "{n}");
        assert_ne!(machine_name("cp"), machine_name("cp"));

        let l = machine_labels(&kcp, "c1");
        assert_eq!(l[CLUSTER_NAME_LABEL], "c1");
        assert_eq!(l[CONTROL_PLANE_LABEL], "");
        assert_eq!(l[CONTROL_PLANE_NAME_LABEL], "cp");
    }
}
