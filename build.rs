//! Records the git commit a binary was built from, so every result set can
//! say which code produced it, and a hash of the source and compiler, which
//! names the build in run ids.

use std::collections::hash_map::DefaultHasher;
use std::hash::Hasher;
use std::path::{Path, PathBuf};
use std::process::Command;

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

fn main() {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = git(&["describe", "--always", "--dirty", "--abbrev=12"])
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=FUTEXSIM_GIT_COMMIT={commit}");
    println!("cargo:rustc-env=FUTEXSIM_SOURCE_HASH={}", source_hash());
    // A new commit, a staged change or an edit changes the description.
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        for file in ["HEAD", "index", "refs"] {
            println!("cargo:rerun-if-changed={dir}/{file}");
        }
    }
    for path in [
        "sim",
        "configs",
        "benches",
        "tests",
        "Cargo.toml",
        "Cargo.lock",
        "build.rs",
    ] {
        println!("cargo:rerun-if-changed={path}");
    }
}
