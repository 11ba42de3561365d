//! The connection to an etcd cluster: one gRPC client per member, and the member in use
//! moves on when one stops answering, so the store rides out the loss of a member.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::Context as _;
use etcdv3client::grpc::TonicClient;
use etcdv3client::pb::{self, compare, request_op, response_op};
use etcdv3client::{Client, ErrKind};
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity};

/// Where the etcd cluster is and how to reach it (kube-apiserver's `--etcd-*` flags).
#[derive(Clone, Debug, Default)]
pub struct EtcdOptions {
    /// Client URLs of the members (`http://` or `https://`).
    pub endpoints: Vec<String>,
    /// Every key drydock writes starts with this.
    pub prefix: String,
    /// CA bundle that verifies the members' serving certificates.
    pub ca_file: Option<PathBuf>,
    /// Client certificate and key presented to the members.
    pub cert_file: Option<PathBuf>,
    pub key_file: Option<PathBuf>,
}

impl EtcdOptions {
    /// Parses `etcd://HOST:PORT[,HOST:PORT...]`: https when a CA is given, http otherwise.
    pub fn from_url(url: &str) -> anyhow::Result<Self> {
        let hosts = url
            .strip_prefix("etcd://")
            .with_context(|| format!("{url:?} is not an etcd store URL (etcd://HOST:PORT[,HOST:PORT...])"))?;
        let endpoints: Vec<String> =
            hosts.split(',').map(str::trim).filter(|h| !h.is_empty()).map(ToString::to_string).collect();
        anyhow::ensure!(!endpoints.is_empty(), "{url:?} names no etcd member");
        Ok(Self { endpoints, prefix: "/drydock".into(), ..Self::default() })
    }

    fn url(&self, host: &str) -> String {
        if host.contains("://") {
            return host.to_string();
        }
        let scheme = if self.ca_file.is_some() { "https" } else { "http" };
        format!("{scheme}://{host}")
    }

    fn tls(&self) -> anyhow::Result<Option<ClientTlsConfig>> {
        let Some(ca) = &self.ca_file else { return Ok(None) };
        let read = |p: &PathBuf| std::fs::read(p).with_context(|| format!("reading {}", p.display()));
        let mut tls = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(read(ca)?));
        match (&self.cert_file, &self.key_file) {
            (Some(cert), Some(key)) => tls = tls.identity(Identity::from_pem(read(cert)?, read(key)?)),
            (None, None) => {}
            _ => anyhow::bail!("an etcd client certificate needs both --etcd-certfile and --etcd-keyfile"),
        }
        Ok(Some(tls))
    }
}

/// How long one call to a member may take before the next member is tried.
const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// Attempts of one call even when there are fewer members: a dropped connection is
/// re-established on the next.
const MIN_ATTEMPTS: usize = 3;

/// Clients of every member; calls go to the current one and move on when it fails.
pub struct Members {
    clients: Vec<(String, Client<TonicClient>)>,
    current: AtomicUsize,
}

/// What a guarded transaction does when its guard holds.
#[derive(Clone, Copy)]
pub enum Op<'a> {
    Put(&'a [u8]),
    Delete,
    /// Nothing: it only checks the guard (no revision is used).
    Check,
}

/// The outcome of a guarded write.
pub enum TxnOutcome {
    /// Done at this revision; for a deletion, the value deleted.
    Done { rev: u64, deleted: Option<Vec<u8>> },
    /// The guard failed; the key's current value and mod revision, if it exists.
    Refused { current: Option<(Vec<u8>, u64)> },
}

impl Members {
    pub fn connect(opts: &EtcdOptions) -> anyhow::Result<Self> {
        let tls = opts.tls()?;
        let mut clients = Vec::new();
        for host in &opts.endpoints {
            let url = opts.url(host);
            let mut ep = Endpoint::from_shared(url.clone())
                .with_context(|| format!("etcd endpoint {url:?}"))?
                .connect_timeout(Duration::from_secs(2))
                .tcp_keepalive(Some(Duration::from_secs(10)))
                // A busy machine may answer pings late: only a long silence means a dead member.
                .http2_keep_alive_interval(Duration::from_secs(10))
                .keep_alive_timeout(Duration::from_secs(20));
            if let Some(tls) = &tls {
                ep = ep.tls_config(tls.clone()).with_context(|| format!("TLS for {url}"))?;
            }
            clients.push((url, Client::with_service(TonicClient::new(ep.connect_lazy()))));
        }
        anyhow::ensure!(!clients.is_empty(), "no etcd member given");
        Ok(Self { clients, current: AtomicUsize::new(0) })
    }

