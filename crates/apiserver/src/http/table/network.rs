//! Cells of Services, Endpoints, EndpointSlices, Ingresses and IP addresses.

use serde_json::{Value, json};

use super::computed::{array, or_none, text};

/// Lists longer than this end in `+ N more...`, as kubectl prints endpoints.
const SHOWN: usize = 3;

fn truncated(items: Vec<String>) -> String {
    if items.len() > SHOWN {
        format!("{} + {} more...", items[..SHOWN].join(","), items.len() - SHOWN)
    } else {
        items.join(",")
    }
}

fn load_balancer(obj: &Value) -> Vec<String> {
    array(obj, ".status.loadBalancer.ingress")
        .iter()
        .map(|i| text(if i["ip"].is_string() { &i["ip"] } else { &i["hostname"] }))
        .collect()
}

pub(super) fn cell(name: &str, obj: &Value) -> Option<Value> {
    Some(match name {
        "svc.externalIP" => json!(service_external_ip(obj)),
        "svc.ports" => {
            let ports: Vec<String> = array(obj, ".spec.ports")
                .iter()
                .map(|p| match p["nodePort"].as_i64() {
                    Some(np) => format!("{}:{np}/{}", text(&p["port"]), text(&p["protocol"])),
                    None => format!("{}/{}", text(&p["port"]), text(&p["protocol"])),
                })
                .collect();
            or_none(ports.join(","))
        }
        "ep.endpoints" => {
            let mut list = Vec::new();
            for s in array(obj, ".subsets") {
                let ports = s["ports"].as_array().map(Vec::as_slice).unwrap_or_default();
                for a in s["addresses"].as_array().into_iter().flatten() {
                    if ports.is_empty() {
                        list.push(text(&a["ip"]));
                    }
                    list.extend(ports.iter().map(|p| format!("{}:{}", text(&a["ip"]), text(&p["port"]))));
                }
            }
            or_none(truncated(list))
        }
        "eps.ports" => {
            let ports: Vec<String> = array(obj, ".ports").iter().map(|p| text(&p["port"])).collect();
            json!(if ports.is_empty() { "<unset>".to_string() } else { ports.join(",") })
        }
        "eps.endpoints" => {
            let addrs: Vec<String> =
                array(obj, ".endpoints").iter().flat_map(|e| array(e, ".addresses").iter().map(text)).collect();
            json!(if addrs.is_empty() { "<unset>".to_string() } else { truncated(addrs) })
        }
        "ing.class" => or_none(text(&obj["spec"]["ingressClassName"])),
        "ing.hosts" => {
            let hosts: Vec<String> =
                array(obj, ".spec.rules").iter().map(|r| text(&r["host"])).filter(|h| !h.is_empty()).collect();
            json!(if hosts.is_empty() { "*".to_string() } else { truncated(hosts) })
        }
        "ing.address" => json!(load_balancer(obj).join(",")),
        "ing.ports" => json!(if array(obj, ".spec.tls").is_empty() { "80" } else { "80, 443" }),
        "ingclass.parameters" => {
            let p = &obj["spec"]["parameters"];
            if p.is_null() { json!("<none>") } else { json!(format!("{}/{}", text(&p["kind"]), text(&p["name"]))) }
        }
        "ip.parentRef" => {
            let p = &obj["spec"]["parentRef"];
            json!(format!("{}/{}/{}", text(&p["resource"]), text(&p["namespace"]), text(&p["name"])))
        }
        _ => return None,
    })
}

fn service_external_ip(obj: &Value) -> String {
    let spec = &obj["spec"];
    let external: Vec<String> = array(obj, ".spec.externalIPs").iter().map(text).collect();
    match spec["type"].as_str().unwrap_or_default() {
        "ExternalName" => text(&spec["externalName"]),
        "LoadBalancer" => {
            let mut all = load_balancer(obj);
            all.extend(external);
            if all.is_empty() { "<pending>".into() } else { all.join(",") }
        }
        _ if external.is_empty() => "<none>".into(),
        _ => external.join(","),
    }
}
