//! `--store` and the `--etcd-*` flags (named as kube-apiserver's): where a drydock keeps its
//! objects, for `drydock up` and the benchmarks.

use std::path::PathBuf;

use clap::Args;
use drydock_apiserver::store::EtcdOptions;

#[derive(Args, Debug, Clone)]
pub struct StoreArgs {
    /// Where objects are kept: `sqlite` (the embedded store in the data dir) or
    /// `etcd://HOST:PORT[,HOST:PORT...]` (an etcd v3 cluster, which several drydock replicas
    /// may share).
    #[arg(long, value_name = "sqlite|etcd://HOST:PORT,...", default_value = "sqlite")]
    pub store: String,
    /// Every key drydock writes in etcd starts with this.
    #[arg(long, value_name = "PREFIX", default_value = "/drydock")]
    pub etcd_prefix: String,
    /// CA bundle verifying the etcd members' certificates (etcd is then spoken to over https).
    #[arg(long, value_name = "FILE")]
    pub etcd_cafile: Option<PathBuf>,
    /// Client certificate presented to etcd.
    #[arg(long, value_name = "FILE", requires = "etcd_keyfile")]
    pub etcd_certfile: Option<PathBuf>,
    /// Key of the client certificate presented to etcd.
    #[arg(long, value_name = "FILE", requires = "etcd_certfile")]
    pub etcd_keyfile: Option<PathBuf>,
}

impl Default for StoreArgs {
    fn default() -> Self {
        Self {
            store: "sqlite".into(),
            etcd_prefix: "/drydock".into(),
            etcd_cafile: None,
            etcd_certfile: None,
            etcd_keyfile: None,
        }
    }
}

impl StoreArgs {
    /// The etcd store `--store` names, if it names one.
    pub fn etcd(&self) -> anyhow::Result<Option<EtcdOptions>> {
        if self.store == "sqlite" {
            return Ok(None);
        }
        let mut opts = EtcdOptions::from_url(&self.store)?;
        opts.prefix = self.etcd_prefix.clone();
        opts.ca_file = self.etcd_cafile.clone();
        opts.cert_file = self.etcd_certfile.clone();
        opts.key_file = self.etcd_keyfile.clone();
        Ok(Some(opts))
    }

    /// For a benchmark: on etcd, keys under a prefix of their own, so that every run
    /// starts from an empty store as it does on SQLite.
    pub fn fresh_etcd(&self) -> anyhow::Result<Option<EtcdOptions>> {
        Ok(self.etcd()?.map(|mut o| {
            o.prefix = format!("{}/bench-{}", o.prefix.trim_end_matches('/'), uuid::Uuid::new_v4());
            o
        }))
    }
}
