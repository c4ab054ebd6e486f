//! A campaign's result set: every run of a config's sweep, in the config's
//! order, with the provenance a reader needs to trust and reproduce it. This
//! is what results.json holds and what every report is rendered from.
//!
//! A result set depends only on (config, version): it is byte-identical
//! whatever the number of jobs, the sharding, or how often the campaign was
//! interrupted. Host-dependent figures (simulator speed, run date) live in a
//! [`SpeedLog`] beside it.

use crate::record::{RunRecord, Speed};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultSet {
    pub provenance: Provenance,
    /// The sweep's axes, in the config's order (empty without a sweep).
    pub axes: Vec<String>,
    /// Design names in the config's order; candidate `--rule` designs last.
    pub designs: Vec<String>,
    /// The design every other is compared against.
    pub baseline: String,
    /// One per (sweep point, design, repetition), points in expansion order,
    /// then designs, then repetitions.
    pub runs: Vec<RunResult>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub futexsim_version: String,
    /// `git describe`-style commit of the build, "-dirty" when it had local changes.
    pub git_commit: String,
    /// The config's name (its file stem, or "default").
    pub config_name: String,
    /// The config as resolved: every default filled in, every preset expanded, as TOML.
    pub resolved_config: String,
    pub base_seed: u64,
    pub repetitions: u32,
    /// Every machine profile the sweep used, with where its numbers come from.
    pub machines: Vec<MachineSource>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MachineSource {
    pub name: String,
    pub source: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Index of the sweep point in expansion order.
    pub point: usize,
    /// The point's value on each axis, as written in TOML (`cpus = 64` gives "64").
    pub axis_values: Vec<String>,
    pub design: String,
    pub repetition: u32,
    /// Stable identity of the run: a hash of its canonical scenario. Shards and
    /// campaign files are keyed by it.
    pub id: String,
    pub record: RunRecord,
}

impl ResultSet {
    /// The runs of one design at one point, in repetition order.
    pub fn runs_of<'a>(
        &'a self,
        point: usize,
        design: &'a str,
    ) -> impl Iterator<Item = &'a RunResult> + 'a {
        self.runs
            .iter()
            .filter(move |r| r.point == point && r.design == design)
    }

    /// How many sweep points the set covers.
    pub fn points(&self) -> usize {
        self.runs.iter().map(|r| r.point + 1).max().unwrap_or(0)
    }
}

/// Host-dependent figures of the campaign's runs: kept beside the result set
/// (speed.json), never inside it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SpeedLog {
    /// When the last run finished, RFC 3339 UTC.
    pub date: String,
    /// The most resident memory any process simulating these runs held
    /// (each from its campaign's start), in bytes.
    pub peak_rss_bytes: u64,
    /// Per run id, how fast the simulator went.
    pub runs: Vec<(String, Speed)>,
}

impl SpeedLog {
    pub fn total(&self) -> Speed {
        total_speed(self.runs.iter().map(|(_, s)| s))
    }
}

/// The speed of several runs together: their events over their summed wall
/// time, simulated ops weighted by each run's wall time.
pub fn total_speed<'a>(speeds: impl IntoIterator<Item = &'a Speed> + Clone) -> Speed {
    let events = speeds.clone().into_iter().map(|s| s.events).sum();
    let wall_s: f64 = speeds.clone().into_iter().map(|s| s.wall_s).sum();
    let sim_ops: f64 = speeds
        .into_iter()
        .map(|s| s.sim_ops_per_sec * s.wall_s)
        .sum();
    Speed {
        events,
        wall_s,
        events_per_sec: events as f64 / wall_s.max(1e-9),
        sim_ops_per_sec: sim_ops / wall_s.max(1e-9),
    }
}
