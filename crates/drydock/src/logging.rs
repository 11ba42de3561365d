//! Logging setup: `tracing` to stderr, filtered by `DRYDOCK_LOG` (e.g. `debug`,
//! `drydock_controllers=debug,info`).

pub fn init(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("DRYDOCK_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}
