//! cloud-init user data (`#cloud-config`) for a [`NodeSetup`].

use drydock_api::capi::kubeadm::v1beta2::{DiskSetup, PartitionSpec};
use drydock_api::capi::kubeadm::{Encoding, User};
use serde_json::{Map, Value, json};

use super::setup::{NodeSetup, SetupFile};
use super::yaml;

/// The `#cloud-config` document.
pub(crate) fn render(setup: &NodeSetup) -> String {
    let mut sections: Vec<(&str, Value)> = vec![("write_files", Value::Array(setup.files.iter().map(file).collect()))];
    if !setup.boot_commands.is_empty() {
        sections.push(("bootcmd", json!(setup.boot_commands)));
    }
    sections.push(("runcmd", Value::Array(setup.commands().map(|c| json!(c)).collect())));
    if !setup.users.is_empty() {
        sections.push(("users", Value::Array(setup.users.iter().map(user).collect())));
    }
    if let Some(ntp) = &setup.ntp {
        let mut n = Map::new();
        if let Some(e) = ntp.enabled {
            n.insert("enabled".into(), json!(e));
        }
        if let Some(s) = &ntp.servers {
            n.insert("servers".into(), json!(s));
        }
        sections.push(("ntp", Value::Object(n)));
    }
    if let Some(d) = &setup.disk_setup {
        let (disks, filesystems) = disks(d);
        if !disks.is_empty() {
            sections.push(("disk_setup", Value::Object(disks)));
        }
        if !filesystems.is_empty() {
            sections.push(("fs_setup", Value::Array(filesystems)));
        }
    }
    if !setup.mounts.is_empty() {
        sections.push(("mounts", json!(setup.mounts)));
    }
    format!("#cloud-config\n{}", yaml::ordered(&sections))
}

fn file(f: &SetupFile) -> Value {
    let mut m = Map::new();
    m.insert("path".into(), json!(f.path));
    if let Some(o) = &f.owner {
        m.insert("owner".into(), json!(o));
    }
    if let Some(p) = &f.permissions {
        m.insert("permissions".into(), json!(p));
    }
    if let Some(e) = f.encoding {
        // cloud-init's names for the same encodings.
        let name = match e {
            Encoding::Base64 => "b64",
            Encoding::Gzip => "gzip",
            Encoding::GzipBase64 => "gz+b64",
        };
        m.insert("encoding".into(), json!(name));
    }
    if f.append {
        m.insert("append".into(), json!(true));
    }
    m.insert("content".into(), json!(f.content));
    Value::Object(m)
}

fn user(u: &User) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), json!(u.name));
    let mut put = |k: &str, v: Option<Value>| {
        if let Some(v) = v {
            m.insert(k.into(), v);
        }
    };
    put("gecos", u.gecos.as_ref().map(|v| json!(v)));
    put("groups", u.groups.as_ref().map(|v| json!(v)));
    put("homedir", u.home_dir.as_ref().map(|v| json!(v)));
    put("inactive", u.inactive.map(|v| json!(v)));
    put("shell", u.shell.as_ref().map(|v| json!(v)));
    put("passwd", u.passwd.as_ref().map(|v| json!(v)));
    put("primary_group", u.primary_group.as_ref().map(|v| json!(v)));
    put("lock_passwd", u.lock_password.map(|v| json!(v)));
    put("sudo", u.sudo.as_ref().map(|v| json!(v)));
    put("ssh_authorized_keys", u.ssh_authorized_keys.as_ref().map(|v| json!(v)));
    Value::Object(m)
}

fn disks(d: &DiskSetup) -> (Map<String, Value>, Vec<Value>) {
    let mut disks = Map::new();
    for p in d.partitions.iter().flatten() {
        let layout = match p.disk_layout.as_deref() {
            Some(parts) if !parts.is_empty() => Value::Array(parts.iter().map(partition).collect()),
            _ => json!(p.layout.unwrap_or(false)),
        };
        let mut v = json!({ "layout": layout });
        if let Some(o) = p.overwrite {
            v["overwrite"] = json!(o);
        }
        if let Some(t) = p.table_type {
            v["table_type"] = json!(t.as_str());
        }
        disks.insert(p.device.clone(), v);
    }
    let filesystems = d
        .filesystems
        .iter()
        .flatten()
        .map(|f| {
            let mut v = json!({"device": f.device, "filesystem": f.filesystem});
            if let Some(l) = &f.label {
                v["label"] = json!(l);
            }
            if let Some(p) = &f.partition {
                v["partition"] = json!(p);
            }
            if let Some(o) = f.overwrite {
                v["overwrite"] = json!(o);
            }
            if let Some(r) = &f.replace_fs {
                v["replace_fs"] = json!(r);
            }
            if let Some(e) = &f.extra_opts {
                v["extra_opts"] = json!(e);
            }
            v
        })
        .collect();
    (disks, filesystems)
}

