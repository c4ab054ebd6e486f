//! End to end over directory states: a published campaign (or a copy of
//! one with its links dereferenced, or nothing) with some of its names
//! replaced by what a user, a copy or a crash leaves (a link to a user's
//! file or directory, a FIFO, a device, a user's file, a directory, a cut
//! file, a foreign file beside them), then one of the commands that read or
//! write it. Each must end in exit 0, 1 or 2, never a panic, an abort or a
//! hang, and leave every user's file as it was: same kind, same bytes, and
//! the user's directories holding what they held.
//!
//! CI runs a few cases. For long runs, FUTEXSIM_DIRS_SECONDS keeps
//! generating cases for that long and FUTEXSIM_DIRS_SEED picks where to
//! start: `FUTEXSIM_DIRS_SECONDS=1800 cargo test --release --test
//! integration fuzz_dirs:: -- --nocapture`. A failing case prints its seed.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::fs;
use std::os::unix::fs::{symlink, FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{perf_hash_sweep, Scratch};

/// No command on these tiny campaigns takes longer.
const WALL_LIMIT: Duration = Duration::from_secs(60);

/// Cases CI runs.
const CI_CASES: u64 = 16;

/// The names of a campaign directory a state may change.
const NAMES: [&str; 14] = [
    ".futexsim.lock",
    "campaign.json",
    "runs",
    "runs/RUN",
    ".report",
    "report.md",
    "results.json",
    "results.csv",
    "charts",
    "charts/throughput.svg",
    "points",
    "speed.json",
    "GENERATION/manifest",
    "GENERATION/results.json",
];

/// What a user's file is, as it must stay.
#[derive(Debug, PartialEq)]
enum Kept {
    File(Vec<u8>),
    Fifo,
    Device(u64),
    Link(PathBuf),
    Dir(Vec<String>),
}

fn kept(path: &Path) -> Option<Kept> {
    let meta = fs::symlink_metadata(path).ok()?;
    Some(if meta.file_type().is_fifo() {
        Kept::Fifo
    } else if meta.file_type().is_char_device() {
        Kept::Device(meta.rdev())
    } else if meta.file_type().is_symlink() {
        // Never read through a link: its target may be a FIFO, and the
        // fuzzer itself must not block where futexsim may not.
        Kept::Link(fs::read_link(path).ok()?)
    } else if meta.is_dir() {
        let mut names: Vec<String> = fs::read_dir(path)
            .ok()?
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        Kept::Dir(names)
    } else {
        Kept::File(fs::read(path).ok()?)
    })
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// A character device like /dev/null (1, 3) at `path`, where the test may
/// make one (as root); a FIFO where it may not. Writing to it would not
/// block, so only its kind and number show whether it was replaced.
fn device_or_fifo(path: &Path) -> &'static str {
    let made = Command::new("mknod")
        .arg(path)
        .args(["c", "1", "3"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if made {
        "a device"
    } else {
        mkfifo(path);
        "a FIFO"
    }
}

fn remove_any(path: &Path) {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            let _ = fs::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = fs::remove_file(path);
        }
        Err(_) => {}
    }
}

/// Where a name really is when it is made: a name under a link to the live
/// generation keeps its file in that generation once a newer one is live,
/// and later changes to the links must not move it.
fn located(path: &Path) -> PathBuf {
    match (path.parent().map(fs::canonicalize), path.file_name()) {
        (Some(Ok(parent)), Some(name)) => parent.join(name),
        _ => path.to_path_buf(),
    }
}

/// One generated case: where it happens, and the user's files it must keep.
struct Case {
    dir: PathBuf,
    users: Vec<PathBuf>,
    what: Vec<String>,
}

/// Resolves a name of NAMES in `dir`: RUN is a run file, GENERATION the
/// live generation (whatever is there, when there is one).
fn resolve(dir: &Path, name: &str) -> PathBuf {
    let first = |sub: &Path, want: &dyn Fn(&str) -> bool| {
        fs::read_dir(sub).ok().and_then(|d| {
            let mut names: Vec<String> = d
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| want(n))
                .collect();
            names.sort();
            names.into_iter().next()
        })
    };
    let name = if name.contains("RUN") {
        let run = first(&dir.join("runs"), &|n| n.ends_with(".json"))
            .unwrap_or_else(|| "0123456789abcdef.json".into());
        name.replace("RUN", &run)
    } else if name.contains("GENERATION") {
        let generation =
            first(dir, &|n| n.starts_with(".report-")).unwrap_or_else(|| ".report-1-1".into());
        name.replace("GENERATION", &generation)
    } else {
        name.to_string()
    };
    dir.join(name)
}

