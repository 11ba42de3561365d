//! cloud-init user data (`#cloud-config`) for a [`NodeSetup`].

use drydock_api::capi::kubeadm::{DiskSetup, Encoding, User};
use serde_json::{Map, Value, json};

use super::setup::{NodeSetup, SetupFile};
use super::yaml;

/// The `#cloud-config` document.
pub(crate) fn render(setup: &NodeSetup) -> String {
    let mut sections: Vec<(&str, Value)> = vec![
        ("write_files", Value::Array(setup.files.iter().map(file).collect())),
        ("runcmd", Value::Array(setup.commands().map(|c| json!(c)).collect())),
    ];
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
        let mut v = json!({"layout": p.layout});
        if let Some(o) = p.overwrite {
            v["overwrite"] = json!(o);
        }
        if let Some(t) = &p.table_type {
            v["table_type"] = json!(t);
        }
        disks.insert(p.device.clone(), v);
    }
    let filesystems = d
        .filesystems
        .iter()
        .flatten()
        .map(|f| {
            let mut v = json!({"device": f.device, "filesystem": f.filesystem, "label": f.label});
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
}
