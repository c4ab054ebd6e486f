//! tests/bad_configs/: one file per kind of mistake a config can hold. Each
//! starts with `# expect: FILE:LINE:COLUMN: FRAGMENT`, the place the error
//! must name and what its message says (fragments that must appear in that
//! order, separated by ` ... `); `# rule: RULE` lines are passed as `--rule`. Every file must be refused, in one line, without a panic.
//! FILE is relative to this directory: a mistake in a machine profile a
//! config names (under profiles/) is placed in that profile.

use futexsim::config::Config;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

struct Case {
    path: PathBuf,
    file: String,
    text: String,
    place: String,
    fragment: String,
    rules: Vec<String>,
}

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad_configs")
}

fn cases() -> Vec<Case> {
    common::toml_files("tests/bad_configs")
        .into_iter()
        .map(|path| {
            let file = path.file_name().unwrap().to_string_lossy().into_owned();
            let text = fs::read_to_string(&path).unwrap();
            let expect = text
                .lines()
                .find_map(|l| l.strip_prefix("# expect: "))
                .unwrap_or_else(|| panic!("{file} has no '# expect:' line"));
            // FILE:LINE:COLUMN: FRAGMENT
            let mut parts = expect.splitn(4, ':');
            let place: Vec<&str> = parts.by_ref().take(3).collect();
            let fragment = parts.next().unwrap_or_default().trim().to_string();
            let rules = text
                .lines()
                .filter_map(|l| l.strip_prefix("# rule: "))
                .map(str::to_string)
                .collect();
            Case {
                path: path.clone(),
                place: place.join(":"),
                file,
                text,
                fragment,
                rules,
            }
        })
        .collect()
}

/// Whether `text` holds every ` ... `-separated fragment, in order.
fn says_in_order(text: &str, fragments: &str) -> bool {
    let mut rest = text;
    fragments.split(" ... ").all(|f| match rest.find(f) {
        Some(at) => {
            rest = &rest[at + f.len()..];
            true
        }
        None => false,
    })
}

#[test]
fn every_bad_config_is_refused_with_its_message() {
    let cases = cases();
    assert!(cases.len() >= 30, "only {} bad configs", cases.len());
    let mut failures = Vec::new();
    let mut messages = BTreeSet::new();
    for case in &cases {
        let parsed = std::panic::catch_unwind(|| {
            // Named by its path, as `futexsim run` names it, so that the
            // profiles it names are found beside it.
            let file = case.path.display().to_string();
            Config::parse(&file, "bad", &case.text, &case.rules).map(|c| c.points.len())
        });
        let error = match parsed {
            Err(_) => {
                failures.push(format!("{}: panicked", case.file));
                continue;
            }
            Ok(Ok(points)) => {
                failures.push(format!("{}: accepted ({points} points)", case.file));
                continue;
            }
            Ok(Err(e)) => e.to_string(),
        };
        // A `--rule` has no file.
        let expected_start = match case.place.split(':').next() {
            Some(file) if file.ends_with(".toml") => {
                format!("{}: ", dir().join(&case.place).display())
            }
            _ => format!("{}: ", case.place),
        };
        if !error.starts_with(&expected_start)
            || !says_in_order(&error, &case.fragment)
            || error.contains('\n')
        {
            failures.push(format!(
                "{}: expected {expected_start}...{}...\n     got {error}",
                case.file, case.fragment
            ));
        }
        if !messages.insert(
            error
                .split_once(": ")
                .map_or(error.clone(), |(_, m)| m.to_string()),
        ) {
            failures.push(format!("{}: the same message as another file", case.file));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// Through the binary: exit code 2, one line on stderr, nothing written.
#[test]
fn the_command_refuses_bad_configs_in_one_line_with_exit_2() {
    let cases = cases();
    let out = std::env::temp_dir().join(format!("futexsim-bad-{}", std::process::id()));
    for case in cases.iter().step_by(7) {
        let mut command = Command::new(env!("CARGO_BIN_EXE_futexsim"));
        command.arg("run").arg(&case.path).arg("--out").arg(&out);
        for rule in &case.rules {
            command.args(["--rule", rule]);
        }
        let result = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&result.stderr);
        assert_eq!(result.status.code(), Some(2), "{}: {stderr}", case.file);
        assert_eq!(stderr.lines().count(), 1, "{}: {stderr}", case.file);
        assert!(
            says_in_order(&stderr, &case.fragment),
            "{}: {stderr}",
            case.file
        );
        assert!(result.stdout.is_empty(), "{}", case.file);
        assert!(!out.exists(), "{}: nothing is written", case.file);
    }
}
