//! Logging setup: `tracing` events to stderr, as text for people or as one JSON object per
//! line for log collectors.
//!
//! What is logged is chosen, most specific first, by:
//! 1. `RUST_LOG`, an `EnvFilter` directive list (`debug`, `info,drydock_controllers=debug`,
//!    `warn,drydock_apiserver::http::access=debug`, ...): full control, libraries included;
//! 2. `DRYDOCK_LOG`, the same syntax, used only when `RUST_LOG` is unset or empty;
//! 3. `--log-level`: drydock's own modules at that level, libraries at `warn` (or `error`).
//!
//! Text output is coloured only when stderr is a terminal and `NO_COLOR` is unset or empty.

use std::ffi::OsStr;
use std::io::IsTerminal as _;

use tracing_subscriber::EnvFilter;

/// The variables that set the filter, in order of precedence.
pub const FILTER_VARS: [&str; 2] = ["RUST_LOG", "DRYDOCK_LOG"];

/// Logging flags of commands that run drydock's server and controllers.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct LogArgs {
    /// Least severe level logged by drydock: error, warn, info, debug or trace (libraries log
    /// warnings and errors) [default: info; warn with --demo]. `RUST_LOG` (or `DRYDOCK_LOG`),
    /// when set, replaces it with its own filter.
    #[arg(long, value_enum)]
    pub log_level: Option<LogLevel>,
    /// `text` for people; `json`: one object per line (timestamp, level, target, fields, spans).
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

impl LogLevel {
    fn as_str(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warn => "warn",
            Self::Info => "info",
            Self::Debug => "debug",
            Self::Trace => "trace",
        }
    }

    /// drydock's crates (every target starting with `drydock`) at this level, the rest at
    /// `warn`, or `error` when that is the level.
    fn directives(self) -> String {
        let libraries = if self == Self::Error { "error" } else { "warn" };
        format!("{libraries},drydock={}", self.as_str())
    }
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// (The parse error is in the message, not a source: it would be printed twice.)
    #[error("{var}={value:?} is not a valid log filter: {reason}")]
    Filter { var: &'static str, value: String, reason: tracing_subscriber::filter::ParseError },
    #[error("{var} is not valid UTF-8")]
    NotUnicode { var: &'static str },
}

/// Where the filter came from, and its directives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterSpec {
    pub source: &'static str,
    pub directives: String,
}

impl FilterSpec {
    pub fn env_filter(&self) -> Result<EnvFilter, Error> {
        EnvFilter::builder().parse(&self.directives).map_err(|reason| Error::Filter {
            var: self.source,
            value: self.directives.clone(),
            reason,
        })
    }
}

/// The filter from the first non-empty of `vars` (values as `std::env::var_os` returns
/// them), else from `level`.
pub fn filter_spec(vars: &[(&'static str, Option<&OsStr>)], level: LogLevel) -> Result<FilterSpec, Error> {
    for (var, value) in vars {
        let Some(value) = value else { continue };
        let value = value.to_str().ok_or(Error::NotUnicode { var })?;
        if !value.trim().is_empty() {
            return Ok(FilterSpec { source: var, directives: value.to_string() });
        }
    }
    Ok(FilterSpec { source: "--log-level", directives: level.directives() })
}

/// Whether text output is coloured: only on a terminal, and never when `NO_COLOR` is set
/// to anything but the empty string (<https://no-color.org>).
pub fn use_colour(is_terminal: bool, no_color: Option<&OsStr>) -> bool {
    is_terminal && no_color.is_none_or(OsStr::is_empty)
}

/// Installs the process-wide subscriber, at `default_level` unless `args` or the
/// environment say otherwise. A second call keeps the first subscriber (tests start
/// several instances in one process).
pub fn init(args: &LogArgs, default_level: LogLevel) -> Result<(), Error> {
    let values: Vec<_> = FILTER_VARS.iter().map(|v| (*v, std::env::var_os(v))).collect();
    let vars: Vec<_> = values.iter().map(|(v, value)| (*v, value.as_deref())).collect();
    let spec = filter_spec(&vars, args.log_level.unwrap_or(default_level))?;
    let filter = spec.env_filter()?;
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let installed = match args.log_format {
        LogFormat::Text => {
            let colour = use_colour(std::io::stderr().is_terminal(), std::env::var_os("NO_COLOR").as_deref());
            builder.with_ansi(colour).try_init()
        }
        LogFormat::Json => builder.json().with_ansi(false).with_current_span(true).with_span_list(true).try_init(),
    };
    if installed.is_ok() {
        tracing::debug!(source = spec.source, filter = %spec.directives, "log filter");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(rust_log: Option<&str>, drydock_log: Option<&str>, level: LogLevel) -> FilterSpec {
        let vars = [("RUST_LOG", rust_log.map(OsStr::new)), ("DRYDOCK_LOG", drydock_log.map(OsStr::new))];
        filter_spec(&vars, level).expect("filter")
    }

    #[test]
    fn rust_log_wins_over_drydock_log_and_the_flag() {
        let s = spec(Some("debug"), Some("warn"), LogLevel::Error);
        assert_eq!(s, FilterSpec { source: "RUST_LOG", directives: "debug".into() });
        let s = spec(None, Some("trace"), LogLevel::Error);
        assert_eq!(s, FilterSpec { source: "DRYDOCK_LOG", directives: "trace".into() });
        let s = spec(Some("  "), Some(""), LogLevel::Debug);
        assert_eq!(s, FilterSpec { source: "--log-level", directives: "warn,drydock=debug".into() });
        assert_eq!(spec(None, None, LogLevel::Error).directives, "error,drydock=error");
    }

    #[test]
    fn every_level_gives_a_valid_filter() {
        for level in [LogLevel::Error, LogLevel::Warn, LogLevel::Info, LogLevel::Debug, LogLevel::Trace] {
            assert!(spec(None, None, level).env_filter().is_ok(), "{level:?}");
        }
    }

    #[test]
    fn invalid_filter_is_an_error_naming_the_variable() {
        let err = spec(Some("info,drydock=loud"), None, LogLevel::Info).env_filter().expect_err("invalid");
        assert!(err.to_string().starts_with("RUST_LOG=\"info,drydock=loud\" is not a valid log filter"), "{err}");
    }

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(use_colour(true, None));
        assert!(use_colour(true, Some(OsStr::new(""))));
        assert!(!use_colour(true, Some(OsStr::new("1"))));
        assert!(!use_colour(false, None));
    }
}
