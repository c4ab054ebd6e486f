//! One futexsim writing in a campaign directory at a time, and no reader
//! while it writes: two processes writing the same runs and the same report
//! would waste each other's work and race on the report's swap, and a reader
//! between a writer's steps could take one campaign's results for another's.
//! The lock is an flock on a file in the directory, so the kernel releases
//! it whenever its holder ends, however it ends.
//!
//! The shards of one `futexsim advise` question are the exception
//! (advise/evaluate.rs): each takes the lock to mark a point's directory and
//! lets it go while it simulates its share, since their runs are disjoint,
//! every file is written whole under its own name, and a temporary name
//! carries its writer's pid, so no other futexsim removes it while it lives.

use crate::files::{self, FileError};
use std::fs::{self, File};
use std::io::{Seek, Write};
use std::path::Path;

/// The lock file: futexsim's own, like the rest of a campaign directory.
pub const LOCK_FILE: &str = ".futexsim.lock";

/// Held while it lives; dropping it (or the process ending) unlocks.
pub struct DirLock {
    _file: Option<File>,
}

/// Locks `dir` (which exists) for writing, waiting for the futexsim that
/// holds it, if any, to finish; says so on stderr, naming that process,
/// while it waits.
pub fn lock(dir: &Path) -> Result<DirLock, FileError> {
    let path = dir.join(LOCK_FILE);
    let mut file = files::open_lock_file(&path)?;
    let io = |source| FileError::Io {
        path: path.clone(),
        source,
    };
    match file.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => {
            say_waiting(dir, &path);
            file.lock().map_err(io)?;
        }
        Err(fs::TryLockError::Error(e)) => return Err(io(e)),
    }
    // Who holds it, for the next one's message; the lock is what counts.
    file.set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| writeln!(file, "{}", std::process::id()))
        .map_err(io)?;
    Ok(DirLock { _file: Some(file) })
}

/// Locks `dir` for reading: waits while a futexsim writes there, and lets
/// other readers in. A directory futexsim cannot write (read-only, or
/// another user's), or that is not there, has no writer to wait for: it
/// is read without a lock.
pub fn lock_shared(dir: &Path) -> Result<DirLock, FileError> {
    let path = dir.join(LOCK_FILE);
    let file = match files::open_lock_file(&path) {
        Ok(file) => file,
        Err(FileError::Io { source, .. })
            if matches!(
                source.raw_os_error(),
                Some(libc::EACCES | libc::EROFS | libc::EPERM | libc::ENOENT | libc::ENOTDIR)
            ) =>
        {
            return Ok(DirLock { _file: None })
        }
        Err(e) => return Err(e),
    };
    match file.try_lock_shared() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => {
            say_waiting(dir, &path);
            file.lock_shared().map_err(|source| FileError::Io {
                path: path.clone(),
                source,
            })?;
        }
        Err(fs::TryLockError::Error(source)) => return Err(FileError::Io { path, source }),
    }
    Ok(DirLock { _file: Some(file) })
}

fn say_waiting(dir: &Path, path: &Path) {
    let holder = files::read_text(path, crate::limits::LOCK_FILE_CAP).unwrap_or_default();
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
                let second = lock_shared(&dir).unwrap();
                tx.send(()).unwrap();
                drop(second);
            })
        };
        assert!(
            rx.recv_timeout(std::time::Duration::from_millis(300))
                .is_err(),
            "a reader waits while a writer holds the lock"
        );
        drop(first);
        rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
        waiter.join().unwrap();
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_lock_file_that_is_a_link_is_refused_and_its_target_kept() {
        let dir = std::env::temp_dir().join(format!("futexsim-lock-link-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let target = dir.join("user.txt");
        fs::write(&target, b"a user's notes").unwrap();
        std::os::unix::fs::symlink(&target, dir.join(LOCK_FILE)).unwrap();
        assert!(matches!(lock(&dir), Err(FileError::Refused { .. })));
        assert_eq!(fs::read(&target).unwrap(), b"a user's notes");
        fs::remove_dir_all(&dir).unwrap();
    }
}
