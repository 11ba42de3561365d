//! KubeadmConfigSpec between v1beta1 and v1beta2 (shared by KubeadmConfig, its template and
//! the control-plane kinds).
//!
//! Besides the per-struct mapping of [`super::kubeadm_spec`], two v1beta1 timeouts moved
//! into the kubeadm v1beta4 `timeouts` blocks, as upstream maps them:
//! - `clusterConfiguration.apiServer.timeoutForControlPlane` is
//!   `initConfiguration.timeouts.controlPlaneComponentHealthCheckSeconds` (and, going up,
//!   the same field of `joinConfiguration.timeouts`);
//! - `joinConfiguration.discovery.timeout` is `joinConfiguration.timeouts.tlsBootstrapSeconds`.

use super::kubeadm_spec::{
    cluster_configuration_down, cluster_configuration_up, init_configuration_down, init_configuration_up,
    join_configuration_down, join_configuration_up, list, set,
};
use crate::capi::conversion::{duration_to_seconds, non_empty, seconds_to_duration};
use crate::capi::kubeadm::{self as v1, v1beta2 as v2};

/// The Go durations of a v1beta1 KubeadmConfigSpec at `prefix` (see
/// [`HubSpoke::spoke_durations`](crate::capi::conversion::HubSpoke::spoke_durations)).
pub(super) fn spec_durations(prefix: &str) -> Vec<String> {
    [
        "clusterConfiguration.apiServer.timeoutForControlPlane",
        "initConfiguration.bootstrapTokens[].ttl",
        "joinConfiguration.discovery.timeout",
    ]
    .iter()
    .map(|p| format!("{prefix}.{p}"))
    .collect()
}

pub(crate) fn spec_up(s: v1::KubeadmConfigSpec) -> v2::KubeadmConfigSpec {
    let v1::KubeadmConfigSpec {
        cluster_configuration,
        init_configuration,
        join_configuration,
        files,
        disk_setup,
        mounts,
        pre_kubeadm_commands,
        post_kubeadm_commands,
        users,
        ntp,
        format,
        verbosity,
        use_experimental_retry_join: _,
        ignition,
    } = s;
    let control_plane_timeout = cluster_configuration
        .as_ref()
        .and_then(|c| c.api_server.as_ref())
        .and_then(|a| duration_to_seconds(a.timeout_for_control_plane.as_deref()));
    let tls_bootstrap_timeout = join_configuration
        .as_ref()
        .and_then(|j| j.discovery.as_ref())
        .and_then(|d| duration_to_seconds(d.timeout.as_deref()));
    let mut init_configuration = init_configuration.and_then(init_configuration_up);
    let mut join_configuration = join_configuration.and_then(join_configuration_up);
    if control_plane_timeout.is_some() {
        init_configuration
            .get_or_insert_default()
            .timeouts
            .get_or_insert_default()
            .control_plane_component_health_check_seconds = control_plane_timeout;
    }
    if control_plane_timeout.is_some() || tls_bootstrap_timeout.is_some() {
        let timeouts = join_configuration.get_or_insert_default().timeouts.get_or_insert_default();
        timeouts.control_plane_component_health_check_seconds = control_plane_timeout;
        timeouts.tls_bootstrap_seconds = tls_bootstrap_timeout;
    }
    v2::KubeadmConfigSpec {
        cluster_configuration: cluster_configuration.and_then(cluster_configuration_up),
        init_configuration,
        join_configuration,
        files: list(files).map(|f| f.into_iter().map(file_up).collect()),
        disk_setup: disk_setup.and_then(disk_setup_up),
        mounts: list(mounts),
        boot_commands: None,
        pre_kubeadm_commands: list(pre_kubeadm_commands),
        post_kubeadm_commands: list(post_kubeadm_commands),
        users: list(users),
        ntp: ntp.and_then(set),
        format,
        verbosity,
        ignition: ignition.and_then(set),
    }
}

