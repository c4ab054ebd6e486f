//! What the tests that drive the futexsim binary share.

use std::fs;
use std::path::PathBuf;
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
#[allow(dead_code)] // not every test binary that shares this module runs it this way
pub fn futexsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_futexsim"))
        .args(args)
        .output()
        .unwrap()
}
