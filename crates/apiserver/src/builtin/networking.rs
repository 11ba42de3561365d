//! networking.k8s.io/v1: Ingress, IngressClass, NetworkPolicy, ServiceCIDR, IPAddress.

use k8s_openapi::api::networking::v1 as net;

use super::kind::{AGE, BASE, Kind, schema_of};

const NET: Kind = Kind { group: "networking.k8s.io", ..BASE };

pub(super) const KINDS: &[Kind] = &[
    Kind {
        kind: "Ingress",
        plural: "ingresses",
        short: &["ing"],
        status: true,
        columns: &[
            ("Class", "string", "#ing.class", 0),
            ("Hosts", "string", "#ing.hosts", 0),
            ("Address", "string", "#ing.address", 0),
            ("Ports", "string", "#ing.ports", 0),
            AGE,
        ],
        schema: schema_of::<net::Ingress>,
        ..NET
    },
    Kind {
        kind: "IngressClass",
        plural: "ingressclasses",
        namespaced: false,
        columns: &[
            ("Controller", "string", ".spec.controller", 0),
            ("Parameters", "string", "#ingclass.parameters", 0),
            AGE,
        ],
        schema: schema_of::<net::IngressClass>,
        ..NET
    },
    Kind {
        kind: "NetworkPolicy",
        plural: "networkpolicies",
        short: &["netpol"],
        columns: &[("Pod-Selector", "string", "#selector:.spec.podSelector", 0), AGE],
        schema: schema_of::<net::NetworkPolicy>,
        ..NET
    },
    Kind {
        kind: "ServiceCIDR",
        plural: "servicecidrs",
        namespaced: false,
        status: true,
        columns: &[("CIDRs", "string", "#join:.spec.cidrs", 0), AGE],
        schema: schema_of::<net::ServiceCIDR>,
        ..NET
    },
    Kind {
        kind: "IPAddress",
        plural: "ipaddresses",
        namespaced: false,
        short: &["ip"],
        columns: &[("ParentRef", "string", "#ip.parentRef", 0), AGE],
        schema: schema_of::<net::IPAddress>,
        ..NET
    },
];
