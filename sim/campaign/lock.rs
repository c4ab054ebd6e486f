//! One futexsim at a time in a campaign directory: two processes writing
//! the same runs and the same report would waste each other's work and race
//! on the report's swap. The lock is an flock on a file in the directory, so
//! the kernel releases it whenever its holder ends, however it ends.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Seek, Write};
use std::path::{Path, PathBuf};

/// The lock file: futexsim's own, like the rest of a campaign directory.
pub const LOCK_FILE: &str = ".futexsim.lock";

/// Held while it lives; dropping it (or the process ending) unlocks.
pub struct DirLock {
    _file: File,
}

/// Locks `dir` (which exists), waiting for the futexsim that holds it, if
/// any, to finish; says so on stderr, naming that process, while it waits.
pub fn lock(dir: &Path) -> io::Result<DirLock> {
    let path: PathBuf = dir.join(LOCK_FILE);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => {
            let holder = fs::read_to_string(&path).unwrap_or_default();
            let holder = holder.trim();
            let who = if holder.is_empty() {
                "another futexsim".to_string()
            } else {
                format!("futexsim (pid {holder})")
            };
            eprintln!(
                "futexsim: waiting for {who}, which is working in {}",
                dir.display()
            );
            file.lock()?;
        }
        Err(fs::TryLockError::Error(e)) => return Err(e),
    }
    // Who holds it, for the next one's message; the lock is what counts.
    file.set_len(0)?;
    file.rewind()?;
    writeln!(file, "{}", std::process::id())?;
    Ok(DirLock { _file: file })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_waits_for_the_first_to_be_dropped() {
        let dir = std::env::temp_dir().join(format!("futexsim-lock-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let first = lock(&dir).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = {
            let dir = dir.clone();
            std::thread::spawn(move || {
                let second = lock(&dir).unwrap();
                tx.send(()).unwrap();
                drop(second);
            })
        };
        assert!(
            rx.recv_timeout(std::time::Duration::from_millis(300))
                .is_err(),
            "the second lock waits while the first is held"
        );
        drop(first);
        rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
        waiter.join().unwrap();
        fs::remove_dir_all(&dir).unwrap();
    }
}
