//! Ignition v3 configuration (Flatcar and similar) for a [`NodeSetup`]: files under
//! `storage.files`, users under `passwd`, and a one-shot `kubeadm.service` running a script
//! with the commands around kubeadm.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use drydock_api::capi::kubeadm::v1beta2::DiskSetup;
use drydock_api::capi::kubeadm::{Encoding, User};
use serde_json::{Map, Value, json};

use super::setup::{NodeSetup, SetupFile};

pub(crate) const VERSION: &str = "3.3.0";
const SCRIPT_PATH: &str = "/etc/kubeadm.sh";
/// Marks a finished bootstrap, so the unit does not run kubeadm again after a reboot.
const DONE_PATH: &str = "/etc/kubeadm.done";

/// The Ignition JSON, with `additional` (the user's extra config) merged in when it is
/// Ignition JSON. Returns a note when it could not be merged.
pub(crate) fn render(setup: &NodeSetup, additional: Option<&str>) -> (String, Option<String>) {
    let mut files: Vec<Value> = setup.files.iter().map(file).collect();
    let mut units = vec![json!({"name": "kubeadm.service", "enabled": true, "contents": unit()})];
    files.push(file(&SetupFile::new(SCRIPT_PATH, "0700", script(setup))));
    for u in setup.users.iter().filter(|u| u.sudo.is_some()) {
        let rule = format!("{} {}\n", u.name, u.sudo.as_deref().unwrap_or_default());
        files.push(file(&SetupFile::new(&format!("/etc/sudoers.d/{}", u.name), "0440", rule)));
    }
    if let Some(servers) = setup.ntp.as_ref().filter(|n| n.enabled != Some(false)).and_then(|n| n.servers.as_ref()) {
        let conf = format!("[Time]\nNTP={}\n", servers.join(" "));
        files.push(file(&SetupFile::new("/etc/systemd/timesyncd.conf", "0644", conf)));
        units.push(json!({"name": "systemd-timesyncd.service", "enabled": true}));
    }
    units.extend(setup.mounts.iter().filter_map(|m| mount_unit(m)));
    let mut storage = json!({ "files": files });
    if let Some(d) = &setup.disk_setup {
        let (disks, filesystems) = disks(d);
        if !disks.is_empty() {
            storage["disks"] = Value::Array(disks);
        }
        if !filesystems.is_empty() {
            storage["filesystems"] = Value::Array(filesystems);
        }
    }
    let mut config = json!({
        "ignition": {"version": VERSION},
        "storage": storage,
        "systemd": {"units": units},
    });
    if !setup.users.is_empty() {
        config["passwd"] = json!({"users": setup.users.iter().map(user).collect::<Vec<_>>()});
    }
    let note = additional.filter(|a| !a.trim().is_empty()).and_then(|a| match serde_json::from_str::<Value>(a) {
        Ok(extra @ Value::Object(_)) => {
            merge(&mut config, extra);
            None
        }
        _ => Some(
            "spec.ignition.containerLinuxConfig.additionalConfig is not Ignition JSON and was not merged \
             (drydock merges Ignition JSON only)"
                .to_string(),
        ),
    });
    (config.to_string(), note)
}

fn unit() -> String {
    format!(
        "[Unit]\nDescription=kubeadm\nConditionPathExists=!{DONE_PATH}\nWants=network-online.target\n\
         After=network-online.target\n\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart={SCRIPT_PATH}\n\n\
         [Install]\nWantedBy=multi-user.target\n"
    )
}

fn script(setup: &NodeSetup) -> String {
    let mut s = String::from("#!/bin/bash\nset -e\n");
    for c in setup.commands() {
        s.push_str(c);
        s.push('\n');
    }
    s.push_str(&format!("touch {DONE_PATH}\n"));
    s
}

/// Octal permissions (`0640`) as Ignition's decimal mode.
fn mode(permissions: Option<&str>) -> u32 {
    permissions.and_then(|p| u32::from_str_radix(p.trim_start_matches("0o"), 8).ok()).unwrap_or(0o644)
}

