//! The fleet's view of its Machines, kept from one watch, and what it tells a chaos run.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use futures::StreamExt;
use kube::api::Api;
use kube::runtime::watcher;
use parking_lot::Mutex;

use super::{Progress, chaos};

/// Keeps `progress.machines` current from a watch of the fleet's Machines, in the version they
/// are stored in (a watch in another version would charge its conversion to the fleet).
/// When the watch has to list again, Machines that went meanwhile count as deleted.
pub(super) async fn watch_machines(
    machines: Api<drydock_api::capi::core::v1beta2::Machine>,
    progress: Arc<Mutex<Progress>>,
    chaos: Option<Arc<chaos::Chaos>>,
) {
    // The last state of each Machine, and the names a relist brought, for chaos runs.
    let mut last: HashMap<String, drydock_api::capi::core::v1beta2::Machine> = HashMap::new();
    let mut relisted: Option<HashSet<String>> = None;
    watcher(machines, watcher::Config::default())
        .for_each(|ev| {
            let mut gone = Vec::new();
            match &ev {
                Ok(watcher::Event::Init) => relisted = Some(HashSet::new()),
                Ok(watcher::Event::InitApply(m)) => {
                    if let Some(seen) = relisted.as_mut() {
                        seen.insert(m.metadata.name.clone().unwrap_or_default());
                    }
                }
                Ok(watcher::Event::InitDone) => {
                    let seen = relisted.take().unwrap_or_default();
                    let p = progress.lock();
                    gone = p.machines.keys().filter(|n| !seen.contains(*n)).cloned().collect();
                }
                _ => {}
            }
            if let Some(c) = &chaos {
                match &ev {
                    Ok(watcher::Event::Apply(m) | watcher::Event::InitApply(m)) => {
                        c.observe(m, false);
                        last.insert(m.metadata.name.clone().unwrap_or_default(), m.clone());
                    }
                    Ok(watcher::Event::Delete(m)) => {
                        c.observe(m, true);
                        last.remove(&m.metadata.name.clone().unwrap_or_default());
                    }
                    _ => {}
                }
                for m in gone.iter().filter_map(|n| last.remove(n)) {
                    c.observe(&m, true);
                }
            }
            let mut p = progress.lock();
            match ev {
                Ok(watcher::Event::Apply(m) | watcher::Event::InitApply(m)) => {
                    let name = m.metadata.name.clone().unwrap_or_default();
                    let phase = m.status.as_ref().and_then(|s| s.phase.clone()).unwrap_or_default();
                    let version = m.spec.version.clone().unwrap_or_default();
                    p.machines.insert(name, (m.spec.cluster_name.clone(), phase, version));
                }
                Ok(watcher::Event::Delete(m)) => {
                    p.machines.remove(&m.metadata.name.clone().unwrap_or_default());
                }
                _ => {}
            }
            for name in &gone {
                p.machines.remove(name);
            }
            futures::future::ready(())
        })
        .await;
}
