//! A sweep cut short: killed (SIGKILL) at any moment it loses at most the
//! runs in flight and re-running completes it with the results of an
//! uninterrupted run; stopped (SIGTERM) it finishes the runs in flight and
//! says how to resume.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;

use common::{perf_hash_sweep, Scratch};

/// A scratch directory holding the config as sweep.toml: about a second of
/// simulation, 24 runs of some 40 ms each.
fn with_config(name: &str) -> Scratch {
    let config = perf_hash_sweep(
        "duration_us = 2000\nwarmup_us = 10\nrepetitions = 2",
        &["fixed-256", "private-6.17"],
        "[2, 4, 8, 16, 24, 32]",
    );
    Scratch::holding(name, "sweep.toml", &config).0
}

impl Scratch {
    fn run(&self, out: &str) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_futexsim"));
        command
            .arg("run")
            .arg(self.0.join("sweep.toml"))
            .arg("--out")
            .arg(self.0.join(out))
            .args(["--jobs", "2"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        command
    }

    fn complete(&self, out: &str) -> String {
        let result = self.run(out).output().unwrap();
        assert!(
            result.status.success(),
            "{}",
            String::from_utf8_lossy(&result.stderr)
        );
        fs::read_to_string(self.0.join(out).join("results.json")).unwrap()
    }
}

/// Every file a campaign holds is whole: the JSON ones parse.
fn assert_whole(dir: &Path) {
    for path in [dir.join("campaign.json")].into_iter().chain(
        fs::read_dir(dir.join("runs"))
            .unwrap()
            .map(|e| e.unwrap().path()),
    ) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue; // a temporary file, never read
        }
        let text = fs::read_to_string(&path).unwrap();
        serde_json::from_str::<serde_json::Value>(&text)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

fn temporary_files(dir: &Path) -> Vec<String> {
    [dir.to_path_buf(), dir.join("runs")]
        .iter()
        .flat_map(|d| fs::read_dir(d).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains(".tmp-"))
        .collect()
}

#[test]
fn a_sweep_killed_at_random_moments_completes_with_identical_results() {
    let s = with_config("sigkill");
    let started = Instant::now();
    let uninterrupted = s.complete("whole");
    let full_time = started.elapsed();
    // Kill moments from a fixed seed, each early enough in what is left that
    // several kills land before the campaign completes.
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut kills = 0;
    for _ in 0..4 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let delay = full_time.mul_f64(0.05 + 0.3 * (state % 1000) as f64 / 1000.0);
        let mut child = s.run("killed").spawn().unwrap();
        std::thread::sleep(delay);
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            kills += 1;
        }
        child.wait().unwrap();
        let dir = s.0.join("killed");
        if dir.join("campaign.json").exists() {
            assert_whole(&dir);
        }
    }
    assert!(kills > 0, "no run was still going when killed");
    assert_eq!(s.complete("killed"), uninterrupted);
    let left = temporary_files(&s.0.join("killed"));
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

#[test]
fn sigterm_stops_after_the_runs_in_flight_and_says_how_to_resume() {
    let s = with_config("sigterm");
    let child = s.run("stopped").spawn().unwrap();
    // Signal once the campaign exists and its first run is written.
    let runs = s.0.join("stopped").join("runs");
    let deadline = Instant::now() + Duration::from_secs(10);
    while fs::read_dir(&runs).map_or(0, |d| d.count()) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("run the same command again to resume"),
        "{stderr}"
    );
    let stopped = s.0.join("stopped");
    assert!(!stopped.join("results.json").exists());
    assert_whole(&stopped);
    assert_eq!(s.complete("stopped"), s.complete("whole"));
}
