//! End to end over the binary: configs generated from the schema (every
//! field of every workload, of the machine and of the table designs, each
//! now and then set to an edge value: 0, 1, powers of two, the integer
//! limits, negative, NaN, infinite, empty and odd names, bad expressions),
//! each run through `futexsim run` with a short window and a wall-clock
//! bound. Each must end in exit 0 or 2, never a panic, an abort or a hang,
//! and leave nothing in its directory but futexsim's own files, nothing
//! beside it.
//!
//! CI runs a few cases, then every input that ever failed
//! (tests/e2e_regressions/). For long runs, FUTEXSIM_E2E_SECONDS keeps
//! generating cases for that long and FUTEXSIM_E2E_SEED picks where to start:
//! `FUTEXSIM_E2E_SECONDS=1800 cargo test --release --test integration fuzz_e2e:: -- --nocapture`.
//! A failing case is written under the target directory, to be kept as a
//! regression file; one that fails only by taking minutes is kept as
//! `*.toml.slow`, outside CI's replay.

use futexsim::kernel::table::{self, TableDesign};
use futexsim::machine::{presets, MachineSpec};
use futexsim::workload::WorkloadSpec;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use toml::{Table, Value};

use crate::common;

use common::Scratch;

/// No case may run longer: windows are a few simulated microseconds.
const WALL_LIMIT: Duration = Duration::from_secs(60);

/// Each workload as the least a config writes for it.
const WORKLOADS: [&str; 11] = [
    "name = \"perf-hash\"",
    "name = \"perf-wake\"",
    "name = \"perf-wake-parallel\"",
    "name = \"perf-requeue\"",
    "name = \"perf-lock-pi\"",
    "name = \"will-it-scale\"\ntest = 1\nmode = \"thread\"",
    "name = \"schbench\"",
    "name = \"fea-solver\"",
    "name = \"time-exit\"",
    "name = \"lru-lock\"",
    "name = \"program\"\nthreads = 2\nlocks = [\"a\"]\nwords = { w = \"4 * thread\" }\n\
     tables = [{ name = \"t\", slots = 16, stride = 64 }]\n\
     steps = [{ op = \"lock\", lock = \"a\" }, { op = \"compute\", ns = 50 }, \
     { op = \"unlock\", lock = \"a\" }, { op = \"atomic\", word = \"w\", action = \"add\" }, \
     { op = \"lock\", table = \"t\", key = \"thread\" }, { op = \"unlock\", table = \"t\", key = \"thread\" }, \
     { op = \"futex-wake\", addr = \"4 * thread\" }, { op = \"barrier\" }, \
     { op = \"repeat\", times = 2, steps = [{ op = \"compute\", ns = 10 }] }]",
];

/// Keys serde leaves out when absent (options), by section.
const OPTIONAL: [(&str, &str); 13] = [
    ("workload", "threads"),
    ("workload", "processes"),
    ("workload", "workers"),
    ("workload", "wakers"),
    ("workload", "tasks"),
    ("workload", "children"),
    ("workload", "iterations"),
    ("topology", "nr_cpus"),
    ("topology", "possible_cpus"),
    ("topology", "sockets_per_board"),
    ("latency", "board"),
    ("coherence", "board_line"),
    ("table", "private"),
];

const INTEGERS: [i64; 16] = [
    0,
    1,
    2,
    3,
    7,
    64,
    96,
    4096,
    65536,
    1 << 20,
    1 << 26,
    u32::MAX as i64,
    1 << 32,
    i64::MAX,
    -1,
    i64::MIN,
];

const FLOATS: [f64; 9] = [
    0.0,
    1.0,
    -1.0,
    1e-9,
    1e7,
    1e12,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
];

const STRINGS: [&str; 16] = [
    "",
    "0",
    "x",
    "..",
    "a/b",
    "a\u{1}b",
    "*",
    "64",
    "1 << 26",
    "1 << 40",
    "cpus / (cpus - cpus)",
    "roundup_pow_of_two(cpus)",
    "roundup_pow_of_two(256 * cpus)",
    "2 *",
    "threads * 4096",
    "ticket",
];

