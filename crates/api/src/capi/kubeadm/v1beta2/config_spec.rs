//! Node preparation around kubeadm (v1beta2): files and disks. Users, NTP and Ignition
//! settings kept their v1beta1 shape.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::capi::kubeadm::{Encoding, FileSource};

/// A file written to the node before kubeadm runs.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct File {
    /// Absolute path on the node.
    #[schemars(length(min = 1, max = 512))]
    pub path: String,
    /// `user:group`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 256))]
    pub owner: Option<String>,
    /// Octal mode, e.g. `0644`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 16))]
    pub permissions: Option<String>,
    /// Encoding of the content.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<Encoding>,
    /// Append to the file instead of replacing it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub append: Option<bool>,
    /// Inline content; exclusive with `contentFrom`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 10240))]
    pub content: Option<String>,
    /// Content read from a Secret; exclusive with `content`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_from: Option<FileSource>,
    /// Whether the content is written as is (Raw, default) or rendered as a Go template.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_format: Option<FileContentFormat>,
}

/// How file content is interpreted.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum FileContentFormat {
    /// Written as is.
    Raw,
    /// Rendered as a Go template first.
    Template,
}

/// Partitions and filesystems to create.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiskSetup {
    /// Partition tables to create.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 100))]
    pub partitions: Option<Vec<Partition>>,
    /// Filesystems to create.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 100))]
    pub filesystems: Option<Vec<Filesystem>>,
}

/// A partition table on a device.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Partition {
    /// Device path, e.g. `/dev/sdb`.
    #[schemars(length(min = 1, max = 256))]
    pub device: String,
    /// One partition spanning the whole device; exclusive with `diskLayout`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout: Option<bool>,
    /// Partitions to create, as shares of the device; exclusive with `layout`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub disk_layout: Option<Vec<PartitionSpec>>,
    /// Overwrite existing data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overwrite: Option<bool>,
    /// Partition table type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table_type: Option<PartitionTableType>,
}

/// Partition table type.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum PartitionTableType {
    /// Master boot record.
    #[serde(rename = "mbr")]
    Mbr,
    /// GUID partition table.
    #[serde(rename = "gpt")]
    Gpt,
}

impl PartitionTableType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Mbr => "mbr",
            Self::Gpt => "gpt",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "mbr" => Some(Self::Mbr),
            "gpt" => Some(Self::Gpt),
            _ => None,
        }
    }
}

/// One partition of a `diskLayout`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PartitionSpec {
    /// Share of the device, in percent.
    #[schemars(range(min = 1, max = 100))]
    pub percentage: i32,
    /// Partition type (MBR type code or GPT GUID).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 36))]
    pub partition_type: Option<String>,
}

/// A filesystem on a device or partition.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Filesystem {
    /// Device path, e.g. `/dev/sdb`.
    #[schemars(length(min = 1, max = 256))]
    pub device: String,
    /// Filesystem type, e.g. `ext4`.
    #[schemars(length(min = 1, max = 128))]
    pub filesystem: String,
    /// Filesystem label.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub label: Option<String>,
    /// Partition of the device: `auto`, `any`, `none` or a number.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128))]
    pub partition: Option<String>,
    /// Overwrite existing data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overwrite: Option<bool>,
    /// Existing filesystem to replace.
    #[serde(rename = "replaceFS", skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128))]
    pub replace_fs: Option<String>,
    /// Extra mkfs options.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 100))]
    pub extra_opts: Option<Vec<String>>,
}
