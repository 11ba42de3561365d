//! What a node does at first boot, independent of the format it is written in: files to
//! write, commands to run around kubeadm, users, NTP, disks and mounts. [`super::cloud_config`]
//! and [`super::ignition`] render it.

use drydock_api::capi::kubeadm::v1beta2::{DiskSetup, File, KubeadmConfigSpec};
use drydock_api::capi::kubeadm::{Encoding, NTP, User};

/// A file with its content resolved (inline or read from a secret).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct SetupFile {
    pub path: String,
    pub owner: Option<String>,
    pub permissions: Option<String>,
    pub encoding: Option<Encoding>,
    pub append: bool,
    pub content: String,
}

impl SetupFile {
    pub fn new(path: &str, permissions: &str, content: String) -> Self {
        Self {
            path: path.to_string(),
            owner: Some("root:root".into()),
            permissions: Some(permissions.into()),
            content,
            ..Default::default()
        }
    }

    /// A KubeadmConfig file, with its content resolved: read from its secret when it has one,
    /// and rendered when it is a template.
    pub fn from_spec(f: &File, resolved: Option<String>) -> Self {
        Self {
            path: f.path.clone(),
            owner: f.owner.clone(),
            permissions: f.permissions.clone(),
            encoding: f.encoding,
            append: f.append.unwrap_or(false),
            content: resolved.or_else(|| f.content.clone()).unwrap_or_default(),
        }
    }
}

/// Everything the bootstrap data makes the node do.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct NodeSetup {
    /// In write order: the config's files, certificates, then the kubeadm configuration.
    pub files: Vec<SetupFile>,
    /// Run very early on every boot (cloud-init `bootcmd`; Ignition has no such stage).
    pub boot_commands: Vec<String>,
    pub pre_commands: Vec<String>,
    /// `kubeadm init` or `kubeadm join`.
    pub kubeadm_command: String,
    pub post_commands: Vec<String>,
    /// With passwords read from their secrets.
    pub users: Vec<User>,
    pub ntp: Option<NTP>,
    pub mounts: Vec<Vec<String>>,
    pub disk_setup: Option<DiskSetup>,
}

impl NodeSetup {
    /// The setup from the spec; files and users already resolved by the caller.
    pub fn new(spec: &KubeadmConfigSpec, files: Vec<SetupFile>, users: Vec<User>, kubeadm_command: String) -> Self {
        Self {
            files,
            boot_commands: spec.boot_commands.clone().unwrap_or_default(),
            pre_commands: spec.pre_kubeadm_commands.clone().unwrap_or_default(),
            kubeadm_command,
            post_commands: spec.post_kubeadm_commands.clone().unwrap_or_default(),
            users,
            ntp: spec.ntp.clone(),
            mounts: spec.mounts.clone().unwrap_or_default(),
            disk_setup: spec.disk_setup.clone(),
        }
    }

    /// Every command in order.
    pub fn commands(&self) -> impl Iterator<Item = &String> {
        self.pre_commands.iter().chain(std::iter::once(&self.kubeadm_command)).chain(&self.post_commands)
    }
}