/// A value of the same kind as `like`, now and then at an edge.
fn edge(rng: &mut impl Rng, like: &Value) -> Value {
    match like {
        Value::Integer(_) => Value::Integer(*INTEGERS.choose(rng).unwrap()),
        Value::Float(_) => Value::Float(*FLOATS.choose(rng).unwrap()),
        Value::Boolean(b) => Value::Boolean(!b),
        Value::String(_) => Value::String(STRINGS.choose(rng).unwrap().to_string()),
        Value::Array(items) if items.is_empty() => Value::Array(Vec::new()),
        Value::Array(items) => match rng.gen_range(0..3) {
            0 => Value::Array(Vec::new()),
            1 => Value::Array(items[..1].to_vec()),
            _ => {
                let mut items = items.clone();
                let i = rng.gen_range(0..items.len());
                items[i] = edge(rng, &items[i]);
                Value::Array(items)
            }
        },
        Value::Table(t) => {
            let mut t = t.clone();
            mutate(rng, &mut t, 0.5);
            Value::Table(t)
        }
        Value::Datetime(_) => like.clone(),
    }
}

/// Sets each field of `table` (tables within it too) to an edge value with
/// probability `p`; the `name` that picks a workload stays.
fn mutate(rng: &mut impl Rng, table: &mut Table, p: f64) {
    let keys: Vec<String> = table.keys().cloned().collect();
    for key in keys {
        let value = &table[&key];
        if let Value::Table(inner) = value {
            let mut inner = inner.clone();
            mutate(rng, &mut inner, p);
            table.insert(key, Value::Table(inner));
        } else if rng.gen_bool(p) && key != "name" {
            let v = edge(rng, value);
            table.insert(key, v);
        }
    }
}

fn as_table(value: impl serde::Serialize) -> Table {
    match Value::try_from(value) {
        Ok(Value::Table(t)) => t,
        _ => unreachable!("specs serialize to tables"),
    }
}

/// One config: a preset machine, one to three designs and a workload, each
/// expanded to every field and some of those set to edges; a short window,
/// sometimes a sweep.
fn generate(seed: u64) -> String {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let p = [0.0, 0.03, 0.1, 0.3][rng.gen_range(0..4)];
    let names: Vec<&str> = presets::names().collect();
    let machine_name = names.choose(&mut rng).unwrap();
    let spec: MachineSpec = presets::preset(machine_name).unwrap();
    let mut machine = as_table(&spec);
    mutate(&mut rng, &mut machine, p);
    add_optional(&mut rng, &mut machine, p);
    // Big machines run small, so that a case takes a second: a few CPUs
    // boot, or a number of them that is refused. (A uv-4096 run whole takes
    // minutes: tests/e2e_regressions/*.slow.)
    if let Some(Value::Table(topology)) = machine.get_mut("topology") {
        let refused = |n: i64| n <= 0 || n > 65536;
        match topology.get("nr_cpus").and_then(Value::as_integer) {
            Some(n) if n <= 64 || refused(n) => {}
            _ => {
                topology.insert("nr_cpus".into(), Value::Integer(rng.gen_range(1..=8)));
            }
        }
    }

    let workload_text = WORKLOADS.choose(&mut rng).unwrap();
    let workload: WorkloadSpec = toml::from_str(workload_text).unwrap();
    let mut workload = as_table(&workload);
    mutate(&mut rng, &mut workload, p);
    add_optional(&mut rng, &mut workload, p);

    let mut doc = Table::new();
    let mut run = Table::new();
    let window = |rng: &mut Xoshiro256PlusPlus, small: i64| {
        if rng.gen_bool(0.05) {
            Value::Integer(
                *[0, 1_000_000_001, 18_446_744_073_710, i64::MAX]
                    .choose(rng)
                    .unwrap(),
            )
        } else {
            Value::Integer(rng.gen_range(0..=small))
        }
    };
    run.insert("duration_us".into(), window(&mut rng, 8));
    run.insert("warmup_us".into(), window(&mut rng, 2));
    run.insert(
        "repetitions".into(),
        Value::Integer(if rng.gen_bool(0.05) {
            *[0, 200_000, u32::MAX as i64].choose(&mut rng).unwrap()
        } else {
            rng.gen_range(1..=2)
        }),
    );
    run.insert("seed".into(), Value::Integer(rng.gen_range(0..1000)));
    doc.insert("run".into(), Value::Table(run));
    doc.insert("machine".into(), Value::Table(machine));
    doc.insert("workload".into(), Value::Table(workload));

    let mut tables = Vec::new();
    for _ in 0..rng.gen_range(1..=3) {
        let preset = table::PRESET_NAMES.choose(&mut rng).unwrap();
        let design: TableDesign = table::preset(preset).unwrap();
        let mut t = as_table(&design);
        mutate(&mut rng, &mut t, p);
        if rng.gen_bool(p) {
            t.insert(
                "name".into(),
                Value::String(STRINGS.choose(&mut rng).unwrap().to_string()),
            );
        }
        tables.push(Value::Table(t));
    }
    doc.insert("table".into(), Value::Array(tables));

    if rng.gen_bool(0.3) {
        let mut sweep = Table::new();
        let (axis, values): (&str, Vec<Value>) = match rng.gen_range(0..4) {
            0 => ("cpus", vec![Value::Integer(1), Value::Integer(2)]),
            1 => ("line", vec![Value::Integer(64), Value::Integer(128)]),
            2 => (
                "table.*.slots",
                vec![Value::String("16".into()), Value::String("cpus".into())],
            ),
            _ => ("run.seed", vec![Value::Integer(1), Value::Integer(2)]),
        };
        let values = values.iter().map(|v| edge_maybe(&mut rng, v, p)).collect();
        sweep.insert(axis.into(), Value::Array(values));
        doc.insert("sweep".into(), Value::Table(sweep));
    }
    toml::to_string(&doc).unwrap()
}

