//! `drydock migrate storage`: rewrites every object of every CRD whose storage holds
//! versions other than the current storage version, so that an old version can stop being
//! served (`drydock up --runtime-config GROUP/VERSION=false`) or be removed without
//! stranding data. As kube-storage-version-migrator does: each object is written back
//! unchanged (the server stores it in the storage version), then the CRD's
//! `status.storedVersions` is set to the storage version alone.

use std::fmt::Write as _;

use anyhow::Context;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams, PostParams};

use super::Connection;
use super::connect;

/// Attempts per object when it changes between the read and the write.
const CONFLICT_RETRIES: usize = 5;

#[derive(clap::Subcommand, Debug)]
pub enum MigrateCommand {
    /// Rewrite stored objects in their CRD's storage version.
    Storage {
        #[command(flatten)]
        conn: Connection,
        /// Only this CRD (`<plural>.<group>`); default: every CRD.
        #[arg(long, value_name = "NAME")]
        crd: Option<String>,
    },
}

/// Runs the command; returns the report printed.
pub async fn run(cmd: &MigrateCommand) -> anyhow::Result<String> {
    let MigrateCommand::Storage { conn, crd } = cmd;
    let (client, server) = connect::client(conn.kubeconfig.as_deref()).await?;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let list = crds.list(&ListParams::default()).await.map_err(|e| connect::explain(e, &server))?;
    let mut report = String::new();
    for c in list.items.iter().filter(|c| crd.as_deref().is_none_or(|n| c.metadata.name.as_deref() == Some(n))) {
        let name = c.metadata.name.clone().unwrap_or_default();
        let Some(storage) = c.spec.versions.iter().find(|v| v.storage).map(|v| v.name.clone()) else { continue };
        let stored = c.status.as_ref().and_then(|s| s.stored_versions.clone()).unwrap_or_default();
        if stored.iter().all(|v| *v == storage) {
            continue;
        }
        let count = rewrite_all(&client, c, &storage).await.with_context(|| format!("migrating {name}"))?;
        let status = serde_json::json!({"status": {"storedVersions": [storage]}});
        crds.patch_status(&name, &PatchParams::default(), &Patch::Merge(&status))
            .await
            .with_context(|| format!("recording {name} as stored in {storage} only"))?;
        let _ =
            writeln!(report, "{name}: {count} objects rewritten in {storage} (was stored as {})", stored.join(", "));
    }
    if report.is_empty() {
        report.push_str("every CRD's objects are stored in its storage version; nothing to migrate\n");
    }
    Ok(report)
}

/// Writes back every object of `crd` read in its storage version; returns how many.
async fn rewrite_all(client: &kube::Client, crd: &CustomResourceDefinition, storage: &str) -> anyhow::Result<usize> {
    let ar = ApiResource {
        group: crd.spec.group.clone(),
        version: storage.to_string(),
        api_version: format!("{}/{storage}", crd.spec.group),
        kind: crd.spec.names.kind.clone(),
        plural: crd.spec.names.plural.clone(),
    };
    let all: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
    let objects = all.list(&ListParams::default()).await?;
    for obj in &objects.items {
        let name = obj.metadata.name.clone().unwrap_or_default();
        let api: Api<DynamicObject> = match obj.metadata.namespace.as_deref() {
            Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
            None => Api::all_with(client.clone(), &ar),
        };
        rewrite(&api, obj.clone(), &name).await.with_context(|| format!("rewriting {name}"))?;
    }
    Ok(objects.items.len())
}

/// Writes `obj` back unchanged; on a conflict reads it again and retries.
async fn rewrite(api: &Api<DynamicObject>, mut obj: DynamicObject, name: &str) -> anyhow::Result<()> {
    for _ in 0..CONFLICT_RETRIES {
        match api.replace(name, &PostParams::default(), &obj).await {
            Ok(_) => return Ok(()),
            Err(kube::Error::Api(e)) if e.code == 409 => match api.get_opt(name).await? {
                Some(fresh) => obj = fresh,
                None => return Ok(()),
            },
            Err(kube::Error::Api(e)) if e.code == 404 => return Ok(()),
            Err(e) => return Err(e.into()),
        }
    }
    anyhow::bail!("{name} kept changing; run the migration again")
}
