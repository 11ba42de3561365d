//! In-cluster IPAM end to end on an in-process drydock with its controllers: IPAddressClaims
//! on an InClusterIPPool and a GlobalInClusterIPPool get unique addresses, a full pool says
//! so on the claims, freed addresses are handed out again (after the pool's reuse grace
//! period, when it has one), and a pool in use is held until its addresses are gone.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

use drydock_api::capi::core::v1beta2::Cluster;
use drydock_api::capi::ipam::v1beta2::{IPAddress, IPAddressClaim, IPAddressClaimSpec, IPPoolReference};
use drydock_api::capi::ipam::{
    ALLOW_OVERLAP_ANNOTATION, GlobalInClusterIPPool, GlobalInClusterIPPoolSpec, IPAddressStatusSummary,
    InClusterIPPool, InClusterIPPoolSpec,
};
use drydock_api::capi::keys::{IPAM_PROTECT_ADDRESS_FINALIZER, IPAM_PROTECT_POOL_FINALIZER};
use drydock_api::capi::owner;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Resource, ResourceExt};
use serde_json::json;

use common::{Env, eventually};

const NS: &str = "default";
const GROUP: &str = "ipam.cluster.x-k8s.io";
/// Long enough for a thousand allocations one after the other in a debug build.
const WAIT: Duration = Duration::from_secs(240);
/// Between reads of long lists: each read of a thousand objects costs the server too.
const PACE: Duration = Duration::from_millis(200);

fn pool_spec(addresses: &[&str], prefix: i32, gateway: &str, excluded: &[&str]) -> InClusterIPPoolSpec {
    InClusterIPPoolSpec {
        addresses: addresses.iter().map(|a| a.to_string()).collect(),
        prefix,
        gateway: Some(gateway.to_string()),
        excluded_addresses: (!excluded.is_empty()).then(|| excluded.iter().map(|a| a.to_string()).collect()),
        ..Default::default()
    }
}

fn claim(ns: &str, name: &str, kind: &str, pool: &str) -> IPAddressClaim {
    let pool_ref = IPPoolReference { name: pool.into(), kind: kind.into(), api_group: GROUP.into() };
    let mut c = IPAddressClaim::new(name, IPAddressClaimSpec { cluster_name: None, pool_ref });
    c.metadata.namespace = Some(ns.into());
    c
}

/// Creates the claims, many at a time.
async fn create_claims(client: &kube::Client, claims: Vec<IPAddressClaim>) {
    futures::stream::iter(claims)
        .map(|c| {
            let api: Api<IPAddressClaim> =
                Api::namespaced(client.clone(), c.metadata.namespace.as_deref().unwrap_or(NS));
            async move { api.create(&PostParams::default(), &c).await.map(|_| ()) }
        })
        .buffer_unordered(32)
        .try_collect::<Vec<()>>()
        .await
        .expect("create claims");
}

/// Deletes the named claims, many at a time.
async fn delete_claims(api: &Api<IPAddressClaim>, names: &[String]) {
    futures::stream::iter(names)
        .map(|n| async move { api.delete(n, &DeleteParams::default()).await.map(|_| ()) })
        .buffer_unordered(32)
        .try_collect::<Vec<()>>()
        .await
        .expect("delete claims");
}

/// The `Ready` condition of a claim as (status, reason, message).
fn ready(c: &IPAddressClaim) -> Option<(String, String, String)> {
    let conditions = c.status.as_ref()?.conditions.as_ref()?;
    let r = conditions.iter().find(|c| c.type_ == "Ready")?;
    Some((r.status.clone(), r.reason.clone(), r.message.clone()))
}

fn address_ref(c: &IPAddressClaim) -> Option<String> {
    Some(c.status.as_ref()?.address_ref.as_ref()?.name.clone())
}

fn fulfilled(c: &IPAddressClaim) -> bool {
    address_ref(c).is_some() && ready(c).is_some_and(|(s, r, _)| s == "True" && r == "AddressAllocated")
}

fn exhausted(c: &IPAddressClaim) -> bool {
    address_ref(c).is_none() && ready(c).is_some_and(|(s, r, _)| s == "False" && r == "PoolExhausted")
}