    /// Runs `call` against the current member, then the next ones in turn while the failure
    /// is the member's (unreachable, no leader, timed out, connection lost), not the
    /// request's: every member once, and at least [`MIN_ATTEMPTS`] times in all.
    pub async fn call<T, F, Fut>(&self, what: &str, call: F) -> anyhow::Result<T>
    where
        F: Fn(Client<TonicClient>) -> Fut,
        Fut: std::future::Future<Output = Result<T, etcdv3client::Error>>,
    {
        let n = self.clients.len();
        let start = self.current.load(Ordering::Relaxed);
        let mut last = None;
        for i in 0..n.max(MIN_ATTEMPTS) {
            let idx = (start + i) % n;
            let (url, client) = &self.clients[idx];
            let started = std::time::Instant::now();
            let result = tokio::time::timeout(CALL_TIMEOUT, call(client.clone())).await;
            crate::metrics::etcd_request(what, started.elapsed(), !matches!(result, Ok(Ok(_))));
            match result {
                Ok(Ok(v)) => {
                    self.current.store(idx, Ordering::Relaxed);
                    return Ok(v);
                }
                Ok(Err(e)) if !member_failure(&e) => return Err(anyhow::anyhow!("etcd {what} at {url}: {e}")),
                Ok(Err(e)) => {
                    tracing::warn!(member = %url, error = %e, "etcd {what} failed; trying the next member");
                    last = Some(anyhow::anyhow!("etcd {what} at {url}: {e}"));
                }
                Err(_) => {
                    tracing::warn!(member = %url, "etcd {what} timed out; trying the next member");
                    last = Some(anyhow::anyhow!("etcd {what} at {url}: no answer in {CALL_TIMEOUT:?}"));
                }
            }
        }
        Err(last.unwrap_or_else(|| anyhow::anyhow!("etcd {what}: no member")))
    }

    /// A client of the current member, for the watch stream; `skip` moves past a member
    /// whose stream just failed.
    pub fn member(&self, skip: bool) -> (String, Client<TonicClient>) {
        let n = self.clients.len();
        let idx = if skip {
            let next = (self.current.load(Ordering::Relaxed) + 1) % n;
            self.current.store(next, Ordering::Relaxed);
            next
        } else {
            self.current.load(Ordering::Relaxed) % n
        };
        self.clients[idx].clone()
    }

    /// etcd's current revision, read linearizably (a read through the leader).
    pub async fn revision(&self, probe: &[u8]) -> anyhow::Result<u64> {
        let req = pb::RangeRequest { key: probe.to_vec(), keys_only: true, count_only: true, ..Default::default() };
        let resp = self
            .call("range", |mut c| {
                let req = req.clone();
                async move { c.kv.range(req).await }
            })
            .await?;
        Ok(header_rev(resp.header.as_ref()))
    }

    /// Writes `key` unconditionally; returns the revision of the write.
    pub async fn put(&self, key: &[u8]) -> anyhow::Result<u64> {
        let req = pb::PutRequest { key: key.to_vec(), ..Default::default() };
        let resp = self
            .call("put", |mut c| {
                let req = req.clone();
                async move { c.kv.put(req).await }
            })
            .await?;
        Ok(header_rev(resp.header.as_ref()))
    }

    /// Every key under `prefix` at one revision, page by page; returns that revision.
    pub async fn load(
        &self,
        prefix: &[u8],
        mut f: impl FnMut(pb::KeyValue) -> anyhow::Result<()>,
    ) -> anyhow::Result<u64> {
        let end = prefix_end(prefix);
        let mut from = prefix.to_vec();
        let mut at = 0i64;
        loop {
            let req = pb::RangeRequest {
                key: from.clone(),
                range_end: end.clone(),
                limit: 2_000,
                revision: at,
                ..Default::default()
            };
            let resp = self
                .call("range", |mut c| {
                    let req = req.clone();
                    async move { c.kv.range(req).await }
                })
                .await?;
            if at == 0 {
                at = header_rev(resp.header.as_ref()) as i64;
            }
            let last = resp.kvs.last().map(|kv| kv.key.clone());
            for kv in resp.kvs {
                f(kv)?;
            }
            match last {
                Some(mut k) if resp.more => {
                    // The next page starts just after the last key.
                    k.push(0);
                    from = k;
                }
                _ => return Ok(at as u64),
            }
        }
    }

