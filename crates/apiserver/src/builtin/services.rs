//! Service cluster IP and node port allocation, per logical cluster: kubeadm's default
//! service CIDR (10.96.0.0/12, the first address kept for the `kubernetes` Service) and
//! node port range (30000-32767). What is in use is read from the cluster's stored
//! Services, so nothing needs releasing when one is deleted; creates are serialized by
//! [`ServiceAllocations`] so two cannot take the same address.

use std::collections::HashSet;
use std::net::Ipv4Addr;

use drydock_api::FieldError;
use serde::Deserialize;
use serde_json::{Value, json};

use super::defaults::{node_port_fields, uses_node_ports};
use crate::error::{ApiError, ApiResult};
use crate::rest::{Api, Target};

const CIDR: &str = "10.96.0.0/12";
const BASE: u32 = u32::from_be_bytes([10, 96, 0, 0]);
const SIZE: u32 = 1 << 20;
/// The `kubernetes` Service's address.
const RESERVED: u32 = BASE + 1;
const NODE_PORTS: std::ops::RangeInclusive<u16> = 30000..=32767;

/// Serializes Service creates, each reading what is allocated and committing its own.
#[derive(Debug, Default)]
pub struct ServiceAllocations {
    lock: tokio::sync::Mutex<()>,
}

impl ServiceAllocations {
    /// Held from reading the allocations until the new Service is committed.
    pub async fn lock(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.lock.lock().await
    }
}

/// Whether writes to `t` allocate Service addresses.
pub fn is_service(t: &Target) -> bool {
    t.res.def.group.is_empty() && t.res.def.kind == "Service"
}