async fn list<K>(api: &Api<K>) -> Vec<K>
where
    K: Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    api.list(&ListParams::default()).await.expect("list").items
}

/// Waits until every listed claim whose name starts with `prefix` satisfies `done`, and
/// `count` of them exist; returns them.
async fn claims_where(
    api: &Api<IPAddressClaim>,
    prefix: &str,
    count: usize,
    what: &str,
    done: impl Fn(&[IPAddressClaim]) -> bool,
) -> Vec<IPAddressClaim> {
    eventually(what, WAIT, || async {
        tokio::time::sleep(PACE).await;
        let all: Vec<IPAddressClaim> =
            list(api).await.into_iter().filter(|c| c.name_any().starts_with(prefix)).collect();
        (all.len() == count && done(&all)).then_some(all)
    })
    .await
}

/// The IPAddresses in `api` by claim name, checking each one's pool and claim references.
async fn addresses_by_claim(api: &Api<IPAddress>, kind: &str, pool: &str) -> BTreeMap<String, IPAddress> {
    let mut out = BTreeMap::new();
    for a in list(api).await.into_iter().filter(|a| a.spec.pool_ref.name == pool && a.spec.pool_ref.kind == kind) {
        assert_eq!(a.spec.pool_ref.api_group, GROUP);
        assert_eq!(a.spec.claim_ref.name, a.name_any(), "an address is named after its claim");
        out.insert(a.name_any(), a);
    }
    out
}

async fn pool_counts<K>(
    api: &Api<K>,
    name: &str,
    status: impl Fn(&K) -> Option<IPAddressStatusSummary>,
) -> IPAddressStatusSummary
where
    K: Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    status(&api.get(name).await.expect("pool")).unwrap_or_default()
}

fn counts(total: i64, used: i64) -> IPAddressStatusSummary {
    IPAddressStatusSummary { total, used, free: total - used, out_of_range: 0 }
}

fn ip(s: &str) -> u32 {
    u32::from(s.parse::<Ipv4Addr>().expect("an IPv4 address"))
}

/// The pool `net` of the thousand-claim test: 10.20.0.0/22, gateway 10.20.0.1, in `default`.
struct Net {
    client: kube::Client,
    pools: Api<InClusterIPPool>,
    claims: Api<IPAddressClaim>,
    addresses: Api<IPAddress>,
}

/// The pool's `status.ipAddresses`.
fn net_counts(p: &InClusterIPPool) -> Option<IPAddressStatusSummary> {
    p.status.as_ref().and_then(|s| s.ip_addresses.clone())
}

impl Net {
    async fn create(client: kube::Client) -> Self {
        let net = Self {
            pools: Api::namespaced(client.clone(), NS),
            claims: Api::namespaced(client.clone(), NS),
            addresses: Api::namespaced(client.clone(), NS),
            client,
        };
        // 1024 addresses, less network, broadcast and gateway: 1021.
        let mut pool = InClusterIPPool::new("net", pool_spec(&["10.20.0.0/22"], 22, "10.20.0.1", &[]));
        pool.metadata.namespace = Some(NS.into());
        net.pools.create(&PostParams::default(), &pool).await.expect("pool");
        net
    }

    async fn claim(&self, names: &[String]) {
        create_claims(&self.client, names.iter().map(|n| claim(NS, n, "InClusterIPPool", "net")).collect()).await;
    }

    async fn wait_counts(&self, what: &str, want: IPAddressStatusSummary) {
        eventually(what, WAIT, || async {
            tokio::time::sleep(PACE).await;
            (pool_counts(&self.pools, "net", net_counts).await == want).then_some(())
        })
        .await;
    }

