//! The filesystem is the user's, whatever state a directory is in: every
//! command refuses, naming the path, what futexsim did not write (a user's
//! file where a report's goes, a link, a FIFO, a directory where a file
//! goes), changes none of it, and never blocks; a campaign in any state a
//! kill leaves resumes; a report directory is old or new after any failure.

use std::fs;
use std::os::unix::fs::{symlink, FileTypeExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common;

use common::{futexsim, perf_hash_sweep, run_sweep as run, Scratch};

/// One CPU count, two tables, one repetition: the least campaign with a
/// report of every kind of file.
fn tiny_sweep() -> String {
    perf_hash_sweep(
        "duration_us = 10\nwarmup_us = 2\nrepetitions = 1",
        &["fixed-256", "private-6.17"],
        "[2]",
    )
}

fn with_config(name: &str) -> (Scratch, PathBuf) {
    Scratch::holding(name, "tiny.toml", &tiny_sweep())
}

fn succeeded(output: &Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    stderr
}

/// Exit 2, with one line of error naming `path`, and no panic.
fn refused_naming(output: &Output, path: &Path) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains(&path.display().to_string()),
        "the error names {}: {stderr}",
        path.display()
    );
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

/// Runs futexsim with `args`, killed if it takes longer than `limit`:
/// whether it finished, and its output.
fn bounded(args: &[&str], limit: Duration) -> (bool, Output) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_futexsim"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            return (false, child.wait_with_output().unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    (true, child.wait_with_output().unwrap())
}

/// A published campaign of the tiny sweep in `scratch`/c.
fn published(scratch: &Scratch, config: &Path) -> PathBuf {
    let dir = scratch.0.join("c");
    succeeded(&run(config, &dir, &[]));
    dir
}

fn report(dir: &Path) -> Output {
    futexsim(&["report", dir.to_str().unwrap()])
}

/// A copy of `from` at `to` with every link replaced by what it points to
/// (`cp -rL`), as a copy to another machine or a tarball without links makes.
fn copy_dereferenced(from: &Path, to: &Path) {
    let status = Command::new("cp")
        .arg("-rL")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn a_failed_swap_never_loses_the_only_results_json() {
    let (s, config) = with_config("fs-swap");
    let dir = published(&s, &config);
    let copy = s.0.join("copy");
    copy_dereferenced(&dir, &copy);
    let results = fs::read(copy.join("results.json")).unwrap();
    // Something not futexsim's where the live link goes: the swap cannot happen.
    fs::remove_dir_all(copy.join(".report")).unwrap();
    fs::create_dir(copy.join(".report")).unwrap();
    refused_naming(&report(&copy), &copy.join(".report"));
    assert_eq!(fs::read(copy.join("results.json")).unwrap(), results);
    assert!(fs::symlink_metadata(copy.join("results.json"))
        .unwrap()
        .is_file());
}

#[test]
fn a_copy_with_its_links_dereferenced_resumes_and_publishes_the_same_results() {
    let (s, config) = with_config("fs-deref");
    let dir = published(&s, &config);
    let copy = s.0.join("copy");
    copy_dereferenced(&dir, &copy);
    succeeded(&report(&copy));
    assert_eq!(
        fs::read(copy.join("results.json")).unwrap(),
        fs::read(dir.join("results.json")).unwrap()
    );
    assert!(fs::symlink_metadata(copy.join("report.md"))
        .unwrap()
        .file_type()
        .is_symlink());
    let again = s.0.join("again");
    copy_dereferenced(&dir, &again);
    succeeded(&run(&config, &again, &[]));
    assert_eq!(
        fs::read(again.join("results.json")).unwrap(),
        fs::read(dir.join("results.json")).unwrap()
    );
}

#[test]
fn report_leaves_a_users_charts_and_report_md_alone() {
    let (s, config) = with_config("fs-charts");
    let dir = published(&s, &config);
    fs::remove_file(dir.join("charts")).unwrap();
    fs::create_dir(dir.join("charts")).unwrap();
    fs::write(dir.join("charts/mine.svg"), "<svg/>").unwrap();
    fs::remove_file(dir.join("report.md")).unwrap();
    fs::write(dir.join("report.md"), "my notes").unwrap();
    let out = report(&dir);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(fs::read(dir.join("charts/mine.svg")).unwrap(), b"<svg/>");
    assert_eq!(fs::read(dir.join("report.md")).unwrap(), b"my notes");
}

/// Every path under `dir` that is a link or a report generation (`.report*`).
fn links_and_generations(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() || entry.file_name().to_string_lossy().starts_with(".report") {
            found.push(entry.path());
        } else if kind.is_dir() {
            found.extend(links_and_generations(&entry.path()));
        }
    }
    found
}