/// One entry of a cloud-init partition layout: a share of the device, with the partition
/// type when given (by name, translated to its type code, or as a GPT GUID, kept as is).
fn partition(p: &PartitionSpec) -> Value {
    let Some(t) = p.partition_type.as_deref() else {
        return json!(p.percentage);
    };
    let code = match t {
        "Linux" => "83",
        "LinuxSwap" => "82",
        "LinuxRAID" => "fd",
        "LVM" => "8e",
        "Fat32" => "0c",
        "NTFS" => "07",
        "LinuxExtended" => "85",
        other => other,
    };
    json!([p.percentage, code])
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::kubeadm::NTP;

    #[test]
    fn renders_files_commands_users_and_extras() {
        let setup = NodeSetup {
            files: vec![
                SetupFile { encoding: Some(Encoding::Base64), ..SetupFile::new("/etc/x", "0600", "aGk=".into()) },
                SetupFile::new("/run/kubeadm/kubeadm.yaml", "0640", "---\nkind: InitConfiguration\n".into()),
            ],
            boot_commands: vec![],
            pre_commands: vec!["echo pre".into()],
            kubeadm_command: "kubeadm init --config /run/kubeadm/kubeadm.yaml".into(),
            post_commands: vec!["echo post".into()],
            users: vec![User { name: "ops".into(), sudo: Some("ALL=(ALL) NOPASSWD:ALL".into()), ..Default::default() }],
            ntp: Some(NTP { servers: Some(vec!["time.example".into()]), enabled: Some(true) }),
            mounts: vec![vec!["/dev/sdb".into(), "/data".into()]],
            disk_setup: None,
        };
        let text = render(&setup);
        let expected = "#cloud-config
write_files:
- content: aGk=
  encoding: b64
  owner: \"root:root\"
  path: /etc/x
  permissions: \"0600\"
- content: |
    ---
    kind: InitConfiguration
  owner: \"root:root\"
  path: /run/kubeadm/kubeadm.yaml
  permissions: \"0640\"
runcmd:
- \"echo pre\"
- \"kubeadm init --config /run/kubeadm/kubeadm.yaml\"
- \"echo post\"
users:
- name: ops
  sudo: \"ALL=(ALL) NOPASSWD:ALL\"
ntp:
  enabled: true
  servers:
  - time.example
mounts:
-
  - /dev/sdb
  - /data
";
        assert_eq!(text, expected);
    }

    #[test]
    fn renders_boot_commands_and_disks() {
        let disk_setup: DiskSetup = serde_json::from_value(json!({
            "partitions": [
                {"device": "/dev/sdb", "layout": true, "tableType": "gpt"},
                {"device": "/dev/sdc", "diskLayout": [{"percentage": 30, "partitionType": "LinuxSwap"}, {"percentage": 70}]},
            ],
            "filesystems": [{"device": "/dev/sdb", "filesystem": "ext4", "partition": "1"}],
        }))
        .unwrap();
        let setup = NodeSetup {
            boot_commands: vec!["echo boot".into()],
            kubeadm_command: "kubeadm join".into(),
            disk_setup: Some(disk_setup),
            ..Default::default()
        };
        let text = render(&setup);
        let expected = "#cloud-config
write_files: []
bootcmd:
- \"echo boot\"
runcmd:
- \"kubeadm join\"
disk_setup:
  /dev/sdb:
    layout: true
    table_type: gpt
  /dev/sdc:
    layout:
    -
      - 30
      - \"82\"
    - 70
fs_setup:
- device: /dev/sdb
  filesystem: ext4
  partition: \"1\"
";
        assert_eq!(text, expected);
    }
}