    /// The thousand claims `names` are fulfilled with the lowest thousand addresses, each
    /// once, and the pool counts them.
    async fn fill(&self, names: &[String]) {
        let allocating = Instant::now();
        self.claim(names).await;
        let all = claims_where(&self.claims, "m-", 1000, "1000 claims fulfilled", |cs| cs.iter().all(fulfilled)).await;
        eprintln!("1000 claims fulfilled in {:?}", allocating.elapsed());
        let by_claim = addresses_by_claim(&self.addresses, "InClusterIPPool", "net").await;
        assert_eq!(by_claim.len(), 1000);
        let handed: BTreeSet<u32> = by_claim.values().map(|a| ip(&a.spec.address)).collect();
        assert_eq!(handed.len(), 1000, "no address handed out twice");
        for (name, a) in &by_claim {
            assert_eq!((a.spec.prefix, a.spec.gateway.as_deref()), (22, Some("10.20.0.1")));
            assert!(a.finalizers().iter().any(|f| f == IPAM_PROTECT_ADDRESS_FINALIZER), "{name}");
            let controller = owner::get_controller(&a.metadata).expect("a controller");
            assert_eq!((controller.kind.as_str(), controller.name.as_str()), ("IPAddressClaim", name.as_str()));
            assert_eq!(controller.block_owner_deletion, Some(true));
            let pool_owner = owner::find_owner(&a.metadata, GROUP, "InClusterIPPool").expect("the pool owns it");
            assert_eq!((pool_owner.controller, pool_owner.block_owner_deletion), (Some(false), Some(true)));
        }
        for c in &all {
            assert_eq!(address_ref(c), Some(c.name_any()), "the claim names its address");
        }
        // First fit: the lowest thousand addresses after the network address and the gateway.
        let want: BTreeSet<u32> = (ip("10.20.0.2")..ip("10.20.0.2") + 1000).collect();
        assert_eq!(handed, want);
        assert!(!handed.contains(&ip("10.20.0.1")) && !handed.contains(&ip("10.20.0.0")));
        self.wait_counts("pool counts 1000 used", counts(1021, 1000)).await;
        let live = self.pools.get("net").await.expect("pool");
        assert!(live.finalizers().iter().any(|f| f == IPAM_PROTECT_POOL_FINALIZER));
    }

    /// 24 more claims for the 21 addresses left: three are told the pool is exhausted.
    /// Returns those three.
    async fn exhaust(&self) -> Vec<String> {
        let extra: Vec<String> = (0..24).map(|i| format!("x-{i:02}")).collect();
        self.claim(&extra).await;
        let extras = claims_where(&self.claims, "x-", 24, "21 extra claims fulfilled and 3 exhausted", |cs| {
            cs.iter().filter(|c| fulfilled(c)).count() == 21 && cs.iter().filter(|c| exhausted(c)).count() == 3
        })
        .await;
        let message = ready(extras.iter().find(|c| exhausted(c)).expect("an exhausted claim")).expect("Ready").2;
        assert!(message.contains("InClusterIPPool default/net"), "{message}");
        let by_claim = addresses_by_claim(&self.addresses, "InClusterIPPool", "net").await;
        let handed: BTreeSet<u32> = by_claim.values().map(|a| ip(&a.spec.address)).collect();
        assert_eq!((by_claim.len(), handed.len()), (1021, 1021), "every address once");
        assert_eq!(handed.last(), Some(&ip("10.20.3.254")), "the broadcast address is never handed out");
        self.wait_counts("pool counts it full", counts(1021, 1021)).await;
        extras.iter().filter(|c| exhausted(c)).map(ResourceExt::name_any).collect()
    }

    /// Releasing one claim's address: one starved claim gets it. Returns that claim.
    async fn release_one(&self, starved: &[String]) -> String {
        let freed = self.addresses.get("m-0500").await.expect("address").spec.address;
        self.claims.delete("m-0500", &DeleteParams::default()).await.expect("delete claim");
        eventually("the released claim and its address gone", WAIT, || async {
            let gone = self.claims.get_opt("m-0500").await.expect("get").is_none()
                && self.addresses.get_opt("m-0500").await.expect("get").is_none();
            gone.then_some(())
        })
        .await;
        let reuser = eventually("a starved claim gets the freed address", WAIT, || async {
            tokio::time::sleep(PACE).await;
            let mut got = Vec::new();
            for name in starved {
                if fulfilled(&self.claims.get(name).await.expect("claim")) {
                    got.push(name.clone());
                }
            }
            (got.len() == 1).then(|| got.remove(0))
        })
        .await;
        assert_eq!(self.addresses.get(&reuser).await.expect("address").spec.address, freed);
        for name in starved.iter().filter(|n| **n != reuser) {
            assert!(exhausted(&self.claims.get(name).await.expect("claim")), "{name} still waits");
        }
        reuser
    }

