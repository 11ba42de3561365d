//! `drydock bench compare`: the fleet bench of this build and of another binary, run
//! alternately in one session. Runs of one binary vary by 10–20% on a shared machine, and
//! the machine itself drifts over a series; alternating (and switching which binary goes
//! first each round) lets the ratio of the medians say what changed, and the median of
//! each round's own ratio (its two runs meet the machine in the same state) says it with
//! the drift taken out.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use clap::Args;
use serde::{Deserialize, Serialize};

use super::fleet::PhaseReport;

#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    /// The other drydock binary (a release build of another commit, say).
    #[arg(long)]
    pub against: PathBuf,
    /// Runs of each binary.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: u32,
    /// Write every run's figures and the medians as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Arguments of `drydock bench` given to both binaries, after `--` (`-- --clusters 1000`).
    #[arg(last = true)]
    pub bench_args: Vec<String>,
}

/// The figures of one run, from its `--json` results (the provisioning phase).
#[derive(Debug, Clone, Serialize)]
struct Run {
    binary: Side,
    round: u32,
    seconds: f64,
    cpu_seconds: f64,
    writes_per_machine: f64,
    peak_rss_mib: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Side {
    This,
    Other,
}

/// The part of a run's `--json` results the comparison reads.
#[derive(Deserialize)]
struct Results {
    peak_rss_mib: f64,
    phases: Vec<PhaseReport>,
}

pub async fn main(a: CompareArgs) -> anyhow::Result<()> {
    if a.bench_args.iter().any(|s| s == "--json" || s.starts_with("--json=")) {
        bail!("--json belongs before `--`: each run's results are collected by the comparison");
    }
    let this = std::env::current_exe().context("finding this drydock binary")?;
    let dir = tempfile::tempdir()?;
    let mut runs = Vec::new();
    for round in 1..=a.rounds {
        // Whichever goes first in a round meets the machine as the previous run left it.
        let order = if round % 2 == 1 { [Side::This, Side::Other] } else { [Side::Other, Side::This] };
        for side in order {
            let exe = if side == Side::This { this.as_path() } else { a.against.as_path() };
            let out = dir.path().join(format!("{round}-{}.json", side.name()));
            let run = run_once(exe, &a.bench_args, &out, side, round).await?;
            println!(
                "round {round} {:<5} {:>6.1} s  {:>6.1} CPU s  {:>5.1} writes/machine  {:>6.0} MiB",
                side.name(),
                run.seconds,
                run.cpu_seconds,
                run.writes_per_machine,
                run.peak_rss_mib
            );
            runs.push(run);
        }
    }
    let summary = summarize(&runs);
    println!("{}", table(&summary));
    if let Some(path) = &a.json {
        let doc = serde_json::json!({"runs": runs, "medians": summary});
        std::fs::write(path, serde_json::to_vec_pretty(&doc)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Self::This => "this",
            Self::Other => "other",
        }
    }
}

async fn run_once(exe: &Path, args: &[String], out: &Path, binary: Side, round: u32) -> anyhow::Result<Run> {
    let results: Results = super::run_child(exe, args, out).await?;
    let Some(p) = results.phases.first() else {
        bail!("{} reported no phase", exe.display());
    };
    Ok(Run {
        binary,
        round,
        seconds: p.seconds,
        cpu_seconds: p.cpu_seconds,
        writes_per_machine: p.writes_per_machine,
        peak_rss_mib: results.peak_rss_mib,
    })
}

/// One figure's medians over each binary's runs, this binary's over the other's, and the
/// median of the rounds' ratios.
#[derive(Debug, Serialize)]
struct Median {
    figure: &'static str,
    this: f64,
    other: f64,
    ratio: f64,
    paired_ratio: f64,
}

/// A figure's name and how to read it from a run.
type Figure = (&'static str, fn(&Run) -> f64);

fn summarize(runs: &[Run]) -> Vec<Median> {
    let figures: [Figure; 4] = [
        ("seconds", |r| r.seconds),
        ("cpu_seconds", |r| r.cpu_seconds),
        ("writes_per_machine", |r| r.writes_per_machine),
        ("peak_rss_mib", |r| r.peak_rss_mib),
    ];
    figures
        .into_iter()
        .map(|(figure, of)| {
            let median_of = |side| median(runs.iter().filter(|r| r.binary == side).map(of).collect());
            let (this, other) = (median_of(Side::This), median_of(Side::Other));
            let of_round = |round, side| runs.iter().find(|r| r.round == round && r.binary == side).map(of);
            let mut rounds: Vec<u32> = runs.iter().map(|r| r.round).collect();
            rounds.dedup();
            let paired = rounds
                .into_iter()
                .filter_map(|round| Some(ratio(of_round(round, Side::This)?, of_round(round, Side::Other)?)))
                .collect();
            Median { figure, this, other, ratio: ratio(this, other), paired_ratio: median(paired) }
        })
        .collect()
}

fn ratio(this: f64, other: f64) -> f64 {
    if other > 0.0 { this / other } else { f64::NAN }
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len() % 2 == 1 { v[mid] } else { (v[mid - 1] + v[mid]) / 2.0 }
}

fn table(medians: &[Median]) -> comfy_table::Table {
    let mut table = comfy_table::Table::new();
    table.load_preset(comfy_table::presets::NOTHING);
    table.set_header(["MEDIAN", "THIS", "OTHER", "THIS/OTHER", "PER ROUND"]);
    for m in medians {
        table.add_row([
            m.figure.to_string(),
            format!("{:.1}", m.this),
            format!("{:.1}", m.other),
            format!("{:.3}", m.ratio),
            format!("{:.3}", m.paired_ratio),
        ]);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(binary: Side, round: u32, seconds: f64) -> Run {
        Run { binary, round, seconds, cpu_seconds: seconds * 2.0, writes_per_machine: 30.0, peak_rss_mib: 100.0 }
    }

    #[test]
    fn medians_per_binary_and_their_ratio() {
        let runs = [
            run(Side::This, 1, 10.0),
            run(Side::Other, 1, 20.0),
            run(Side::Other, 2, 22.0),
            run(Side::This, 2, 30.0),
            run(Side::This, 3, 12.0),
            run(Side::Other, 3, 100.0),
        ];
        let s = summarize(&runs);
        assert_eq!((s[0].figure, s[0].this, s[0].other), ("seconds", 12.0, 22.0));
        assert!((s[0].ratio - 12.0 / 22.0).abs() < 1e-9);
        assert_eq!((s[1].this, s[1].other), (24.0, 44.0));
        assert_eq!(s[2].ratio, 1.0);
        // Rounds' ratios 0.5, 30/22 and 0.12: their median is the first.
        assert!((s[0].paired_ratio - 0.5).abs() < 1e-9);
        assert_eq!(s[2].paired_ratio, 1.0);
    }

    /// A machine that slows down over the series moves both runs of a round alike: the
    /// rounds' ratios see through the drift that the medians' ratio mixes in.
    #[test]
    fn per_round_ratios_take_the_drift_out() {
        let runs: Vec<Run> = (1..=4)
            .flat_map(|round| {
                let slower = 1.0 + f64::from(round);
                [run(Side::This, round, 9.0 * slower), run(Side::Other, round, 10.0 * slower)]
            })
            .collect();
        let s = summarize(&runs);
        assert!((s[0].paired_ratio - 0.9).abs() < 1e-9);
    }

    #[test]
    fn median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(Vec::new()).is_nan());
    }
}
