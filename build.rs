//! Records the git commit a binary was built from, so every result set can
//! say which code produced it, and a hash of the source and compiler, which
//! names the build in run ids.
//!
//! The commit is "-dirty" when a file the binary is built from differs from
//! that commit; files that do not go into the binary (docs, reports, tests)
//! do not make it dirty. The build script reruns only when one of those
//! files changes or HEAD moves, never on git's index: `git status` rewrites
//! the index, and watching it would rebuild after every `git status`.

use std::collections::hash_map::DefaultHasher;
use std::hash::Hasher;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What the binary is built from: its source, the configs it embeds
/// (`include_str!`: the default, the machine profiles, the validation cases
/// and the configs they name, all under configs/), and the manifest, lock
/// file and this script.
const INPUTS: [&str; 5] = ["sim", "configs", "Cargo.toml", "Cargo.lock", "build.rs"];

/// Files under `dir`, recursively, in a fixed order.
fn files_under(dir: &Path, into: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            files_under(&path, into);
        } else {
            into.push(path);
        }
    }
}

/// Everything that decides what the binary computes: its source (the
/// embedded configs are part of the scenarios, which run ids hash anyway),
/// its dependencies' versions, the compiler and the target.
fn source_hash() -> String {
    let mut files = Vec::new();
    files_under(Path::new("sim"), &mut files);
    files.extend(["Cargo.toml", "Cargo.lock", "build.rs"].map(PathBuf::from));
    let mut h = DefaultHasher::new();
    for file in files {
        h.write(file.to_string_lossy().as_bytes());
        h.write(&std::fs::read(&file).unwrap_or_default());
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(rustc)
        .arg("-V")
        .output()
        .map(|o| o.stdout)
        .unwrap_or_default();
    h.write(&version);
    h.write(std::env::var("TARGET").unwrap_or_default().as_bytes());
    format!("{:016x}", h.finish())
}

fn git(args: &[&str]) -> Option<String> {
    Command::new("git")
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// `git describe` of HEAD, with "-dirty" when an input differs from it
/// (staged, unstaged or untracked); "unknown" outside a git checkout.
fn commit() -> String {
    let Some(name) = git(&["describe", "--always", "--abbrev=12"]) else {
        return "unknown".into();
    };
    let mut status = vec!["status", "--porcelain", "--"];
    status.extend(INPUTS);
    match git(&status) {
        Some(changes) if changes.is_empty() => name,
        _ => format!("{name}-dirty"),
    }
}

/// The files that change when HEAD moves: HEAD itself, the branch file it
/// names, and packed-refs (where a branch lives once packed). Only existing
/// files are watched: cargo reruns on every build for a missing one.
fn head_files() -> Vec<String> {
    let mut refs = vec!["HEAD".to_string(), "packed-refs".to_string()];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        refs.push(branch);
    }
    refs.iter()
        .filter_map(|r| git(&["rev-parse", "--git-path", r]))
        .filter(|path| Path::new(path).exists())
        .collect()
}

fn main() {
    println!("cargo:rustc-env=FUTEXSIM_GIT_COMMIT={}", commit());
    println!("cargo:rustc-env=FUTEXSIM_SOURCE_HASH={}", source_hash());
    for path in head_files() {
        println!("cargo:rerun-if-changed={path}");
    }
    for path in INPUTS {
        println!("cargo:rerun-if-changed={path}");
    }
}