pub(crate) fn spec_down(s: v2::KubeadmConfigSpec) -> v1::KubeadmConfigSpec {
    let v2::KubeadmConfigSpec {
        cluster_configuration,
        init_configuration,
        join_configuration,
        files,
        disk_setup,
        mounts,
        boot_commands: _,
        pre_kubeadm_commands,
        post_kubeadm_commands,
        users,
        ntp,
        format,
        verbosity,
        ignition,
    } = s;
    let control_plane_timeout = init_configuration
        .as_ref()
        .and_then(|i| i.timeouts.as_ref())
        .and_then(|t| t.control_plane_component_health_check_seconds);
    let tls_bootstrap_timeout =
        join_configuration.as_ref().and_then(|j| j.timeouts.as_ref()).and_then(|t| t.tls_bootstrap_seconds);
    let mut cluster_configuration = cluster_configuration.and_then(cluster_configuration_down);
    let mut join_configuration = join_configuration.and_then(join_configuration_down);
    if control_plane_timeout.is_some() {
        cluster_configuration.get_or_insert_default().api_server.get_or_insert_default().timeout_for_control_plane =
            seconds_to_duration(control_plane_timeout);
    }
    if tls_bootstrap_timeout.is_some() {
        join_configuration.get_or_insert_default().discovery.get_or_insert_default().timeout =
            seconds_to_duration(tls_bootstrap_timeout);
    }
    v1::KubeadmConfigSpec {
        cluster_configuration,
        init_configuration: init_configuration.and_then(init_configuration_down),
        join_configuration,
        files: files.map(|f| f.into_iter().map(file_down).collect()),
        disk_setup: disk_setup.map(disk_setup_down),
        mounts,
        pre_kubeadm_commands,
        post_kubeadm_commands,
        users,
        ntp,
        format,
        verbosity,
        use_experimental_retry_join: None,
        ignition,
    }
}

fn file_up(f: v1::File) -> v2::File {
    let v1::File { path, owner, permissions, encoding, append, content, content_from } = f;
    v2::File {
        path,
        owner: non_empty(owner),
        permissions: non_empty(permissions),
        encoding,
        append,
        content: non_empty(content),
        content_from,
        content_format: None,
    }
}

fn file_down(f: v2::File) -> v1::File {
    let v2::File { path, owner, permissions, encoding, append, content, content_from, content_format: _ } = f;
    v1::File { path, owner, permissions, encoding, append, content, content_from }
}

fn disk_setup_up(d: v1::DiskSetup) -> Option<v2::DiskSetup> {
    let partitions = d.partitions.map(|p| {
        p.into_iter()
            .map(|p| {
                let v1::Partition { device, layout, overwrite, table_type } = p;
                v2::Partition {
                    device,
                    // An unset v1beta2 layout is false, as v1beta1's.
                    layout: layout.then_some(true),
                    disk_layout: None,
                    overwrite,
                    table_type: table_type.as_deref().and_then(v2::PartitionTableType::parse),
                }
            })
            .collect()
    });
    let filesystems = d.filesystems.map(|f| {
        f.into_iter()
            .map(|f| {
                let v1::Filesystem { device, filesystem, label, partition, overwrite, replace_fs, extra_opts } = f;
                v2::Filesystem {
                    device,
                    filesystem,
                    label: non_empty(Some(label)),
                    partition: non_empty(partition),
                    overwrite,
                    replace_fs: non_empty(replace_fs),
                    extra_opts,
                }
            })
            .collect()
    });
    set(v2::DiskSetup { partitions, filesystems })
}

fn disk_setup_down(d: v2::DiskSetup) -> v1::DiskSetup {
    let partitions = d.partitions.map(|p| {
        p.into_iter()
            .map(|p| {
                let v2::Partition { device, layout, disk_layout: _, overwrite, table_type } = p;
                v1::Partition {
                    device,
                    layout: layout.unwrap_or(false),
                    overwrite,
                    table_type: table_type.map(|t| t.as_str().to_string()),
                }
            })
            .collect()
    });
    let filesystems = d.filesystems.map(|f| {
        f.into_iter()
            .map(|f| {
                let v2::Filesystem { device, filesystem, label, partition, overwrite, replace_fs, extra_opts } = f;
                v1::Filesystem {
                    device,
                    filesystem,
                    label: label.unwrap_or_default(),
                    partition,
                    overwrite,
                    replace_fs,
                    extra_opts,
                }
            })
            .collect()
    });
    v1::DiskSetup { partitions, filesystems }
}
