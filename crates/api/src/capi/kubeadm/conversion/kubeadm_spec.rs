//! kubeadm's ClusterConfiguration, InitConfiguration and JoinConfiguration between v1beta1
//! (kubeadm v1beta3 shaped) and v1beta2 (kubeadm v1beta4 shaped): flag maps become sorted
//! `{name, value}` lists, bootstrap token lifetimes become seconds, the fields v1beta2 took
//! out (kubeadm `apiVersion`/`kind`, what the Cluster says) are dropped. The two timeouts
//! that moved between structs are handled one level up, in [`super::config_spec`].

use std::collections::BTreeMap;

use crate::capi::conversion::{duration_to_seconds, non_empty, seconds_to_duration};
use crate::capi::kubeadm::{self as v1, LocalAPIEndpoint, Patches, v1beta2 as v2};

/// A value of v1beta2 only when it sets something (v1beta2 refuses empty objects).
pub(super) fn set<T: Default + PartialEq>(t: T) -> Option<T> {
    (t != T::default()).then_some(t)
}

/// A list of v1beta2 only when it has items (v1beta2 refuses empty lists where unset means
/// the same).
pub(super) fn list<T>(v: Option<Vec<T>>) -> Option<Vec<T>> {
    v.filter(|v| !v.is_empty())
}

/// Flags as v1beta2 lists them: sorted by name (a map has each name once).
fn args_up(m: Option<BTreeMap<String, String>>) -> Option<Vec<v2::Arg>> {
    let args: Vec<v2::Arg> = m?.into_iter().map(|(name, value)| v2::Arg { name, value }).collect();
    list(Some(args))
}

/// Flags as a map; of repeated names the last wins.
fn args_down(a: Option<Vec<v2::Arg>>) -> Option<BTreeMap<String, String>> {
    Some(a?.into_iter().map(|a| (a.name, a.value)).collect())
}

/// A v1beta1 ClusterConfiguration in v1beta2's shape (`None` when it sets nothing).
pub fn cluster_configuration_up(c: v1::ClusterConfiguration) -> Option<v2::ClusterConfiguration> {
    let v1::ClusterConfiguration {
        api_version: _,
        kind: _,
        etcd,
        networking: _,
        kubernetes_version: _,
        control_plane_endpoint,
        api_server,
        controller_manager,
        scheduler,
        dns,
        certificates_dir,
        image_repository,
        feature_gates,
        cluster_name: _,
    } = c;
    set(v2::ClusterConfiguration {
        etcd: etcd.and_then(etcd_up),
        control_plane_endpoint: non_empty(control_plane_endpoint),
        api_server: api_server.and_then(|a| {
            let v1::APIServer { component, cert_sans, timeout_for_control_plane: _ } = a;
            set(v2::APIServer { component: component_up(component), cert_sans: list(cert_sans) })
        }),
        controller_manager: set(component_up(controller_manager.unwrap_or_default())),
        scheduler: set(component_up(scheduler.unwrap_or_default())),
        dns: dns.and_then(|d| {
            set(v1::DNS { image_repository: non_empty(d.image_repository), image_tag: non_empty(d.image_tag) })
        }),
        certificates_dir: non_empty(certificates_dir),
        image_repository: non_empty(image_repository),
        feature_gates,
        certificate_validity_period_days: None,
        ca_certificate_validity_period_days: None,
        encryption_algorithm: None,
    })
}

pub(super) fn cluster_configuration_down(c: v2::ClusterConfiguration) -> Option<v1::ClusterConfiguration> {
    let v2::ClusterConfiguration {
        etcd,
        control_plane_endpoint,
        api_server,
        controller_manager,
        scheduler,
        dns,
        certificates_dir,
        image_repository,
        feature_gates,
        certificate_validity_period_days: _,
        ca_certificate_validity_period_days: _,
        encryption_algorithm: _,
    } = c;
    set(v1::ClusterConfiguration {
        etcd: etcd.and_then(etcd_down),
        control_plane_endpoint,
        api_server: api_server.and_then(|a| {
            let v2::APIServer { component, cert_sans } = a;
            set(v1::APIServer { component: component_down(component), cert_sans, timeout_for_control_plane: None })
        }),
        controller_manager: controller_manager.and_then(|c| set(component_down(c))),
        scheduler: scheduler.and_then(|c| set(component_down(c))),
        dns,
        certificates_dir,
        image_repository,
        feature_gates,
        ..Default::default()
    })
}