    /// Deleting the pool while it is in use: it is held while addresses are left (and its
    /// waiting claims are told), and goes with the last one.
    async fn delete_in_use(&self, names: &[String], waiting: &[&String]) {
        self.pools.delete("net", &DeleteParams::default()).await.expect("delete pool");
        eventually("waiting claims see the pool going", WAIT, || async {
            let mut told = true;
            for name in waiting {
                let c = self.claims.get(name).await.expect("claim");
                let (status, reason, message) = ready(&c).unwrap_or_default();
                told &= status == "False" && reason == "PoolNotReady" && message.contains("being deleted");
            }
            told.then_some(())
        })
        .await;
        // Half the claims go; the pool controller counts that and still holds the pool.
        let first_half: Vec<String> = names.iter().filter(|n| **n != "m-0500").take(500).cloned().collect();
        delete_claims(&self.claims, &first_half).await;
        eventually("the deleting pool counts the addresses left", WAIT, || async {
            tokio::time::sleep(PACE).await;
            let p = self.pools.get("net").await.expect("the pool is still there");
            assert!(p.metadata.deletion_timestamp.is_some());
            (net_counts(&p) == Some(counts(1021, 1021 - 500))).then_some(())
        })
        .await;
        let rest: Vec<String> = list(&self.claims).await.iter().map(ResourceExt::name_any).collect();
        delete_claims(&self.claims, &rest).await;
        eventually("the pool gone with its last address", WAIT, || async {
            tokio::time::sleep(PACE).await;
            let done = self.pools.get_opt("net").await.expect("get").is_none()
                && list(&self.addresses).await.is_empty()
                && list(&self.claims).await.is_empty();
            done.then_some(())
        })
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_claims_on_a_slash_22_pool() {
    common::logs();
    let started = Instant::now();
    let env = Env::start(true).await;
    let net = Net::create(env.client()).await;
    let names: Vec<String> = (0..1000).map(|i| format!("m-{i:04}")).collect();
    net.fill(&names).await;
    let starved = net.exhaust().await;
    let reuser = net.release_one(&starved).await;
    let waiting: Vec<&String> = starved.iter().filter(|n| **n != reuser).collect();
    net.delete_in_use(&names, &waiting).await;
    eprintln!("a_thousand_claims_on_a_slash_22_pool took {:?}", started.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_global_pool_serves_two_namespaces() {
    common::logs();
    let env = Env::start(true).await;
    let client = env.client();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "team-b"}})).expect("namespace");
    namespaces.create(&PostParams::default(), &ns).await.expect("namespace");

    // 20 addresses: .10-.29 less the excluded .15, and .100.
    let spec = pool_spec(&["192.168.50.10-192.168.50.29", "192.168.50.100"], 24, "192.168.50.1", &["192.168.50.15"]);
    let globals: Api<GlobalInClusterIPPool> = Api::all(client.clone());
    let pool = GlobalInClusterIPPool::new("shared", GlobalInClusterIPPoolSpec(spec.clone()));
    globals.create(&PostParams::default(), &pool).await.expect("global pool");
    // A namespaced pool over the same addresses could hand out an address twice: refused,
    // unless it says that is meant (NAT, several sites); then it allocates on its own.
    let locals: Api<InClusterIPPool> = Api::namespaced(client.clone(), NS);
    let mut local = InClusterIPPool::new("shared", spec);
    local.metadata.namespace = Some(NS.into());
    match locals.create(&PostParams::default(), &local).await {
        Err(kube::Error::Api(e)) => {
            assert_eq!(e.code, 422, "{e:?}");
            assert!(e.message.contains("overlaps with GlobalInClusterIPPool shared"), "{}", e.message);
        }
        other => panic!("an overlapping pool was not refused: {other:?}"),
    }
    local.metadata.annotations = Some([(ALLOW_OVERLAP_ANNOTATION.to_string(), "true".to_string())].into());
    locals.create(&PostParams::default(), &local).await.expect("overlapping pool, meant");

