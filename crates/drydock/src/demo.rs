//! `drydock up --demo`: creates a small cluster on the in-memory provider and shows its
//! progress until every machine runs and every node is Ready.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use kube::api::{Api, DynamicObject, ListParams};

use crate::commands::generate::{GenerateClusterArgs, render};
use crate::commands::{Global, apply, connect};

const NAME: &str = "demo";

pub async fn run(kubeconfig: &Path, data_dir: &Path) -> anyhow::Result<()> {
    let args = GenerateClusterArgs {
        name: NAME.into(),
        kubernetes_version: "v1.31.2".into(),
        control_plane_machine_count: 3,
        worker_machine_count: 3,
        target_namespace: "default".into(),
        startup_duration: "2s".into(),
    };
    let manifest = data_dir.join("demo-cluster.yaml");
    std::fs::write(&manifest, render(&args)).with_context(|| format!("writing {}", manifest.display()))?;
    let g = Global { kubeconfig: Some(kubeconfig.to_path_buf()), ..Global::default() };
    apply::apply(&g, &manifest.to_string_lossy()).await?;
    let (client, _) = connect::client(Some(kubeconfig)).await?;
    let machines: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "default",
        &drydock_controllers::external::api_resource("cluster.x-k8s.io/v1beta2", "Machine"),
    );
    let want = (args.control_plane_machine_count + args.worker_machine_count) as u64;
    let bar = indicatif::ProgressBar::new(want);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} cluster demo: {pos}/{len} machines running [{bar:30}] {elapsed} {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let started = Instant::now();
    loop {
        let list = machines.list(&ListParams::default().labels("cluster.x-k8s.io/cluster-name=demo")).await?;
        let running = list.items.iter().filter(|m| m.data["status"]["phase"] == "Running").count() as u64;
        bar.set_position(running);
        if running >= want {
            break;
        }
        bar.tick();
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    bar.finish_with_message("ready");
    let g = Global { kubeconfig: Some(kubeconfig.to_path_buf()), ..Global::default() };
    let kc = crate::commands::get::kubeconfig(&g, NAME).await?;
    let path = data_dir.join("demo.kubeconfig");
    // It holds the cluster's client key.
    crate::kubeconfig::write(&path, &kc)?;
    println!(
        "cluster demo is ready after {:.1}s (3 control plane machines, 3 workers)\n  drydock describe cluster demo --kubeconfig {}\n  kubectl --kubeconfig {} get nodes",
        started.elapsed().as_secs_f64(),
        kubeconfig.display(),
        path.display()
    );
    Ok(())
}