fn component_up(c: v1::ControlPlaneComponent) -> v2::ControlPlaneComponent {
    let v1::ControlPlaneComponent { extra_args, extra_volumes, extra_envs } = c;
    v2::ControlPlaneComponent {
        extra_args: args_up(extra_args),
        extra_volumes: list(extra_volumes),
        extra_envs: list(extra_envs),
    }
}

fn component_down(c: v2::ControlPlaneComponent) -> v1::ControlPlaneComponent {
    let v2::ControlPlaneComponent { extra_args, extra_volumes, extra_envs } = c;
    v1::ControlPlaneComponent { extra_args: args_down(extra_args), extra_volumes, extra_envs }
}

fn etcd_up(e: v1::Etcd) -> Option<v2::Etcd> {
    let local = e.local.and_then(|l| {
        let v1::LocalEtcd {
            image_repository,
            image_tag,
            data_dir,
            extra_args,
            extra_envs,
            server_cert_sans,
            peer_cert_sans,
        } = l;
        set(v2::LocalEtcd {
            image_repository: non_empty(image_repository),
            image_tag: non_empty(image_tag),
            data_dir: non_empty(data_dir),
            extra_args: args_up(extra_args),
            extra_envs: list(extra_envs),
            server_cert_sans: list(server_cert_sans),
            peer_cert_sans: list(peer_cert_sans),
        })
    });
    set(v2::Etcd { local, external: e.external })
}

fn etcd_down(e: v2::Etcd) -> Option<v1::Etcd> {
    let local = e.local.map(|l| {
        let v2::LocalEtcd {
            image_repository,
            image_tag,
            data_dir,
            extra_args,
            extra_envs,
            server_cert_sans,
            peer_cert_sans,
        } = l;
        v1::LocalEtcd {
            image_repository,
            image_tag,
            data_dir,
            extra_args: args_down(extra_args),
            extra_envs,
            server_cert_sans,
            peer_cert_sans,
        }
    });
    set(v1::Etcd { local, external: e.external })
}

/// `kubeadm init` settings, without the timeouts (set by the caller).
pub(super) fn init_configuration_up(c: v1::InitConfiguration) -> Option<v2::InitConfiguration> {
    let v1::InitConfiguration {
        api_version: _,
        kind: _,
        bootstrap_tokens,
        node_registration,
        local_api_endpoint,
        phases,
    } = c;
    set(v2::InitConfiguration {
        bootstrap_tokens: list(bootstrap_tokens).map(|t| t.into_iter().map(bootstrap_token_up).collect()),
        node_registration: node_registration.and_then(node_registration_up),
        local_api_endpoint: local_api_endpoint.and_then(endpoint_up),
        skip_phases: list(phases.skip_phases),
        patches: phases.patches.and_then(patches_up),
        timeouts: None,
    })
}

/// `kubeadm init` settings; the timeouts are the caller's.
pub(super) fn init_configuration_down(c: v2::InitConfiguration) -> Option<v1::InitConfiguration> {
    let v2::InitConfiguration {
        bootstrap_tokens,
        node_registration,
        local_api_endpoint,
        skip_phases,
        patches,
        timeouts: _,
    } = c;
    set(v1::InitConfiguration {
        bootstrap_tokens: bootstrap_tokens.map(|t| t.into_iter().map(bootstrap_token_down).collect()),
        node_registration: node_registration.map(node_registration_down),
        local_api_endpoint,
        phases: v1::PhaseOptions { skip_phases, patches },
        ..Default::default()
    })
}

/// `kubeadm join` settings, without the timeouts (set by the caller).
pub(super) fn join_configuration_up(c: v1::JoinConfiguration) -> Option<v2::JoinConfiguration> {
    let v1::JoinConfiguration {
        api_version: _,
        kind: _,
        node_registration,
        ca_cert_path,
        discovery,
        control_plane,
        phases,
    } = c;
    set(v2::JoinConfiguration {
        node_registration: node_registration.and_then(node_registration_up),
        ca_cert_path: non_empty(ca_cert_path),
        discovery: discovery.and_then(discovery_up),
        control_plane: control_plane
            .map(|cp| v1::JoinControlPlane { local_api_endpoint: cp.local_api_endpoint.and_then(endpoint_up) }),
        skip_phases: list(phases.skip_phases),
        patches: phases.patches.and_then(patches_up),
        timeouts: None,
    })
}