    let mut all = Vec::new();
    for i in 0..10 {
        all.push(claim(NS, &format!("a-{i}"), "GlobalInClusterIPPool", "shared"));
        all.push(claim("team-b", &format!("b-{i}"), "GlobalInClusterIPPool", "shared"));
    }
    all.push(claim(NS, "local-0", "InClusterIPPool", "shared"));
    create_claims(&client, all).await;

    let (claims_a, claims_b): (Api<IPAddressClaim>, Api<IPAddressClaim>) =
        (Api::namespaced(client.clone(), NS), Api::namespaced(client.clone(), "team-b"));
    claims_where(&claims_a, "a-", 10, "claims in default fulfilled", |cs| cs.iter().all(fulfilled)).await;
    claims_where(&claims_b, "b-", 10, "claims in team-b fulfilled", |cs| cs.iter().all(fulfilled)).await;
    let (addresses_a, addresses_b): (Api<IPAddress>, Api<IPAddress>) =
        (Api::namespaced(client.clone(), NS), Api::namespaced(client.clone(), "team-b"));
    let mut handed = BTreeSet::new();
    for api in [&addresses_a, &addresses_b] {
        for a in addresses_by_claim(api, "GlobalInClusterIPPool", "shared").await.values() {
            assert!(handed.insert(ip(&a.spec.address)), "{} handed out twice", a.spec.address);
        }
    }
    let mut want: BTreeSet<u32> = (ip("192.168.50.10")..=ip("192.168.50.29")).collect();
    want.remove(&ip("192.168.50.15"));
    want.insert(ip("192.168.50.100"));
    assert_eq!(handed, want, "every address of the pool once, across both namespaces");
    let status = |p: &GlobalInClusterIPPool| p.status.as_ref().and_then(|s| s.ip_addresses.clone());
    eventually("global pool counts", WAIT, || async {
        (pool_counts(&globals, "shared", status).await == counts(20, 20)).then_some(())
    })
    .await;
    // A pool does not shrink under its addresses.
    let shrink = json!({"spec": {"addresses": ["192.168.50.100"]}});
    match globals.patch("shared", &PatchParams::default(), &Patch::Merge(&shrink)).await {
        Err(kube::Error::Api(e)) => {
            assert!(e.message.contains("pool addresses do not contain allocated addresses"), "{}", e.message);
        }
        other => panic!("the pool shrank under its addresses: {other:?}"),
    }
    claims_where(&claims_a, "local-", 1, "the overlapping pool's claim fulfilled", |cs| cs.iter().all(fulfilled)).await;
    assert_eq!(addresses_a.get("local-0").await.expect("address").spec.address, "192.168.50.10");
    claim_of_paused_cluster(&client, &claims_a).await;

    // An IPAddress deleted while its claim exists stays, in use, held by its finalizer.
    let before = addresses_b.get("b-3").await.expect("address");
    addresses_b.delete("b-3", &DeleteParams::default()).await.expect("delete address");
    let held = addresses_b.get("b-3").await.expect("still there");
    assert!(held.metadata.deletion_timestamp.is_some());
    assert!(fulfilled(&claims_b.get("b-3").await.expect("claim")));
    // Once it is really gone, the claim gets an address again: the one just freed.
    let patch = json!({"metadata": {"finalizers": null}});
    addresses_b.patch("b-3", &PatchParams::default(), &Patch::Merge(&patch)).await.expect("drop finalizer");
    let again = eventually("the claim gets a new IPAddress", WAIT, || async {
        let a = addresses_b.get_opt("b-3").await.expect("get")?;
        (a.metadata.uid != before.metadata.uid && a.metadata.deletion_timestamp.is_none()).then_some(a)
    })
    .await;
    assert_eq!(again.spec.address, before.spec.address);
    assert!(fulfilled(&claims_b.get("b-3").await.expect("claim")));
}

