//! Records the git commit a binary was built from, so every result set can
//! say which code produced it.

use std::process::Command;

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
        "build.rs",
    ] {
        println!("cargo:rerun-if-changed={path}");
    }
}
