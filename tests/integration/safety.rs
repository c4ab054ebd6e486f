//! What futexsim does with files it did not write, and files it cannot
//! trust: a directory of a user's files is refused and loses nothing, a
//! config's name never leads outside its root, a run file that is not its
//! run's is simulated again (and never merged), the report is published in
//! one swap, and a campaign directory is worked on by one futexsim at a time.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common;

use common::{futexsim, perf_hash_sweep, run_sweep as run, Scratch};

/// Two tables over two CPU counts, twice each.
fn small_sweep() -> String {
    perf_hash_sweep(
        "duration_us = 20\nwarmup_us = 5\nrepetitions = 2",
        &["fixed-256", "private-6.17"],
        "[2, 8]",
    )
}

fn with_config(name: &str) -> (Scratch, PathBuf) {
    Scratch::holding(name, "small.toml", &small_sweep())
}

fn succeeded(output: &Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    stderr
}

/// Every file under `dir` with its bytes, paths relative to `dir`.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else {
                let bytes = fs::read(&path).unwrap();
                out.push((path.strip_prefix(dir).unwrap().to_path_buf(), bytes));
            }
        }
    }
    out.sort();
    out
}

fn run_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

#[test]
fn a_directory_of_a_users_files_is_refused_and_loses_nothing() {
    let (s, config) = with_config("users-files");
    let dir = s.0.join("mine");
    for (path, text) in [
        ("runs/notes.txt", "my notes"),
        ("runs/0123456789abcdef.json", "{\"mine\": true}"),
        ("charts/plot.svg", "<svg/>"),
        ("report.md", "# my report"),
    ] {
        fs::create_dir_all(dir.join(path).parent().unwrap()).unwrap();
        fs::write(dir.join(path), text).unwrap();
    }
    let before = tree(&dir);
    for extra in [&[][..], &["--overwrite"]] {
        let out = run(&config, &dir, extra);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("not a futexsim campaign"), "{stderr}");
        assert_eq!(tree(&dir), before, "the directory is as it was");
    }
    // merge --out is held to the same rule.
    let shard = s.0.join("shard");
    succeeded(&run(&config, &shard, &[]));
    let out = futexsim(&[
        "merge",
        shard.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(tree(&dir), before);
}

/// A checkout of reports/ holds each config's published report but no
/// campaign file (git keeps none): the same config runs there again and
/// publishes anew; another config is refused, and the report stays as it was.
#[test]
fn a_published_report_without_its_campaign_takes_its_config_again() {
    let (s, config) = with_config("checkout");
    let dir = s.0.join("report");
    succeeded(&run(&config, &dir, &[]));
    let lines = |d: &Path| {
        fs::read_to_string(d.join("results.csv"))
            .unwrap()
            .lines()
            .count()
    };
    let published = lines(&dir);
    fs::remove_file(dir.join("campaign.json")).unwrap();
    fs::remove_dir_all(dir.join("runs")).unwrap();
    let before = tree(&dir);
    let other = s.0.join("other.toml");
    fs::write(&other, small_sweep()).unwrap();
    let out = run(&other, &dir, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("another config"), "{stderr}");
    assert_eq!(tree(&dir), before, "the report is as it was");
    succeeded(&run(&config, &dir, &[]));
    assert!(dir.join("campaign.json").exists());
    assert_eq!(lines(&dir), published);
}

#[test]
fn files_a_user_adds_to_a_campaign_stay() {
    let (s, config) = with_config("added-files");
    let dir = s.0.join("c");
    succeeded(&run(&config, &dir, &[]));
    fs::write(dir.join("runs/notes.txt"), "mine").unwrap();
    fs::write(dir.join("runs/0123456789abcdef.json"), "{\"mine\": 1}").unwrap();
    // A new candidate replaces the report and removes no run of the config.
    succeeded(&run(&config, &dir, &["--rule", "64", "--overwrite"]));
    assert_eq!(fs::read(dir.join("runs/notes.txt")).unwrap(), b"mine");
    assert_eq!(
        fs::read(dir.join("runs/0123456789abcdef.json")).unwrap(),
        b"{\"mine\": 1}"
    );
}

#[test]
fn a_config_named_dots_writes_nowhere_outside_its_root() {
    let s = Scratch::new("dots");
    let work = s.0.join("work");
    fs::create_dir_all(&work).unwrap();
    fs::write(work.join("...toml"), small_sweep()).unwrap();
    fs::write(work.join("small.toml"), small_sweep()).unwrap();
    let before = tree(&s.0);
    // Alone, its campaign would be reports/.., the working directory.
    let alone = Command::new(env!("CARGO_BIN_EXE_futexsim"))
        .args(["run", "...toml"])
        .current_dir(&work)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&alone.stderr);
    assert_eq!(alone.status.code(), Some(2), "{stderr}");
    assert!(stderr.starts_with("futexsim: error: ...toml:"), "{stderr}");
    // With another config under --out ROOT, it would be ROOT/.., outside ROOT.
    let root = work.join("root");
    let both = Command::new(env!("CARGO_BIN_EXE_futexsim"))
        .args(["run", "small.toml", "...toml", "--out", "root"])
        .current_dir(&work)
        .output()
        .unwrap();
    assert_eq!(both.status.code(), Some(2));
    assert!(!root.exists(), "refused before anything is written");
    assert_eq!(tree(&s.0), before, "nothing is written anywhere");
}