/// A claim of a paused Cluster is left alone, and fulfilled once the Cluster resumes.
async fn claim_of_paused_cluster(client: &kube::Client, claims: &Api<IPAddressClaim>) {
    let clusters: Api<Cluster> = Api::namespaced(client.clone(), NS);
    let cluster: Cluster =
        serde_json::from_value(json!({"metadata": {"name": "held", "namespace": NS}, "spec": {"paused": true}}))
            .expect("cluster");
    clusters.create(&PostParams::default(), &cluster).await.expect("cluster");
    let mut held = claim(NS, "held-0", "InClusterIPPool", "shared");
    held.spec.cluster_name = Some("held".into());
    // Created first, so the one worker comes to it before the claim after it.
    create_claims(client, vec![held]).await;
    create_claims(client, vec![claim(NS, "local-1", "InClusterIPPool", "shared")]).await;
    claims_where(claims, "local-1", 1, "the claim after it fulfilled", |cs| cs.iter().all(fulfilled)).await;
    let untouched = claims.get("held-0").await.expect("claim");
    assert!(untouched.status.is_none() && untouched.finalizers().is_empty(), "{untouched:?}");
    let resume = json!({"spec": {"paused": false}});
    clusters.patch("held", &PatchParams::default(), &Patch::Merge(&resume)).await.expect("resume");
    claims_where(claims, "held-", 1, "the claim fulfilled once its Cluster resumed", |cs| cs.iter().all(fulfilled))
        .await;
}

/// The address a fulfilled claim was given.
async fn address_of(client: &kube::Client, name: &str) -> String {
    let claims: Api<IPAddressClaim> = Api::namespaced(client.clone(), NS);
    let addresses: Api<IPAddress> = Api::namespaced(client.clone(), NS);
    eventually(&format!("claim {name} fulfilled"), WAIT, || async {
        let c = claims.get(name).await.ok().filter(fulfilled)?;
        Some(addresses.get(&address_ref(&c)?).await.ok()?.spec.address)
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_released_address_waits_out_the_pools_reuse_grace_period() {
    common::logs();
    // The controllers' clock is paused: the grace period passes only when the test says.
    let env = Env::start_paused().await;
    let client = env.client();
    let mut spec = pool_spec(&["10.9.0.10-10.9.0.12"], 24, "10.9.0.1", &[]);
    spec.address_reuse_grace_period_seconds = Some(60);
    let mut pool = InClusterIPPool::new("graceful", spec);
    pool.metadata.namespace = Some(NS.into());
    Api::<InClusterIPPool>::namespaced(client.clone(), NS).create(&PostParams::default(), &pool).await.expect("pool");
    let claims: Api<IPAddressClaim> = Api::namespaced(client.clone(), NS);
    let create = |name: &str| {
        let c = claim(NS, name, "InClusterIPPool", "graceful");
        let claims = claims.clone();
        async move { claims.create(&PostParams::default(), &c).await }
    };
    create("first").await.expect("claim");
    let released = address_of(&client, "first").await;
    assert_eq!(released, "10.9.0.10", "the lowest address");
    claims.delete("first", &DeleteParams::default()).await.expect("delete the claim");

    // Within the grace period the released address stays reserved: a new claim gets the
    // next one, and the deleted claim and its IPAddress stay.
    create("second").await.expect("claim");
    assert_eq!(address_of(&client, "second").await, "10.9.0.11");
    let held = claims.get_opt("first").await.expect("read").expect("the deleted claim is held");
    assert!(held.metadata.deletion_timestamp.is_some());
    let addresses: Api<IPAddress> = Api::namespaced(client.clone(), NS);
    assert!(addresses.get_opt("first").await.expect("read").is_some(), "its IPAddress is held");

    // Once it passed, the address is released and handed out again.
    env.clock.advance(Duration::from_secs(10 * 60));
    eventually("the deleted claim and its IPAddress gone", WAIT, || async {
        let gone = claims.get_opt("first").await.ok()?.is_none() && addresses.get_opt("first").await.ok()?.is_none();
        gone.then_some(())
    })
    .await;
    create("third").await.expect("claim");
    assert_eq!(address_of(&client, "third").await, released, "the released address, lowest again");
}
