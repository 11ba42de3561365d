//! Measurement helpers: latency percentiles, process memory and CPU time.

use std::time::Duration;

/// Latencies of one operation kind.
#[derive(Default, Clone)]
pub struct Latencies(Vec<Duration>);

impl Latencies {
    pub fn push(&mut self, d: Duration) {
        self.0.push(d);
    }
    pub fn extend(&mut self, other: Latencies) {
        self.0.extend(other.0);
    }
    /// The q-quantile (0..=1), or zero when empty.
    pub fn quantile(&mut self, q: f64) -> Duration {
        if self.0.is_empty() {
            return Duration::ZERO;
        }
        self.0.sort_unstable();
        let idx = ((self.0.len() as f64 - 1.0) * q).round() as usize;
        self.0[idx.min(self.0.len() - 1)]
    }
}

fn status_kib(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Peak resident set size of this process, in MiB.
pub fn peak_rss_mib() -> f64 {
    status_kib("VmHWM:").map_or(0.0, |k| k as f64 / 1024.0)
}

/// Current resident set size, in MiB.
pub fn rss_mib() -> f64 {
    status_kib("VmRSS:").map_or(0.0, |k| k as f64 / 1024.0)
}

/// User + system CPU seconds used by this process so far.
pub fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
        return 0.0;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // `rest` starts at field 3 (state), so utime (14) is index 11 and stime (15) index 12.
    (ticks(11) + ticks(12)) / 100.0
}

pub fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles() {
        let mut l = Latencies::default();
        for i in 1..=100 {
            l.push(Duration::from_millis(i));
        }
        assert_eq!(l.quantile(0.5), Duration::from_millis(51));
        assert_eq!(l.quantile(0.99), Duration::from_millis(99));
        assert!(cpu_seconds() >= 0.0);
        assert!(peak_rss_mib() > 0.0);
    }
}