    /// Does `op` on `key` if the key is absent (`expect == None`) or last modified at
    /// `expect`.
    pub async fn guarded(&self, key: &[u8], expect: Option<u64>, op: Op<'_>) -> anyhow::Result<TxnOutcome> {
        let guard = match expect {
            None => pb::Compare {
                result: compare::CompareResult::Equal as i32,
                target: compare::CompareTarget::Version as i32,
                key: key.to_vec(),
                target_union: Some(compare::TargetUnion::Version(0)),
                ..Default::default()
            },
            Some(rev) => pb::Compare {
                result: compare::CompareResult::Equal as i32,
                target: compare::CompareTarget::Mod as i32,
                key: key.to_vec(),
                target_union: Some(compare::TargetUnion::ModRevision(rev as i64)),
                ..Default::default()
            },
        };
        let op = match op {
            Op::Put(v) => Some(request_op::Request::RequestPut(pb::PutRequest {
                key: key.to_vec(),
                value: v.to_vec(),
                ..Default::default()
            })),
            Op::Delete => Some(request_op::Request::RequestDeleteRange(pb::DeleteRangeRequest {
                key: key.to_vec(),
                prev_kv: true,
                ..Default::default()
            })),
            Op::Check => None,
        };
        let read = request_op::Request::RequestRange(pb::RangeRequest { key: key.to_vec(), ..Default::default() });
        let req = pb::TxnRequest {
            compare: vec![guard],
            success: op.into_iter().map(|op| pb::RequestOp { request: Some(op) }).collect(),
            failure: vec![pb::RequestOp { request: Some(read) }],
        };
        let resp = self
            .call("txn", |mut c| {
                let req = req.clone();
                async move { c.kv.txn(req).await }
            })
            .await?;
        let rev = header_rev(resp.header.as_ref());
        let first = resp.responses.into_iter().next().and_then(|r| r.response);
        if resp.succeeded {
            let deleted = match first {
                Some(response_op::Response::ResponseDeleteRange(d)) => d.prev_kvs.into_iter().next().map(|kv| kv.value),
                _ => None,
            };
            return Ok(TxnOutcome::Done { rev, deleted });
        }
        let current = match first {
            Some(response_op::Response::ResponseRange(r)) => {
                r.kvs.into_iter().next().map(|kv| (kv.value, kv.mod_revision as u64))
            }
            _ => None,
        };
        Ok(TxnOutcome::Refused { current })
    }

    /// Compacts etcd's history up to `rev`; an already compacted revision is no failure.
    pub async fn compact(&self, rev: u64) -> anyhow::Result<()> {
        let req = pb::CompactionRequest { revision: rev as i64, physical: false };
        match self.call("compaction", |mut c| async move { c.kv.compact(req).await }).await {
            Ok(_) => Ok(()),
            Err(e) if e.to_string().contains("compacted") => Ok(()),
            Err(e) => Err(e),
        }
    }
}

/// Whether a failure is the member's (another may answer) rather than the request's.
fn member_failure(e: &etcdv3client::Error) -> bool {
    matches!(
        e.kind(),
        ErrKind::Grpc
            | ErrKind::ConnectFailed
            | ErrKind::NoLeader
            | ErrKind::NotLeader
            | ErrKind::LeaderChanged
            | ErrKind::Stopped
            | ErrKind::Timeout
            | ErrKind::TimeoutDueToLeaderFail
            | ErrKind::TimeoutDueToConnectionLost
            | ErrKind::TimeoutWaitAppliedIndex
            | ErrKind::Unhealthy
            | ErrKind::TooManyRequests
    )
}

pub fn header_rev(h: Option<&pb::ResponseHeader>) -> u64 {
    h.map_or(0, |h| h.revision.max(0) as u64)
}

/// The first key after every key that starts with `prefix`.
pub fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}