fn edge_maybe(rng: &mut impl Rng, v: &Value, p: f64) -> Value {
    if rng.gen_bool(p) {
        edge(rng, v)
    } else {
        v.clone()
    }
}

/// Adds, with probability `p` each, the optional keys of the sections in `table`.
fn add_optional(rng: &mut impl Rng, table: &mut Table, p: f64) {
    let is_workload = table.contains_key("name") && !table.contains_key("topology");
    for (section, key) in OPTIONAL {
        if !rng.gen_bool(p) {
            continue;
        }
        let value = Value::Integer(*INTEGERS.choose(rng).unwrap());
        if section == "workload" && is_workload {
            table.insert(key.into(), value);
        } else if let Some(Value::Table(t)) = table.get_mut(section) {
            let value = if key == "board" {
                Value::Float(*FLOATS.choose(rng).unwrap())
            } else {
                value
            };
            t.insert(key.into(), value);
        }
    }
}

/// What a finished `futexsim run` may leave in its campaign directory.
fn is_futexsims(relative: &Path) -> bool {
    let parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    let report_file = |name: &str| {
        matches!(
            name,
            "report.md"
                | "results.json"
                | "results.csv"
                | "summary.csv"
                | "speed.json"
                | "manifest"
        )
    };
    let run_file = |name: &str| {
        name.strip_suffix(".json")
            .is_some_and(|id| id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    match parts.as_slice() {
        [generation, rest @ ..] if generation.starts_with(".report-") => match rest {
            [] | ["charts"] | ["points"] => true,
            [name] => report_file(name),
            ["charts", chart] => chart.ends_with(".svg"),
            ["points", page] => page
                .strip_prefix("point-")
                .and_then(|p| p.strip_suffix(".md"))
                .is_some_and(|n| n.parse::<usize>().is_ok()),
            _ => false,
        },
        ["campaign.json" | ".futexsim.lock" | ".report" | "charts" | "points" | "runs"] => true,
        [name] => report_file(name),
        ["runs", name] => run_file(name),
        _ => false,
    }
}

fn walk(dir: &Path, root: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let entry = entry.unwrap();
        let path = entry.path();
        out.push(path.strip_prefix(root).unwrap().to_path_buf());
        if entry.file_type().unwrap().is_dir() {
            walk(&path, root, out);
        }
    }
}

/// Runs one config through the binary; why it failed, if it did.
fn check(text: &str, scratch: &Path) -> Result<(), String> {
    let _ = fs::remove_dir_all(scratch);
    fs::create_dir_all(scratch).unwrap();
    fs::write(scratch.join("case.toml"), text).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_futexsim"))
        .args(["run", "case.toml", "--out", "out", "--jobs", "2"])
        .current_dir(scratch)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > WALL_LIMIT {
            child.kill().unwrap();
            child.wait().unwrap();
            return Err(format!("still running after {WALL_LIMIT:?}"));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    if stderr.contains("panicked") {
        return Err(format!("panicked: {stderr}"));
    }
    match status.code() {
        Some(0) | Some(2) => {}
        code => return Err(format!("exit {code:?}: {stderr}")),
    }
    if status.code() == Some(2) && stderr.lines().count() != 1 {
        return Err(format!("a refusal takes more than one line: {stderr}"));
    }
    let mut beside = Vec::new();
    walk(scratch, scratch, &mut beside);
    beside.retain(|p| p != Path::new("case.toml") && !p.starts_with("out"));
    if !beside.is_empty() {
        return Err(format!("wrote beside its directory: {beside:?}"));
    }
    let mut inside = Vec::new();
    walk(&scratch.join("out"), &scratch.join("out"), &mut inside);
    if let Some(stranger) = inside.iter().find(|p| !is_futexsims(p)) {
        return Err(format!("left {} in its directory", stranger.display()));
    }
    if status.code() == Some(0) && !scratch.join("out/results.json").exists() {
        return Err("exit 0 without results.json".into());
    }
    Ok(())
}

/// Keeps a failing case where a developer finds it.
fn keep(text: &str, seed: u64, why: &str) -> String {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("e2e-failures");
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("seed-{seed}.toml"));
    let first = why.lines().next().unwrap_or_default();
    fs::write(&path, format!("# {first}\n{text}")).unwrap();
    format!("seed {seed}: {why}\n(kept in {})", path.display())
}

#[test]
fn generated_configs_end_in_a_result_or_a_refusal() {
    let scratch = Scratch::new("e2e");
    let seconds: u64 = std::env::var("FUTEXSIM_E2E_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let first: u64 = std::env::var("FUTEXSIM_E2E_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let started = Instant::now();
    let (mut cases, mut refused) = (0u64, 0u64);
    let mut seed = first;
    loop {
        let text = generate(seed);
        if let Err(why) = check(&text, &scratch.0.join("case")) {
            panic!("{}", keep(&text, seed, &why));
        }
        if !scratch.0.join("case/out/results.json").exists() {
            refused += 1;
        }
        cases += 1;
        seed += 1;
        let enough = if seconds == 0 {
            cases >= 12
        } else {
            started.elapsed() >= Duration::from_secs(seconds)
        };
        if enough {
            break;
        }
    }
    eprintln!(
        "{cases} generated configs from seed {first} in {:.0} s: {} ran, {refused} refused",
        started.elapsed().as_secs_f64(),
        cases - refused
    );
    // The generator is worth its time only if it reaches both outcomes.
    if cases >= 100 {
        assert!(
            refused > 0 && refused < cases,
            "{refused} of {cases} refused"
        );
    }
}

#[test]
fn every_input_that_ever_failed_now_ends_in_a_result_or_a_refusal() {
    let scratch = Scratch::new("e2e-regressions");
    let paths = common::toml_files("tests/e2e_regressions");
    assert!(
        !paths.is_empty(),
        "no regression inputs in tests/e2e_regressions"
    );
    let failures: Vec<String> = paths
        .iter()
        .filter_map(|path| {
            let text = fs::read_to_string(path).unwrap();
            check(&text, &scratch.0.join("case"))
                .err()
                .map(|why| format!("{}: {why}", path.display()))
        })
        .collect();
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}