#[test]
fn a_plain_publish_turns_a_linked_report_into_files_and_stays_plain() {
    let (s, config) = with_config("fs-plain");
    let dir = published(&s, &config);
    assert!(!links_and_generations(&dir).is_empty());
    let results = fs::read(dir.join("results.json")).unwrap();
    let report_md = fs::read(dir.join("report.md")).unwrap();
    succeeded(&run(&config, &dir, &["--plain"]));
    assert_eq!(links_and_generations(&dir), Vec::<PathBuf>::new());
    assert_eq!(fs::read(dir.join("results.json")).unwrap(), results);
    assert_eq!(fs::read(dir.join("report.md")).unwrap(), report_md);
    assert!(fs::symlink_metadata(dir.join("charts")).unwrap().is_dir());
    // Without --plain, the manifest keeps it plain.
    succeeded(&report(&dir));
    assert_eq!(links_and_generations(&dir), Vec::<PathBuf>::new());
    assert_eq!(fs::read(dir.join("results.json")).unwrap(), results);
}

#[test]
fn a_plain_publish_refuses_a_users_file_and_leaves_it_as_it_is() {
    let (s, config) = with_config("fs-plain-foreign");
    let dir = s.0.join("c");
    succeeded(&run(&config, &dir, &["--plain"]));
    fs::write(dir.join("report.md"), "my notes").unwrap();
    refused_naming(&report(&dir), &dir.join("report.md"));
    assert_eq!(fs::read(dir.join("report.md")).unwrap(), b"my notes");
    fs::remove_file(dir.join("report.md")).unwrap();
    fs::write(dir.join("charts/mine.svg"), "<svg/>").unwrap();
    let results = fs::read(dir.join("results.json")).unwrap();
    refused_naming(&report(&dir), &dir.join("charts"));
    assert_eq!(fs::read(dir.join("charts/mine.svg")).unwrap(), b"<svg/>");
    assert!(!dir.join("report.md").exists(), "nothing was written");
    assert_eq!(fs::read(dir.join("results.json")).unwrap(), results);
}

#[test]
fn a_plain_rerun_replaces_its_own_files_and_removes_those_the_report_no_longer_has() {
    let two_points = perf_hash_sweep(
        "duration_us = 10\nwarmup_us = 2\nrepetitions = 1",
        &["fixed-256", "private-6.17"],
        "[2, 4]",
    );
    let (s, wide) = Scratch::holding("fs-plain-rerun", "wide.toml", &two_points);
    let narrow = s.0.join("narrow.toml");
    fs::write(&narrow, tiny_sweep()).unwrap();
    let dir = s.0.join("c");
    succeeded(&run(&wide, &dir, &["--plain"]));
    assert!(dir.join("points/point-1.md").is_file());
    succeeded(&run(&narrow, &dir, &["--plain", "--overwrite"]));
    let fresh = s.0.join("fresh");
    succeeded(&run(&narrow, &fresh, &["--plain"]));
    for name in ["results.json", "results.csv", "points/point-0.md"] {
        assert_eq!(
            fs::read(dir.join(name)).unwrap(),
            fs::read(fresh.join(name)).unwrap(),
            "{name}"
        );
    }
    assert!(!dir.join("points/point-1.md").exists());
    assert_eq!(links_and_generations(&dir), Vec::<PathBuf>::new());
}

#[test]
fn a_lock_file_that_is_a_link_is_refused_and_its_target_unchanged() {
    let (s, config) = with_config("fs-lock");
    let dir = published(&s, &config);
    let target = s.0.join("precious.txt");
    fs::write(&target, "precious").unwrap();
    let lock = dir.join(".futexsim.lock");
    fs::remove_file(&lock).unwrap();
    symlink(&target, &lock).unwrap();
    refused_naming(&report(&dir), &lock);
    refused_naming(&run(&config, &dir, &[]), &lock);
    assert_eq!(fs::read_to_string(&target).unwrap(), "precious");
}

