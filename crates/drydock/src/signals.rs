//! How `drydock up` and `drydock controllers` stop: the first SIGINT or SIGTERM starts a
//! shutdown bounded by a deadline, a second one exits at once.

use std::time::Duration;

/// The longest a shutdown takes: past it the process exits whatever is still running
/// (the store is crash-safe, so this loses nothing acknowledged).
const HARD_DEADLINE: Duration = Duration::from_secs(4);

/// Exit code of a shutdown cut short by its deadline.
const DEADLINE_EXIT: i32 = 1;

/// Listens for SIGINT and SIGTERM from now on. The returned future resolves on the first
/// one, which starts a shutdown bounded by [`HARD_DEADLINE`]; a second one exits at once.
pub(crate) fn shutdown_on_signals() -> std::io::Result<impl std::future::Future<Output = ()> + Send + 'static> {
    let mut signals = Signals::new()?;
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let (name, _) = signals.next().await;
        tracing::info!(signal = name, deadline = ?HARD_DEADLINE, "shutdown: started; a second signal exits at once");
        let _ = tx.send(());
        spawn_watchdog();
        let (name, code) = signals.next().await;
        tracing::warn!(signal = name, "shutdown: second signal, exiting at once");
        std::process::exit(code);
    });
    Ok(async move {
        let _ = rx.await;
    })
}

/// Ends the process if the shutdown outlives [`HARD_DEADLINE`]. A thread, not a task, so
/// that nothing stuck on the runtime can hold it up.
fn spawn_watchdog() {
    let spawned = std::thread::Builder::new().name("shutdown-deadline".into()).spawn(|| {
        std::thread::sleep(HARD_DEADLINE);
        tracing::error!(deadline = ?HARD_DEADLINE, "shutdown: deadline passed, exiting");
        std::process::exit(DEADLINE_EXIT);
    });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "shutdown: no deadline thread; the shutdown is not bounded");
    }
}

/// The signals that stop drydock, each with the exit code of a process it ended.
#[cfg(unix)]
struct Signals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
}

#[cfg(unix)]
impl Signals {
    fn new() -> std::io::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Self { interrupt: signal(SignalKind::interrupt())?, terminate: signal(SignalKind::terminate())? })
    }

    async fn next(&mut self) -> (&'static str, i32) {
        tokio::select! {
            _ = self.interrupt.recv() => ("SIGINT", 130),
            _ = self.terminate.recv() => ("SIGTERM", 143),
        }
    }
}

#[cfg(not(unix))]
struct Signals;

#[cfg(not(unix))]
impl Signals {
    fn new() -> std::io::Result<Self> {
        Ok(Self)
    }

    async fn next(&mut self) -> (&'static str, i32) {
        let _ = tokio::signal::ctrl_c().await;
        ("ctrl-c", 130)
    }
}