fn file(f: &SetupFile) -> Value {
    let (source, compression) = match f.encoding {
        Some(Encoding::Base64) => (format!("data:;base64,{}", f.content), None),
        Some(Encoding::GzipBase64) => (format!("data:;base64,{}", f.content), Some("gzip")),
        Some(Encoding::Gzip) => (format!("data:;base64,{}", STANDARD.encode(f.content.as_bytes())), Some("gzip")),
        None => (format!("data:;base64,{}", STANDARD.encode(f.content.as_bytes())), None),
    };
    let mut contents = json!({ "source": source });
    if let Some(c) = compression {
        contents["compression"] = json!(c);
    }
    let mut v = json!({"path": f.path, "mode": mode(f.permissions.as_deref())});
    if f.append {
        v["append"] = json!([contents]);
    } else {
        v["overwrite"] = json!(true);
        v["contents"] = contents;
    }
    if let Some((u, g)) = f.owner.as_deref().map(|o| o.split_once(':').unwrap_or((o, o))) {
        v["user"] = json!({"name": u});
        v["group"] = json!({"name": g});
    }
    v
}

fn user(u: &User) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), json!(u.name));
    if let Some(p) = &u.passwd {
        m.insert("passwordHash".into(), json!(p));
    }
    if let Some(k) = &u.ssh_authorized_keys {
        m.insert("sshAuthorizedKeys".into(), json!(k));
    }
    if let Some(g) = &u.groups {
        let groups: Vec<&str> = g.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
        m.insert("groups".into(), json!(groups));
    }
    for (k, v) in
        [("homeDir", &u.home_dir), ("shell", &u.shell), ("primaryGroup", &u.primary_group), ("gecos", &u.gecos)]
    {
        if let Some(v) = v {
            m.insert(k.into(), json!(v));
        }
    }
    Value::Object(m)
}

