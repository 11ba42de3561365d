//! Node preparation around kubeadm: files, users, disks, NTP and Ignition settings rendered
//! into cloud-init or Ignition.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Output format of the bootstrap data.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum Format {
    /// cloud-init user data (default).
    #[default]
    #[serde(rename = "cloud-config")]
    CloudConfig,
    /// Ignition config (Flatcar and similar).
    #[serde(rename = "ignition")]
    Ignition,
}

/// A file written to the node.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct File {
    /// Absolute path on the node.
    pub path: String,
    /// `user:group`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Octal mode, e.g. `0644`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permissions: Option<String>,
    /// Encoding of `content`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<Encoding>,
    /// Append instead of overwrite.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub append: Option<bool>,
    /// Inline content; exclusive with `contentFrom`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Content read from a secret; exclusive with `content`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_from: Option<FileSource>,
}

/// Encoding of file content.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum Encoding {
    /// Base64 text.
    #[serde(rename = "base64")]
    Base64,
    /// Gzip-compressed bytes.
    #[serde(rename = "gzip")]
    Gzip,
    /// Gzip-compressed, then base64.
    #[serde(rename = "gzip+base64")]
    GzipBase64,
}

/// Where file content comes from.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileSource {
    /// Secret key holding the value.
    pub secret: SecretKeySource,
}

/// A key of a secret in the config's namespace.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretKeySource {
    /// Name.
    pub name: String,
    /// Key in the secret.
    pub key: String,
}

/// A user account created on the node.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct User {
    /// Name.
    pub name: String,
    /// Full name / comment field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gecos: Option<String>,
    /// Comma-separated supplementary groups.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups: Option<String>,
    /// Home directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub home_dir: Option<String>,
    /// Create the account disabled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inactive: Option<bool>,
    /// Login shell.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shell: Option<String>,
    /// Hashed password; exclusive with `passwdFrom`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passwd: Option<String>,
    /// Hashed password read from a secret.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passwd_from: Option<PasswdSource>,
    /// Primary group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub primary_group: Option<String>,
    /// Disable password login.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lock_password: Option<bool>,
    /// sudoers rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sudo: Option<String>,
    /// Public keys allowed to log in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ssh_authorized_keys: Option<Vec<String>>,
}

/// Where a password comes from.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PasswdSource {
    /// Secret key holding the value.
    pub secret: SecretKeySource,
}

/// NTP settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NTP {
    /// NTP servers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub servers: Option<Vec<String>>,
    /// Enable NTP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// Partitions and filesystems to create.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiskSetup {
    /// Partition tables to create.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partitions: Option<Vec<Partition>>,
    /// Filesystems to create.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filesystems: Option<Vec<Filesystem>>,
}

/// A partition table on a device.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Partition {
    /// Device path, e.g. `/dev/sdb`.
    pub device: String,
    /// Create a single partition spanning the device.
    pub layout: bool,
    /// Overwrite existing data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overwrite: Option<bool>,
    /// `mbr` or `gpt`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table_type: Option<String>,
}

/// A filesystem on a device or partition.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Filesystem {
    /// Device path, e.g. `/dev/sdb`.
    pub device: String,
    /// Filesystem type, e.g. `ext4`.
    pub filesystem: String,
    /// Filesystem label.
    pub label: String,
    /// Partition on the device (`auto`, `any`, `none` or a number).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// Overwrite existing data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overwrite: Option<bool>,
    /// Filesystem to replace.
    #[serde(rename = "replaceFS", skip_serializing_if = "Option::is_none")]
    pub replace_fs: Option<String>,
    /// Extra mkfs options.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_opts: Option<Vec<String>>,
}

/// Ignition-only settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IgnitionSpec {
    /// Extra Container Linux Config.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container_linux_config: Option<ContainerLinuxConfig>,
}

/// Extra Container Linux Config merged into the generated Ignition.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerLinuxConfig {
    /// YAML of the extra config.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_config: Option<String>,
    /// Fail on unknown fields in the extra config.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}