#[test]
fn a_run_file_that_is_not_its_runs_is_simulated_again() {
    let (s, config) = with_config("swapped");
    let dir = s.0.join("c");
    succeeded(&run(&config, &dir, &[]));
    let results = fs::read(dir.join("results.json")).unwrap();
    let files = run_files(&dir);
    assert_eq!(files.len(), 8);
    // Another valid run's file in place of this one's.
    fs::copy(&files[0], &files[1]).unwrap();
    // A figure edited.
    let text = fs::read_to_string(&files[2]).unwrap();
    let at = text.find("\"ops\":").unwrap() + "\"ops\":".len();
    let edited = format!("{}1{}", &text[..at], &text[at..]);
    fs::write(&files[2], edited).unwrap();
    // Cut short.
    let text = fs::read(&files[3]).unwrap();
    fs::write(&files[3], &text[..text.len() / 2]).unwrap();
    fs::remove_file(dir.join("results.json")).unwrap();

    let stderr = succeeded(&run(&config, &dir, &[]));
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 3, "one line per file: {stderr}");
    for (file, why) in [
        (&files[1], "it holds run"),
        (&files[2], "checksum does not match"),
        (&files[3], "checksum"),
    ] {
        let name = file.display().to_string();
        assert!(
            warnings
                .iter()
                .any(|w| w.contains(&name) && w.contains(why) && w.contains("simulating it again")),
            "{name}: {stderr}"
        );
    }
    assert!(stderr.contains("3 runs simulated now"), "{stderr}");
    assert_eq!(fs::read(dir.join("results.json")).unwrap(), results);
}

#[test]
fn merge_never_copies_a_damaged_shard_file() {
    let (s, config) = with_config("merge-damaged");
    let whole = s.0.join("whole");
    succeeded(&run(&config, &whole, &[]));
    let (one, two, merged) = (s.0.join("one"), s.0.join("two"), s.0.join("merged"));
    succeeded(&run(&config, &one, &["--shard", "1/2"]));
    succeeded(&run(&config, &two, &["--shard", "2/2"]));
    let damaged = run_files(&one)[0].clone();
    let text = fs::read_to_string(&damaged).unwrap();
    fs::write(&damaged, text.replacen("\"ops\":", "\"ops\":9", 1)).unwrap();
    let merge = || {
        futexsim(&[
            "merge",
            one.to_str().unwrap(),
            two.to_str().unwrap(),
            "--out",
            merged.to_str().unwrap(),
        ])
    };
    let out = merge();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&damaged.display().to_string()) && stderr.contains("not merged"),
        "{stderr}"
    );
    let name = damaged.file_name().unwrap();
    assert!(!merged.join("runs").join(name).exists(), "never copied");
    // The shard run again simulates the damaged run anew; then all merge.
    succeeded(&run(&config, &one, &["--shard", "1/2"]));
    succeeded(&merge());
    assert_eq!(
        fs::read(merged.join("results.json")).unwrap(),
        fs::read(whole.join("results.json")).unwrap()
    );
}