/// The part of a stored Service that holds allocations.
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Allocated {
    metadata: AllocatedMeta,
    spec: AllocatedSpec,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct AllocatedMeta {
    namespace: String,
    name: String,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct AllocatedSpec {
    #[serde(rename = "clusterIP")]
    cluster_ip: String,
    ports: Vec<AllocatedPort>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct AllocatedPort {
    node_port: Option<u16>,
}

/// Addresses and ports taken by the other Services of a logical cluster.
#[derive(Default)]
struct InUse {
    ips: HashSet<u32>,
    ports: HashSet<u16>,
}

fn in_use(api: &Api, t: &Target, namespace: &str, name: &str) -> InUse {
    let page = api.store.list(&t.cluster, t.res.storage, None, None, None, &|_, _| true);
    let mut used = InUse::default();
    for obj in page.items {
        let Ok(svc) = serde_json::from_slice::<Allocated>(&obj.bytes) else { continue };
        if svc.metadata.namespace == namespace && svc.metadata.name == name {
            continue;
        }
        if let Ok(ip) = svc.spec.cluster_ip.parse::<Ipv4Addr>() {
            used.ips.insert(u32::from(ip));
        }
        used.ports.extend(svc.spec.ports.iter().filter_map(|p| p.node_port));
    }
    used
}

/// Gives `svc` a cluster IP and node ports where it needs them and has none, and checks
/// the ones it asks for. Errors are 422 Invalid with kube-apiserver's messages.
pub fn allocate(api: &Api, t: &Target, svc: &mut Value) -> ApiResult<()> {
    let namespace = svc["metadata"]["namespace"].as_str().unwrap_or_default().to_string();
    let name = svc["metadata"]["name"].as_str().unwrap_or_default().to_string();
    let used = in_use(api, t, &namespace, &name);
    let seed = seed(svc["metadata"]["uid"].as_str().unwrap_or(&name));
    let kubernetes = namespace == "default" && name == "kubernetes";
    let mut errs = Vec::new();
    if svc["spec"]["type"] != "ExternalName" {
        errs.extend(cluster_ip(svc, &used, seed, kubernetes));
    }
    errs.extend(node_ports(svc, &used, seed));
    if errs.is_empty() { Ok(()) } else { Err(ApiError::invalid(&t.res.def, &name, &errs)) }
}

/// A spread-out starting point for the search, so consecutive creates rarely probe the
/// same addresses.
fn seed(s: &str) -> u32 {
    s.bytes().fold(2_166_136_261u32, |h, b| (h ^ u32::from(b)).wrapping_mul(16_777_619))
}

fn cluster_ip(svc: &mut Value, used: &InUse, seed: u32, kubernetes: bool) -> Option<FieldError> {
    let requested = svc["spec"]["clusterIP"].as_str().unwrap_or_default().to_string();
    let ip = match requested.as_str() {
        "None" => return None,
        "" => match (0..SIZE).map(|i| BASE + (seed.wrapping_add(i) % SIZE)).find(|ip| free(*ip, used, kubernetes)) {
            Some(ip) => Ipv4Addr::from(ip),
            None => {
                return Some(FieldError::invalid(
                    "spec.clusterIPs",
                    "",
                    "failed to allocate a serviceIP: range is full",
                ));
            }
        },
        explicit => match check_ip(explicit, used, kubernetes) {
            Ok(ip) => ip,
            Err(e) => return Some(e),
        },
    };
    svc["spec"]["clusterIP"] = json!(ip.to_string());
    if svc["spec"]["clusterIPs"].as_array().is_none_or(Vec::is_empty) {
        svc["spec"]["clusterIPs"] = json!([ip.to_string()]);
    }
    None
}

fn free(ip: u32, used: &InUse, kubernetes: bool) -> bool {
    let inner = ip > BASE && ip < BASE + SIZE - 1;
    inner && (ip != RESERVED || kubernetes) && !used.ips.contains(&ip)
}

fn check_ip(s: &str, used: &InUse, kubernetes: bool) -> Result<Ipv4Addr, FieldError> {
    let field = "spec.clusterIPs[0]";
    let ip: Ipv4Addr = s
        .parse()
        .map_err(|_| FieldError::invalid(field, s, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"))?;
    let n = u32::from(ip);
    if !(n > BASE && n < BASE + SIZE - 1) {
        return Err(FieldError::invalid(
            field,
            s,
            format!(
                "failed to allocate IP {s}: the provided IP ({s}) is not in the valid range. The range of valid IPs is {CIDR}"
            ),
        ));
    }
    if used.ips.contains(&n) || (n == RESERVED && !kubernetes) {
        return Err(FieldError::invalid(
            field,
            s,
            format!("failed to allocate IP {s}: provided IP is already allocated"),
        ));
    }
    Ok(ip)
}

fn node_ports(svc: &mut Value, used: &InUse, seed: u32) -> Vec<FieldError> {
    if !uses_node_ports(svc["spec"]["type"].as_str().unwrap_or_default()) {
        return Vec::new();
    }
    let fields: Vec<(usize, String)> = node_port_fields(svc).collect();
    let mut taken: HashSet<u16> = HashSet::new();
    let mut errs = Vec::new();
    let span = u32::from(NODE_PORTS.end() - NODE_PORTS.start()) + 1;
    for (i, field) in fields {
        let slot = &mut svc["spec"]["ports"][i]["nodePort"];
        match slot.as_i64().filter(|n| *n != 0) {
            Some(n) => {
                let port = u16::try_from(n).ok().filter(|p| NODE_PORTS.contains(p));
                let Some(port) = port else {
                    errs.push(FieldError::invalid(
                        field,
                        n,
                        format!(
                            "provided port is not in the valid range. The range of valid ports is {}-{}",
                            NODE_PORTS.start(),
                            NODE_PORTS.end()
                        ),
                    ));
                    continue;
                };
                if used.ports.contains(&port) || !taken.insert(port) {
                    errs.push(FieldError::invalid(field, n, "provided port is already allocated"));
                }
            }
            None => {
                let pick = (0..span)
                    .filter_map(|k| u16::try_from((seed.wrapping_add(k)) % span).ok())
                    .map(|off| NODE_PORTS.start() + off)
                    .find(|p| !used.ports.contains(p) && !taken.contains(p));
                match pick {
                    Some(p) => {
                        taken.insert(p);
                        *slot = json!(p);
                    }
                    None => errs.push(FieldError::invalid(field, 0, "failed to allocate a nodePort: range is full")),
                }
            }
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_addresses_are_checked() {
        let mut used = InUse::default();
        used.ips.insert(u32::from(Ipv4Addr::new(10, 96, 0, 10)));
        assert!(check_ip("10.96.0.11", &used, false).is_ok());
        let taken = check_ip("10.96.0.10", &used, false).unwrap_err();
        assert!(taken.detail.contains("already allocated"), "{taken}");
        assert!(check_ip("10.96.0.1", &used, false).is_err(), "reserved for the kubernetes Service");
        assert!(check_ip("10.96.0.1", &used, true).is_ok());
        let outside = check_ip("192.168.0.1", &used, false).unwrap_err();
        assert!(outside.detail.contains("not in the valid range"), "{outside}");
    }

    #[test]
    fn allocations_avoid_what_is_used() {
        let mut used = InUse::default();
        let mut svc = json!({"spec":{"type":"NodePort","ports":[{"port":80},{"port":443}]}});
        used.ports.insert(30000);
        used.ips.insert(BASE + 5);
        assert!(cluster_ip(&mut svc, &used, 4, false).is_none());
        assert_ne!(svc["spec"]["clusterIP"], "10.96.0.5");
        assert!(node_ports(&mut svc, &used, 0).is_empty());
        assert_eq!(svc["spec"]["ports"][0]["nodePort"], 30001);
        assert_eq!(svc["spec"]["ports"][1]["nodePort"], 30002);
    }
}