/// Builds case `seed` in `root` from the published campaign `base`.
fn build(root: &Path, base: &Path, rng: &mut Xoshiro256PlusPlus) -> Case {
    let _ = fs::remove_dir_all(root);
    fs::create_dir_all(root.join("user")).unwrap();
    let dir = root.join("c");
    let mut what = Vec::new();
    match rng.gen_range(0..6) {
        0 => what.push("no directory".into()),
        1 => {
            let ok = Command::new("cp").arg("-rL").arg(base).arg(&dir).status();
            assert!(ok.unwrap().success());
            what.push("a copy with links dereferenced".into());
        }
        _ => {
            let ok = Command::new("cp").arg("-a").arg(base).arg(&dir).status();
            assert!(ok.unwrap().success());
            what.push("the campaign".into());
        }
    }
    let mut users = Vec::new();
    let user_file = root.join("user/notes.txt");
    fs::write(&user_file, "a user's notes").unwrap();
    users.push(user_file.clone());
    let user_dir = root.join("user/data");
    fs::create_dir(&user_dir).unwrap();
    fs::write(user_dir.join("0123456789abcdef.json"), "{}").unwrap();
    fs::write(user_dir.join(".a.json.tmp-99999999"), "mine").unwrap();
    users.push(user_dir.clone());
    if dir.exists() {
        for _ in 0..rng.gen_range(1..=3) {
            let name = *NAMES.choose(rng).unwrap();
            let path = resolve(&dir, name);
            // Only names inside the campaign: one under a link to the
            // user's area would be this test changing the user's files.
            let inside = fs::canonicalize(&dir).ok().is_some_and(|top| {
                path.parent()
                    .and_then(|p| fs::canonicalize(p).ok())
                    .is_some_and(|p| p.starts_with(&top) && p.is_dir())
            });
            if !inside {
                continue;
            }
            let is_run = name.starts_with("runs/");
            // What this change replaces is no longer the user's to keep.
            let replaced = located(&path);
            users.retain(|u| !u.starts_with(&replaced));
            match rng.gen_range(0..9) {
                0 => {
                    remove_any(&path);
                    symlink(&user_file, &path).unwrap();
                    what.push(format!("{name}: a link to a user's file"));
                }
                1 => {
                    remove_any(&path);
                    symlink(&user_dir, &path).unwrap();
                    what.push(format!("{name}: a link to a user's directory"));
                }
                2 => {
                    remove_any(&path);
                    mkfifo(&path);
                    users.push(located(&path));
                    what.push(format!("{name}: a FIFO"));
                }
                7 => {
                    remove_any(&path);
                    let kind = device_or_fifo(&path);
                    users.push(located(&path));
                    what.push(format!("{name}: {kind}"));
                }
                3 => {
                    remove_any(&path);
                    fs::write(&path, "a user's own").unwrap();
                    // A file named for a planned run is futexsim's by its
                    // name: it may be simulated again and replaced.
                    if !is_run {
                        users.push(located(&path));
                    }
                    what.push(format!("{name}: a user's file"));
                }
                4 => {
                    remove_any(&path);
                    fs::create_dir(&path).unwrap();
                    fs::write(path.join("mine.svg"), "<svg/>").unwrap();
                    users.push(located(&path.join("mine.svg")));
                    what.push(format!("{name}: a directory of a user's"));
                }
                5 => {
                    // Only a regular file is cut: reading a FIFO would block.
                    let regular = fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
                    if let Some(bytes) = regular.then(|| fs::read(&path).ok()).flatten() {
                        let cut = rng.gen_range(0..=bytes.len());
                        remove_any(&path);
                        fs::write(&path, &bytes[..cut]).unwrap();
                        what.push(format!("{name}: cut to {cut} bytes"));
                    }
                }
                6 => {
                    remove_any(&path);
                    what.push(format!("{name}: removed"));
                }
                _ => {
                    let foreign = dir.join(
                        [
                            ".x.tmp-7",
                            ".report-9-9",
                            "notes.md",
                            ".y.json.tmp-99999999-0000000000000000",
                        ]
                        .choose(rng)
                        .unwrap(),
                    );
                    if !foreign.exists() {
                        fs::write(&foreign, "a user's").unwrap();
                        users.push(located(&foreign));
                        what.push(format!("{}: a user's file beside", foreign.display()));
                    }
                }
            }
        }
    }
    Case { dir, users, what }
}