#[test]
fn files_named_like_temporary_ones_and_a_linked_runs_directory_are_left_alone() {
    let (s, config) = with_config("fs-temps");
    let dir = published(&s, &config);
    fs::write(dir.join(".notes.tmp-7"), "mine").unwrap();
    fs::write(dir.join(".x.tmp-99999999"), "mine too").unwrap();
    succeeded(&run(&config, &dir, &[]));
    assert_eq!(
        fs::read_to_string(dir.join(".notes.tmp-7")).unwrap(),
        "mine"
    );
    assert_eq!(
        fs::read_to_string(dir.join(".x.tmp-99999999")).unwrap(),
        "mine too"
    );

    // runs/ as a link to a user's directory: refused, nothing in it touched.
    let users = s.0.join("users");
    fs::create_dir(&users).unwrap();
    fs::write(users.join(".a.json.tmp-99999999"), "data").unwrap();
    fs::write(users.join("0123456789abcdef.json"), "{}").unwrap();
    fs::remove_dir_all(dir.join("runs")).unwrap();
    symlink(&users, dir.join("runs")).unwrap();
    refused_naming(&run(&config, &dir, &[]), &dir.join("runs"));
    let mut left: Vec<_> = fs::read_dir(&users)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(left, [".a.json.tmp-99999999", "0123456789abcdef.json"]);
}

#[test]
fn validate_never_overwrites_a_report_md_it_did_not_write() {
    let s = Scratch::new("fs-validate");
    let cases = crate::validate::two_cases(&s.0);
    let out = s.0.join("out");
    fs::create_dir(&out).unwrap();
    fs::write(out.join("report.md"), "my own report").unwrap();
    let args = [
        "validate",
        "--jobs",
        "1",
        "--no-fail",
        "--cases",
        cases.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    refused_naming(&futexsim(&args), &out.join("report.md"));
    assert_eq!(
        fs::read_to_string(out.join("report.md")).unwrap(),
        "my own report"
    );
    // Its own report, unedited, it replaces.
    fs::remove_file(out.join("report.md")).unwrap();
    succeeded(&futexsim(&args));
    succeeded(&futexsim(&args));
}

fn import_args<'a>(csv: &'a str, out: &'a str) -> Vec<&'a str> {
    vec!["machine", "import", csv, "--out", out]
}

fn c2c_csv() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/machine_import/c2c-2s-32c-ccx8-smt2.csv")
        .display()
        .to_string()
}

#[test]
fn machine_import_refuses_a_fifo_a_link_and_a_users_file_as_its_output() {
    let s = Scratch::new("fs-import");
    let csv = c2c_csv();
    let fifo = s.0.join("fifo.toml");
    mkfifo(&fifo);
    let (finished, out) = bounded(
        &import_args(&csv, fifo.to_str().unwrap()),
        Duration::from_secs(20),
    );
    assert!(finished, "machine import blocked on a FIFO");
    refused_naming(&out, &fifo);
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());

    let mine = s.0.join("mine.toml");
    fs::write(&mine, "# my profile\n").unwrap();
    refused_naming(&futexsim(&import_args(&csv, mine.to_str().unwrap())), &mine);
    assert_eq!(fs::read_to_string(&mine).unwrap(), "# my profile\n");

    let link = s.0.join("link.toml");
    symlink(&mine, &link).unwrap();
    refused_naming(&futexsim(&import_args(&csv, link.to_str().unwrap())), &link);
    assert_eq!(fs::read_to_string(&mine).unwrap(), "# my profile\n");
}

#[test]
fn a_bare_file_name_as_out_writes_there_and_its_own_profile_is_replaced() {
    let s = Scratch::new("fs-bare");
    let csv = c2c_csv();
    for _ in 0..2 {
        let out = Command::new(env!("CARGO_BIN_EXE_futexsim"))
            .current_dir(&s.0)
            .args(import_args(&csv, "mine.toml"))
            .output()
            .unwrap();
        succeeded(&out);
    }
    assert!(fs::read_to_string(s.0.join("mine.toml"))
        .unwrap()
        .contains("[topology]"));
}