#[test]
fn an_error_while_publishing_leaves_the_previous_report_whole() {
    let (s, config) = with_config("publish");
    let dir = s.0.join("c");
    succeeded(&run(&config, &dir, &[]));
    let report = fs::read(dir.join("report.md")).unwrap();
    let results = fs::read(dir.join("results.json")).unwrap();
    // Something of the user's where one of the report's files goes.
    let _ = fs::remove_file(dir.join("results.csv"));
    fs::create_dir(dir.join("results.csv")).unwrap();
    fs::write(dir.join("results.csv/mine.txt"), "mine").unwrap();
    let out = run(&config, &dir, &["--rule", "64", "--overwrite"]);
    // A name in the way is the user's to move: refused as bad input.
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(fs::read(dir.join("report.md")).unwrap(), report);
    assert_eq!(fs::read(dir.join("results.json")).unwrap(), results);
    assert_eq!(fs::read(dir.join("results.csv/mine.txt")).unwrap(), b"mine");

    // Once it is out of the way, the new report replaces the old whole, and
    // nothing of the old one is left beside it.
    fs::remove_dir_all(dir.join("results.csv")).unwrap();
    succeeded(&run(&config, &dir, &["--rule", "64", "--overwrite"]));
    let new = fs::read_to_string(dir.join("results.json")).unwrap();
    assert!(new.contains("slots=64"));
    assert!(fs::read_to_string(dir.join("report.md"))
        .unwrap()
        .contains("slots=64"));
    let generations = fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().starts_with(".report-")
        })
        .count();
    assert_eq!(generations, 1, "one report, the live one");
}

#[test]
fn a_second_futexsim_waits_for_the_one_working_in_the_directory() {
    let (s, config) = with_config("locked");
    let dir = s.0.join("c");
    succeeded(&run(&config, &dir, &[]));
    let lock = fs::OpenOptions::new()
        .write(true)
        .open(dir.join(".futexsim.lock"))
        .expect("a campaign has its lock file");
    lock.lock().unwrap();
    let mut second = Command::new(env!("CARGO_BIN_EXE_futexsim"))
        .args([
            "run",
            config.to_str().unwrap(),
            "--out",
            dir.to_str().unwrap(),
        ])
        .args(["--rule", "64", "--overwrite"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        second.try_wait().unwrap().is_none(),
        "it waits while the directory is locked"
    );
    assert!(!fs::read_to_string(dir.join("results.json"))
        .unwrap()
        .contains("slots=64"));
    drop(lock);
    let out = second.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("waiting for"), "it says why: {stderr}");
    assert!(fs::read_to_string(dir.join("results.json"))
        .unwrap()
        .contains("slots=64"));
}