/// A command over the case, as arguments.
fn command(
    case: &Case,
    root: &Path,
    base: &Path,
    config: &Path,
    cases: &Path,
    rng: &mut Xoshiro256PlusPlus,
) -> Vec<String> {
    let d = case.dir.display().to_string();
    let c = config.display().to_string();
    let csv = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/machine_import/c2c-2s-32c-ccx8-smt2.csv")
        .display()
        .to_string();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<String>>();
    match rng.gen_range(0..9) {
        0 | 1 => s(&["run", &c, "--out", &d]),
        2 => s(&["run", &c, "--out", &d, "--rule", "64", "--overwrite"]),
        3 => s(&["report", &d]),
        4 => s(&["c2c", &d]),
        5 => s(&["diff", &base.display().to_string(), &d]),
        6 => s(&[
            "merge",
            &d,
            "--out",
            &root.join("merged").display().to_string(),
        ]),
        7 => {
            let cases = cases.display().to_string();
            s(&[
                "validate",
                "--jobs",
                "1",
                "--no-fail",
                "--cases",
                &cases,
                "--out",
                &d,
            ])
        }
        _ => {
            let out = resolve(
                &case.dir,
                ["report.md", "profile.toml", "runs/RUN", "results.json"]
                    .choose(rng)
                    .unwrap(),
            );
            s(&[
                "machine",
                "import",
                &csv,
                "--out",
                &out.display().to_string(),
            ])
        }
    }
}

fn run_bounded(args: &[String]) -> (Option<i32>, String, bool) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_futexsim"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > WALL_LIMIT {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            return (None, String::from_utf8_lossy(&out.stderr).into(), false);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    let code = out.status.code();
    (code, String::from_utf8_lossy(&out.stderr).into(), true)
}

#[test]
fn no_directory_state_makes_a_command_panic_hang_or_touch_a_users_file() {
    let scratch = Scratch::new("fuzz-dirs");
    let config = scratch.0.join("tiny.toml");
    fs::write(
        &config,
        perf_hash_sweep(
            "duration_us = 10\nwarmup_us = 2\nrepetitions = 1",
            &["fixed-256", "private-6.17"],
            "[2]",
        ),
    )
    .unwrap();
    let base = scratch.0.join("base");
    let made = Command::new(env!("CARGO_BIN_EXE_futexsim"))
        .args([
            "run",
            config.to_str().unwrap(),
            "--out",
            base.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(made.status.success());
    let cases = crate::validate::two_cases(&scratch.0);
    let first: u64 = std::env::var("FUTEXSIM_DIRS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let seconds: Option<u64> = std::env::var("FUTEXSIM_DIRS_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok());
    let start = Instant::now();
    let mut exits = [0u64; 3];
    let mut seed = first;
    loop {
        match seconds {
            Some(s) if start.elapsed() >= Duration::from_secs(s) => break,
            None if seed >= first + CI_CASES => break,
            _ => {}
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let root = scratch.0.join("case");
        let case = build(&root, &base, &mut rng);
        let before: Vec<Option<Kept>> = case.users.iter().map(|p| kept(p)).collect();
        let args = command(&case, &root, &base, &config, &cases, &mut rng);
        let (code, stderr, finished) = run_bounded(&args);
        let context = format!("seed {seed}: {:?} after {:?}", args, case.what);
        assert!(finished, "{context}: no end within {WALL_LIMIT:?}");
        assert!(!stderr.contains("panicked"), "{context}: {stderr}");
        assert!(
            matches!(code, Some(0..=2)),
            "{context}: exit {code:?}: {stderr}"
        );
        for (path, was) in case.users.iter().zip(&before) {
            assert_eq!(
                &kept(path),
                was,
                "{context}: {} changed: {stderr}",
                path.display()
            );
        }
        if let Some(code) = code {
            exits[code as usize] += 1;
            // A long run lists the failures at run time, to be read: each
            // should be the filesystem's, not a refusal given the wrong code.
            if code == 1 && seconds.is_some() {
                eprintln!("exit 1, {context}: {}", stderr.trim());
            }
        }
        seed += 1;
    }
    eprintln!(
        "fuzz_dirs: {} cases from seed {first} in {:.0} s: exit 0 {}, 1 {}, 2 {}",
        seed - first,
        start.elapsed().as_secs_f64(),
        exits[0],
        exits[1],
        exits[2]
    );
}
