//! `futexsim run --sensitivity`: the model interval over a profile's
//! plausible ranges, on a tiny config.

use crate::common::{run_sweep, Scratch};
use serde_json::Value;
use std::fs;
use std::path::Path;
use std::process::Command;

/// A 4-core machine whose rmw has a range and whose hand-off share has a
/// range of one point.
const PROFILE: &str = r#"name = "box"
source = "a test profile"

[topology]
sockets = 1
cores_per_socket = 4
threads_per_core = 1
cores_per_llc = 4

[latency]
l1_hit = 1.2
smt = 5.0
llc = 43.0
node = 43.0
remote = [[0.0]]
dram_local = 90.0
rmw = 6.0

[coherence]
line = 64
read_occupancy = 1.0

[plausible]
"coherence.read_occupancy" = { low = 1.0, high = 1.0, source = "a test: one point" }
"latency.rmw" = { low = 5.0, high = 8.0, source = "a test" }
"#;

const CONFIG: &str = r#"[run]
duration_us = 50
warmup_us = 10
repetitions = 2

[machine]
preset = "box.toml"

[workload]
name = "perf-hash"
futexes = 16

[[table]]
preset = "fixed-256"
baseline = true

[[table]]
preset = "private-6.17"
"#;

fn spans(json: &Value) -> Vec<&Value> {
    let figures = json["figures"].as_array().unwrap().iter();
    let ratios = json["ratios"].as_array().unwrap().iter();
    figures.chain(ratios).map(|f| &f["span"]).collect()
}

#[test]
fn a_sensitivity_run_is_deterministic_its_spans_hold_the_nominal_and_a_one_point_range_moves_nothing(
) {
    let scratch = Scratch::new("sensitivity");
    fs::write(scratch.0.join("box.toml"), PROFILE).unwrap();
    let config = scratch.0.join("tiny.toml");
    fs::write(&config, CONFIG).unwrap();
    let (a, b) = (scratch.0.join("a"), scratch.0.join("b"));
    for out in [&a, &b] {
        let run = run_sweep(&config, out, &["--sensitivity", "--jobs", "2"]);
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert!(stdout.contains("model interval: "), "{stdout}");
    }
    for file in ["sensitivity.json", "sensitivity.md"] {
        assert_eq!(
            fs::read(a.join(file)).unwrap(),
            fs::read(b.join(file)).unwrap(),
            "{file} differs between two runs of one config"
        );
    }
    let json: Value =
        serde_json::from_slice(&fs::read(a.join("sensitivity.json")).unwrap()).unwrap();
    let parameters: Vec<&str> = json["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap())
        .collect();
    assert_eq!(parameters, ["coherence.read_occupancy", "latency.rmw"]);
    // rmw's two ends are the only samples: the one-point range adds none.
    assert_eq!(json["samples"].as_array().unwrap().len(), 2);
    let spans = spans(&json);
    assert!(spans.len() > 4, "{json}");
    let mut moved = false;
    for span in spans {
        let (low, nominal, high) = (
            span["low"].as_f64().unwrap(),
            span["nominal"].as_f64().unwrap(),
            span["high"].as_f64().unwrap(),
        );
        assert!(low <= nominal && nominal <= high, "{span}");
        assert_eq!(span["swings"][0].as_f64(), Some(0.0), "{span}");
        assert_ne!(span["moved_most_by"], "coherence.read_occupancy", "{span}");
        moved |= span["swings"][1].as_f64() != Some(0.0);
    }
    assert!(moved, "rmw's range moved no figure: {json}");
    let md = fs::read_to_string(a.join("sensitivity.md")).unwrap();
    assert!(md.contains("paired ratio: mean of per-seed ratios"), "{md}");

    // Published again from the same results (`futexsim report`, or a run
    // that simulates nothing new), the report keeps its model interval.
    let republished = Command::new(env!("CARGO_BIN_EXE_futexsim"))
        .arg("report")
        .arg(&a)
        .output()
        .unwrap();
    assert!(republished.status.success(), "{republished:?}");
    let plain = run_sweep(&config, &a, &[]);
    assert!(
        plain.status.success(),
        "{}",
        String::from_utf8_lossy(&plain.stderr)
    );
    for file in ["sensitivity.json", "sensitivity.md"] {
        assert_eq!(
            fs::read(a.join(file)).unwrap(),
            fs::read(b.join(file)).unwrap(),
            "{file} changed when the same results were published again"
        );
    }
    // Other results drop the interval whole: no name is left pointing at
    // nothing.
    fs::write(
        &config,
        CONFIG.replace("duration_us = 50", "duration_us = 40"),
    )
    .unwrap();
    let other = run_sweep(&config, &a, &["--overwrite"]);
    assert!(
        other.status.success(),
        "{}",
        String::from_utf8_lossy(&other.stderr)
    );
    for file in ["sensitivity.json", "sensitivity.md"] {
        assert!(fs::symlink_metadata(a.join(file)).is_err(), "{file} stayed");
    }
    assert!(Path::new(&a.join("report.md")).exists());
}