/// systemd's path escaping for unit names (`/var/lib/x-y` → `var-lib-x\x2dy`).
fn escape_path(path: &str) -> String {
    let trimmed = path.trim_matches('/');
    if trimmed.is_empty() {
        return "-".into();
    }
    let mut out = String::new();
    for (i, b) in trimmed.bytes().enumerate() {
        match b {
            b'/' => out.push('-'),
            b'.' if i == 0 => out.push_str("\\x2e"),
            b if b.is_ascii_alphanumeric() || b == b':' || b == b'_' || b == b'.' => out.push(b as char),
            b => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out
}

/// A `.mount` unit for a cloud-init style mount entry `[what, where, type, options]`.
fn mount_unit(entry: &[String]) -> Option<Value> {
    let (what, path) = (entry.first()?, entry.get(1)?);
    let mut contents = format!("[Unit]\nDescription=Mount {path}\n\n[Mount]\nWhat={what}\nWhere={path}\n");
    if let Some(t) = entry.get(2).filter(|t| !t.is_empty() && *t != "auto") {
        contents.push_str(&format!("Type={t}\n"));
    }
    if let Some(o) = entry.get(3).filter(|o| !o.is_empty()) {
        contents.push_str(&format!("Options={o}\n"));
    }
    contents.push_str("\n[Install]\nWantedBy=multi-user.target\n");
    Some(json!({"name": format!("{}.mount", escape_path(path)), "enabled": true, "contents": contents}))
}

fn disks(d: &DiskSetup) -> (Vec<Value>, Vec<Value>) {
    let disks = d
        .partitions
        .iter()
        .flatten()
        .map(|p| {
            let mut v = json!({"device": p.device, "wipeTable": p.overwrite.unwrap_or(false)});
            match p.disk_layout.as_deref() {
                // Ignition sizes partitions in MiB, not in shares of the device: the partitions
                // are declared, in order, with their GPT type when one is given.
                Some(parts) if !parts.is_empty() => {
                    let parts: Vec<Value> = (1..)
                        .zip(parts)
                        .map(|(number, s)| {
                            let mut part = json!({ "number": number });
                            if let Some(guid) = s.partition_type.as_deref().filter(|t| t.contains('-')) {
                                part["typeGuid"] = json!(guid);
                            }
                            part
                        })
                        .collect();
                    v["partitions"] = Value::Array(parts);
                }
                _ if p.layout == Some(true) => v["partitions"] = json!([{"number": 1}]),
                _ => {}
            }
            v
        })
        .collect();
    let filesystems = d
        .filesystems
        .iter()
        .flatten()
        .map(|f| {
            let device = match f.partition.as_deref() {
                Some(n) if n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty() => {
                    format!("{}{n}", f.device)
                }
                _ => f.device.clone(),
            };
            let mut v =
                json!({"device": device, "format": f.filesystem, "wipeFilesystem": f.overwrite.unwrap_or(false)});
            if let Some(l) = &f.label {
                v["label"] = json!(l);
            }
            if let Some(o) = &f.extra_opts {
                v["options"] = json!(o);
            }
            v
        })
        .collect();
    (disks, filesystems)
}

/// Merges `extra` into `base`: objects key by key, lists appended, and on conflicting
/// scalars the generated value kept (the Ignition version, the kubeadm unit).
fn merge(base: &mut Value, extra: Value) {
    match (base, extra) {
        (Value::Object(b), Value::Object(e)) => {
            for (k, v) in e {
                match b.get_mut(&k) {
                    Some(existing) => merge(existing, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (Value::Array(b), Value::Array(e)) => b.extend(e),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drydock_api::capi::kubeadm::NTP;

    fn setup() -> NodeSetup {
        NodeSetup {
            files: vec![
                SetupFile { owner: Some("core:core".into()), ..SetupFile::new("/etc/a", "0600", "hello".into()) },
                SetupFile::new("/run/kubeadm/kubeadm-join-config.yaml", "0640", "kind: JoinConfiguration\n".into()),
            ],
            boot_commands: vec![],
            pre_commands: vec!["echo pre".into()],
            kubeadm_command: "kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml".into(),
            post_commands: vec![],
            users: vec![User {
                name: "ops".into(),
                groups: Some("wheel, docker".into()),
                sudo: Some("ALL=(ALL) NOPASSWD:ALL".into()),
                ..Default::default()
            }],
            ntp: Some(NTP { servers: Some(vec!["a".into(), "b".into()]), enabled: None }),
            mounts: vec![vec!["/dev/sdb1".into(), "/var/lib/data-1".into(), "ext4".into()]],
            disk_setup: None,
        }
    }

    #[test]
    fn renders_ignition_v3() {
        let (text, note) = render(&setup(), None);
        assert!(note.is_none());
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["ignition"]["version"], VERSION);
        let files = v["storage"]["files"].as_array().unwrap();
        assert_eq!(files[0]["path"], "/etc/a");
        assert_eq!(files[0]["mode"], 0o600);
        assert_eq!(files[0]["user"]["name"], "core");
        assert_eq!(files[0]["contents"]["source"], "data:;base64,aGVsbG8=");
        let script = files.iter().find(|f| f["path"] == SCRIPT_PATH).unwrap();
        let body = script["contents"]["source"].as_str().unwrap().trim_start_matches("data:;base64,");
        let body = String::from_utf8(STANDARD.decode(body).unwrap()).unwrap();
        assert!(body.contains("echo pre\nkubeadm join --config /run/kubeadm/kubeadm-join-config.yaml\n"), "{body}");
        assert!(files.iter().any(|f| f["path"] == "/etc/sudoers.d/ops"));
        assert!(files.iter().any(|f| f["path"] == "/etc/systemd/timesyncd.conf"));
        let units = v["systemd"]["units"].as_array().unwrap();
        assert_eq!(units[0]["name"], "kubeadm.service");
        assert!(units.iter().any(|u| u["name"] == "var-lib-data\\x2d1.mount"));
        assert_eq!(v["passwd"]["users"][0]["groups"], json!(["wheel", "docker"]));
    }

    #[test]
    fn additional_config_merges_json_or_is_noted() {
        let extra = r#"{"ignition": {"version": "3.0.0"}, "systemd": {"units": [{"name": "extra.service"}]}}"#;
        let (text, note) = render(&setup(), Some(extra));
        assert!(note.is_none());
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["ignition"]["version"], VERSION);
        assert!(v["systemd"]["units"].as_array().unwrap().iter().any(|u| u["name"] == "extra.service"));
        let (_, note) = render(&setup(), Some("storage:\n  files: []\n"));
        assert!(note.is_some());
    }

    #[test]
    fn path_escaping() {
        assert_eq!(escape_path("/"), "-");
        assert_eq!(escape_path("/var/lib/data-1"), "var-lib-data\\x2d1");
        assert_eq!(escape_path("/mnt/.hidden"), "mnt-.hidden");
    }
}