/// `kubeadm join` settings; the timeouts are the caller's.
pub(super) fn join_configuration_down(c: v2::JoinConfiguration) -> Option<v1::JoinConfiguration> {
    let v2::JoinConfiguration {
        node_registration,
        ca_cert_path,
        discovery,
        control_plane,
        skip_phases,
        patches,
        timeouts: _,
    } = c;
    set(v1::JoinConfiguration {
        node_registration: node_registration.map(node_registration_down),
        ca_cert_path,
        discovery: discovery.and_then(discovery_down),
        control_plane,
        phases: v1::PhaseOptions { skip_phases, patches },
        ..Default::default()
    })
}

fn endpoint_up(e: LocalAPIEndpoint) -> Option<LocalAPIEndpoint> {
    set(LocalAPIEndpoint {
        advertise_address: non_empty(e.advertise_address),
        bind_port: e.bind_port.filter(|p| *p != 0),
    })
}

fn patches_up(p: Patches) -> Option<Patches> {
    set(Patches { directory: non_empty(p.directory) })
}

fn node_registration_up(n: v1::NodeRegistrationOptions) -> Option<v2::NodeRegistrationOptions> {
    let v1::NodeRegistrationOptions {
        name,
        cri_socket,
        taints,
        kubelet_extra_args,
        ignore_preflight_errors,
        image_pull_policy,
        image_pull_serial,
    } = n;
    set(v2::NodeRegistrationOptions {
        name: non_empty(name),
        cri_socket: non_empty(cri_socket),
        taints,
        kubelet_extra_args: args_up(kubelet_extra_args),
        ignore_preflight_errors: list(ignore_preflight_errors),
        image_pull_policy,
        image_pull_serial,
    })
}

fn node_registration_down(n: v2::NodeRegistrationOptions) -> v1::NodeRegistrationOptions {
    let v2::NodeRegistrationOptions {
        name,
        cri_socket,
        taints,
        kubelet_extra_args,
        ignore_preflight_errors,
        image_pull_policy,
        image_pull_serial,
    } = n;
    v1::NodeRegistrationOptions {
        name,
        cri_socket,
        taints,
        kubelet_extra_args: args_down(kubelet_extra_args),
        ignore_preflight_errors,
        image_pull_policy,
        image_pull_serial,
    }
}

fn bootstrap_token_up(t: v1::BootstrapToken) -> v2::BootstrapToken {
    let v1::BootstrapToken { token, description, ttl, expires, usages, groups } = t;
    v2::BootstrapToken {
        token,
        description: non_empty(description),
        ttl_seconds: duration_to_seconds(ttl.as_deref()),
        expires,
        usages: list(usages),
        groups: list(groups),
    }
}

fn bootstrap_token_down(t: v2::BootstrapToken) -> v1::BootstrapToken {
    let v2::BootstrapToken { token, description, ttl_seconds, expires, usages, groups } = t;
    v1::BootstrapToken { token, description, ttl: seconds_to_duration(ttl_seconds), expires, usages, groups }
}

/// Discovery without its timeout (which became `joinConfiguration.timeouts.tlsBootstrapSeconds`).
fn discovery_up(d: v1::Discovery) -> Option<v2::Discovery> {
    let v1::Discovery { bootstrap_token, file, tls_bootstrap_token, timeout: _ } = d;
    set(v2::Discovery {
        bootstrap_token:
            bootstrap_token.and_then(|b| {
                let v1::BootstrapTokenDiscovery {
                    token,
                    api_server_endpoint,
                    ca_cert_hashes,
                    unsafe_skip_ca_verification,
                } = b;
                set(v2::BootstrapTokenDiscovery {
                    token: non_empty(Some(token)),
                    api_server_endpoint: non_empty(api_server_endpoint),
                    ca_cert_hashes: list(ca_cert_hashes),
                    unsafe_skip_ca_verification,
                })
            }),
        file,
        tls_bootstrap_token: non_empty(tls_bootstrap_token),
    })
}

fn discovery_down(d: v2::Discovery) -> Option<v1::Discovery> {
    let v2::Discovery { bootstrap_token, file, tls_bootstrap_token } = d;
    set(v1::Discovery {
        bootstrap_token:
            bootstrap_token.map(|b| {
                let v2::BootstrapTokenDiscovery {
                    token,
                    api_server_endpoint,
                    ca_cert_hashes,
                    unsafe_skip_ca_verification,
                } = b;
                v1::BootstrapTokenDiscovery {
                    token: token.unwrap_or_default(),
                    api_server_endpoint,
                    ca_cert_hashes,
                    unsafe_skip_ca_verification,
                }
            }),
        file,
        tls_bootstrap_token,
        timeout: None,
    })
}