#[test]
fn a_fifo_where_a_run_file_or_the_campaign_mark_goes_is_refused_without_blocking() {
    let (s, config) = with_config("fs-fifo");
    let dir = published(&s, &config);
    let run_file = fs::read_dir(dir.join("runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    fs::remove_file(&run_file).unwrap();
    mkfifo(&run_file);
    let args = [
        "run",
        config.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ];
    let (finished, out) = bounded(&args, Duration::from_secs(30));
    assert!(finished, "run blocked on a FIFO in runs/");
    refused_naming(&out, &run_file);
    assert!(fs::symlink_metadata(&run_file)
        .unwrap()
        .file_type()
        .is_fifo());
    fs::remove_file(&run_file).unwrap();

    let mark = dir.join("campaign.json");
    fs::remove_file(&mark).unwrap();
    mkfifo(&mark);
    let (finished, out) = bounded(&args, Duration::from_secs(30));
    assert!(finished, "run blocked on a FIFO as campaign.json");
    refused_naming(&out, &mark);
    assert!(fs::symlink_metadata(&mark).unwrap().file_type().is_fifo());
}

#[test]
fn a_config_that_is_a_fifo_is_refused_without_blocking() {
    let s = Scratch::new("fs-config-fifo");
    let fifo = s.0.join("c.toml");
    mkfifo(&fifo);
    let out_dir = s.0.join("out");
    let (finished, out) = bounded(
        &[
            "run",
            fifo.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ],
        Duration::from_secs(20),
    );
    assert!(finished, "run blocked reading a FIFO");
    refused_naming(&out, &fifo);
    assert!(!out_dir.exists());
}

#[test]
fn report_waits_for_the_futexsim_holding_the_lock_before_it_reads() {
    let (s, config) = with_config("fs-wait");
    let source = published(&s, &config);
    // A directory a futexsim is still making: only its lock, held.
    let dir = s.0.join("making");
    fs::create_dir(&dir).unwrap();
    let lock = dir.join(".futexsim.lock");
    fs::write(&lock, "").unwrap();
    let holder = Command::new("flock")
        .arg(&lock)
        .arg("-c")
        .arg(format!(
            "sleep 1 && cp -a {}/. {}/",
            source.display(),
            dir.display()
        ))
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let out = report(&dir);
    let stderr = succeeded(&out);
    assert!(stderr.contains("waiting for"), "{stderr}");
    let mut holder = holder;
    assert!(holder.wait().unwrap().success());
    assert_eq!(
        fs::read(dir.join("results.json")).unwrap(),
        fs::read(source.join("results.json")).unwrap()
    );
}

#[test]
fn two_runs_started_together_on_a_new_directory_both_finish() {
    let (s, config) = with_config("fs-together");
    let dir = s.0.join("c");
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_futexsim"))
            .args([
                "run",
                config.to_str().unwrap(),
                "--out",
                dir.to_str().unwrap(),
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    for _ in 0..5 {
        let _ = fs::remove_dir_all(&dir);
        let (a, b) = (spawn(), spawn());
        succeeded(&a.wait_with_output().unwrap());
        succeeded(&b.wait_with_output().unwrap());
    }
}

/// What a reader of a report directory sees: each name's bytes through
/// its links (report.md without its lines of the simulator's own speed
/// and the date, which differ between runs); absent names are left out.
fn visible(dir: &Path) -> Vec<(String, Vec<u8>)> {
    ["report.md", "results.json", "results.csv"]
        .iter()
        .filter_map(|name| {
            let bytes = fs::read(dir.join(name)).ok()?;
            let bytes = match *name {
                "report.md" => String::from_utf8_lossy(&bytes)
                    .lines()
                    .filter(|l| !l.contains("simulator speed") && !l.contains("run date"))
                    .collect::<Vec<_>>()
                    .join("\n")
                    .into_bytes(),
                _ => bytes,
            };
            Some((name.to_string(), bytes))
        })
        .collect()
}

/// Runs `args` with the n-th filesystem operation failed (`fail`) or the
/// process killed there (`kill`). None once n is past the last operation
/// (the command ran whole).
fn with_fault(how: &str, n: u32, args: &[&str]) -> Option<Output> {
    let out = Command::new(env!("CARGO_BIN_EXE_futexsim"))
        .args(args)
        .env("FUTEXSIM_FAULT", format!("{how}:{n}"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{how}:{n}: {stderr}");
    let faulted = out.status.code().is_none() || stderr.contains("fault injected");
    if !faulted {
        assert!(out.status.success(), "{how}:{n}: {stderr}");
    }
    faulted.then_some(out)
}

/// Every filesystem operation of a campaign's creation and of a publish,
/// failed in turn and then killed in turn: after each, the report a reader
/// sees is the old one whole or the new one whole (or none, in a directory
/// that had none), a user's file beside it is untouched, and running again
/// resumes to the same bytes as a run without faults.
#[test]
fn every_step_of_a_campaigns_creation_and_a_publish_fails_or_dies_into_old_or_new() {
    let (s, config) = with_config("fs-faults");
    let clean = s.0.join("clean");
    succeeded(&run(&config, &clean, &["--rule", "64"]));
    let new = visible(&clean);
    let old_dir = s.0.join("old");
    succeeded(&run(&config, &old_dir, &[]));
    fs::write(old_dir.join("notes.txt"), "a user's notes").unwrap();
    let old = visible(&old_dir);
    assert_ne!(old, new);
    for how in ["fail", "kill"] {
        for start in [None, Some(&old_dir)] {
            let mut n = 1;
            loop {
                let dir = s.0.join(format!("{how}-{n}"));
                if let Some(start) = start {
                    let copied = Command::new("cp").arg("-a").arg(start).arg(&dir).status();
                    assert!(copied.unwrap().success());
                }
                let (c, d) = (config.to_str().unwrap(), dir.to_str().unwrap());
                let args = ["run", c, "--out", d, "--rule", "64", "--overwrite"];
                if with_fault(how, n, &args).is_none() {
                    assert!(n > 20, "a run makes more than 20 filesystem operations");
                    fs::remove_dir_all(&dir).unwrap();
                    break;
                }
                let seen = visible(&dir);
                assert!(
                    (start.is_none() && seen.is_empty()) || seen == old || seen == new,
                    "{how}:{n} left a report neither old nor new: {:?}",
                    seen.iter().map(|(name, _)| name).collect::<Vec<_>>()
                );
                if start.is_some() {
                    assert_eq!(
                        fs::read_to_string(dir.join("notes.txt")).unwrap(),
                        "a user's notes"
                    );
                }
                succeeded(&run(&config, &dir, &["--rule", "64", "--overwrite"]));
                assert!(visible(&dir) == new, "{how}:{n} resumed to other bytes");
                fs::remove_dir_all(&dir).unwrap();
                n += 1;
            }
        }
    }
}

/// A plain publish replaces its files one by one, so a fault part-way may
/// leave some files old and some new: every filesystem operation failed in
/// turn and then killed in turn, each file a reader sees is still its old
/// bytes or its new bytes whole, a user's file beside them is untouched, no
/// link or generation appears, and running again finishes the publish to
/// the same bytes as a run without faults.
#[test]
fn every_step_of_a_plain_publish_fails_or_dies_into_each_file_old_or_new() {
    let (s, config) = with_config("fs-plain-faults");
    let clean = s.0.join("clean");
    succeeded(&run(&config, &clean, &["--plain", "--rule", "64"]));
    let new = visible(&clean);
    let old_dir = s.0.join("old");
    succeeded(&run(&config, &old_dir, &["--plain"]));
    fs::write(old_dir.join("notes.txt"), "a user's notes").unwrap();
    let old = visible(&old_dir);
    assert_ne!(old, new);
    for how in ["fail", "kill"] {
        let mut n = 1;
        loop {
            let dir = s.0.join(format!("{how}-{n}"));
            let copied = Command::new("cp")
                .arg("-a")
                .arg(&old_dir)
                .arg(&dir)
                .status();
            assert!(copied.unwrap().success());
            let (c, d) = (config.to_str().unwrap(), dir.to_str().unwrap());
            let args = [
                "run",
                c,
                "--out",
                d,
                "--plain",
                "--rule",
                "64",
                "--overwrite",
            ];
            if with_fault(how, n, &args).is_none() {
                assert!(
                    n > 20,
                    "a plain publish makes more than 20 filesystem operations"
                );
                fs::remove_dir_all(&dir).unwrap();
                break;
            }
            for (name, bytes) in visible(&dir) {
                let was = old.iter().any(|(o, b)| *o == name && *b == bytes);
                let will_be = new.iter().any(|(o, b)| *o == name && *b == bytes);
                assert!(was || will_be, "{how}:{n} left {name} neither old nor new");
            }
            // A killed writer's temporary name may stay until the next run.
            let left: Vec<PathBuf> = links_and_generations(&dir)
                .into_iter()
                .filter(|p| !p.to_string_lossy().contains(".tmp-"))
                .collect();
            assert_eq!(left, Vec::<PathBuf>::new(), "{how}:{n}");
            assert_eq!(
                fs::read_to_string(dir.join("notes.txt")).unwrap(),
                "a user's notes"
            );
            succeeded(&run(
                &config,
                &dir,
                &["--plain", "--rule", "64", "--overwrite"],
            ));
            assert!(visible(&dir) == new, "{how}:{n} resumed to other bytes");
            assert_eq!(
                links_and_generations(&dir),
                Vec::<PathBuf>::new(),
                "{how}:{n}"
            );
            fs::remove_dir_all(&dir).unwrap();
            n += 1;
        }
    }
}