#[test]
fn jobs_far_above_the_runs_start_no_more_threads_than_runs() {
    let (s, config) = with_config("jobs");
    let mut child = Command::new(env!("CARGO_BIN_EXE_futexsim"))
        .args(["run", config.to_str().unwrap(), "--out"])
        .arg(s.0.join("c"))
        .args(["--jobs", "100000"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("--jobs 100000 on 8 runs did not finish in 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(child.wait().unwrap().success());
}

#[test]
fn the_memory_estimate_covers_every_run_that_will_start() {
    use futexsim::campaign::{Campaign, Shard};
    use futexsim::config::Config;
    let config = Config::parse("small.toml", "small", &small_sweep(), &[]).unwrap();
    let s = Scratch::new("estimate");
    let campaign = Campaign::plan(&s.0.join("c"), config, false).unwrap();
    let all = campaign.missing(Shard::ALL, false).unwrap();
    // A resume or a shard may hold only later repetitions.
    let later: Vec<_> = all.into_iter().filter(|r| r.plan.repetition > 0).collect();
    let (_, bytes) = campaign
        .largest_run(&later)
        .unwrap()
        .expect("later repetitions are estimated too");
    assert!(bytes > 0);

    // A program's queued steps count: a million steps a pass on 64 threads.
    let program = small_sweep()
        .replace(
            "name = \"perf-hash\"\nfutexes = 32",
            "name = \"program\"\nthreads = 64\nsteps = [{ op = \"repeat\", times = 1000000, \
             steps = [{ op = \"compute\", ns = 1 }] }]",
        )
        .replace("cpus = [2, 8]", "cpus = [64]");
    let config = Config::parse("program.toml", "program", &program, &[]).unwrap();
    let campaign = Campaign::plan(&s.0.join("p"), config, false).unwrap();
    let todo = campaign.missing(Shard::ALL, false).unwrap();
    let (_, bytes) = campaign.largest_run(&todo).unwrap().unwrap();
    assert!(
        bytes > 64 * 1_000_000 * 32,
        "{bytes} bytes for 64 million queued steps"
    );

    // Tasks count: perf wake-parallel's 32768 blocked threads and as many
    // wakers on 8 CPUs took 2.69 KiB a task, measured, and were once
    // estimated at the 9 MiB of a run with a few.
    let many = small_sweep()
        .replace(
            "name = \"perf-hash\"\nfutexes = 32",
            "name = \"perf-wake-parallel\"\nthreads = 32768",
        )
        .replace("cpus = [2, 8]", "cpus = [8]");
    let config = Config::parse("many.toml", "many", &many, &[]).unwrap();
    let campaign = Campaign::plan(&s.0.join("m"), config, false).unwrap();
    let todo = campaign.missing(Shard::ALL, false).unwrap();
    let (_, bytes) = campaign.largest_run(&todo).unwrap().unwrap();
    assert!(bytes > 65536 * 2690, "{bytes} bytes for 65536 tasks");

    // What programs hold as laid out counts, and CPUs count: time_exit's
    // 8192 children on uv-4096, each with its whole exit queued, peaked at
    // 103 MiB, measured (VmHWM, 20 us), and were once estimated at 78 MiB.
    let exits = "[run]\nduration_us = 20\nwarmup_us = 0\n[machine]\npreset = \"uv-4096\"\n\
                 [workload]\nname = \"time-exit\"\nchildren = 8192\n\
                 [[table]]\npreset = \"fixed-256\"\n";
    let config = Config::parse("exits.toml", "exits", exits, &[]).unwrap();
    let campaign = Campaign::plan(&s.0.join("x"), config, false).unwrap();
    let todo = campaign.missing(Shard::ALL, false).unwrap();
    let (_, bytes) = campaign.largest_run(&todo).unwrap().unwrap();
    assert!(bytes > 103 << 20, "{bytes} bytes for 8192 exiting children");
}

#[test]
fn report_refuses_an_inconsistent_result_set_and_diff_warns_of_other_windows() {
    let (s, config) = with_config("inconsistent");
    let dir = s.0.join("c");
    succeeded(&run(&config, &dir, &[]));
    let other = s.0.join("longer.toml");
    fs::write(
        &other,
        small_sweep().replace("duration_us = 20", "duration_us = 30"),
    )
    .unwrap();
    let longer = s.0.join("l");
    succeeded(&run(&other, &longer, &[]));
    let out = futexsim(&["diff", dir.to_str().unwrap(), longer.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning") && stderr.contains("20 us") && stderr.contains("30 us"),
        "{stderr}"
    );

    // One run dropped from results.json.
    let mut set: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    set["runs"].as_array_mut().unwrap().pop();
    let edited = s.0.join("edited");
    fs::create_dir(&edited).unwrap();
    fs::write(edited.join("results.json"), set.to_string()).unwrap();
    let out = futexsim(&["report", edited.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("not a consistent result set"), "{stderr}");
    assert!(!edited.join("report.md").exists());
}

/// Every cost 0 ns once ran until the stall watchdog stopped it: the wakes
/// followed each other at one instant forever. No machine has such costs,
/// and the profile's floors now refuse them before any run starts.
#[test]
fn a_run_whose_events_would_never_advance_time_is_refused_before_it_starts() {
    let s = Scratch::new("stall");
    let config = s.0.join("stall.toml");
    let zero_costs = "topology.nr_cpus = 2\n\
        latency = { l1_hit = 0.0, smt = 0.0, llc = 0.0, node = 0.0, remote = [[0.0, 0.0], [0.0, 0.0]], \
        dram_local = 0.0, rmw = 0.0 }\n\
        kernel = { syscall = 0.0, futex_key_private = 0.0, futex_key_shared = 0.0, jhash2 = 0.0, \
        schedule = 0.0 }\n";
    let text = small_sweep()
        .replace(
            "preset = \"icx-2s\"\n",
            &format!("preset = \"icx-2s\"\n{zero_costs}"),
        )
        .replace(
            "name = \"perf-hash\"\nfutexes = 32",
            "name = \"program\"\nthreads = 2\nsteps = [{ op = \"futex-wake\", addr = \"0\" }]",
        )
        .replace("[sweep]\ncpus = [2, 8]", "");
    fs::write(&config, text).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_futexsim"))
        .args(["run", config.to_str().unwrap(), "--out"])
        .arg(s.0.join("c"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(120) {
            child.kill().unwrap();
            panic!("a machine of 0 ns steps was not refused in 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("below the floor"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(10), "{stderr}");
    assert!(!s.0.join("c").exists(), "nothing is written");
}
