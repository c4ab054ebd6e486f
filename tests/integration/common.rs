//! What the tests that drive the futexsim binary share.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A test's own empty directory under the system's temporary one, removed
/// when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("futexsim-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Runs the futexsim binary to completion.
pub fn futexsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_futexsim"))
        .args(args)
        .output()
        .unwrap()
}

/// Runs `futexsim native ARGS`, which must succeed, and gives what it
/// printed: the lines a parser written for perf reads.
pub fn native(args: &[&str]) -> String {
    let out = futexsim(&[&["native"], args].concat());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

impl Scratch {
    /// A scratch directory holding `text` as `file`, and that file's path:
    /// how the tests that drive `futexsim run` start from a config.
    pub fn holding(name: &str, file: &str, text: &str) -> (Scratch, PathBuf) {
        let s = Scratch::new(name);
        let path = s.0.join(file);
        fs::write(&path, text).unwrap();
        (s, path)
    }
}

/// `futexsim run CONFIG --out OUT EXTRA...` to completion.
pub fn run_sweep(config: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "run",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    futexsim(&args)
}

/// The small campaign the tests of `futexsim run` simulate: perf bench
/// futex hash with 32 futexes a thread on icx-2s, over `tables` (presets)
/// and the CPU counts `cpus` (a TOML array), with `run` as the body of its
/// `[run]` section. One text, so that every such test runs the same kind
/// of sweep and a change to the config format is made once.
pub fn perf_hash_sweep(run: &str, tables: &[&str], cpus: &str) -> String {
    let tables: String = tables
        .iter()
        .map(|preset| format!("\n[[table]]\npreset = \"{preset}\"\n"))
        .collect();
    format!(
        r#"
[run]
{run}

[machine]
preset = "icx-2s"

[workload]
name = "perf-hash"
futexes = 32
{tables}
[sweep]
cpus = {cpus}
"#
    )
}

/// The `.toml` files of `dir` (under the crate's root), in name order: how
/// the tests kept as a folder of inputs find them.
pub fn toml_files(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut paths: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    paths.sort();
    paths
}
