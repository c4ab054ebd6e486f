//! Files that are either whole or absent: written to a temporary name,
//! flushed to disk, then renamed over the old one. A kill at any moment
//! leaves the previous file or the new one, never half of either.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;

/// In the name of a file being written: `.NAME.tmp-PID`.
const TEMP_MARK: &str = ".tmp-";

pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "a file path has a name"))?;
    let tmp = dir.join(format!(
        ".{}{TEMP_MARK}{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut file = File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path)?;
        sync_dir(dir)
    })();
    if result.is_err() {
        // Best effort: the temporary file is garbage either way.
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Removes the temporary files a killed writer left in `dir`: no file is
/// whole until renamed, so none of them holds anything to keep. Those of a
/// writer still running (another futexsim on the same directory) are left.
pub fn remove_temp_files(dir: &Path) -> io::Result<usize> {
    let mut removed = 0;
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some((_, pid)) = name.rsplit_once(TEMP_MARK) else {
            continue;
        };
        let writer_alive = Path::new("/proc").join(pid).exists();
        if name.starts_with('.') && !writer_alive && entry.file_type()?.is_file() {
            fs::remove_file(entry.path())?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Makes a rename durable: the directory entry itself is flushed.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Peak resident memory of this process, from /proc (0 where there is none).
pub fn peak_rss_bytes() -> u64 {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kib| kib * 1024)
}

/// Starts the peak over from the present resident memory, so that a
/// campaign run after another in one process reports its own peak. Linux
/// only (writing 5 to clear_refs); elsewhere the peak is the process's.
pub fn reset_peak_rss() {
    let _ = fs::write("/proc/self/clear_refs", "5");
}

/// The current time as RFC 3339 UTC, to the second.
pub fn now_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_file_replaces_the_old_one_whole() {
        let dir = std::env::temp_dir().join(format!("futexsim-store-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.json");
        write_atomic(&path, b"old").unwrap();
        write_atomic(&path, b"new").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert_eq!(
            fs::read_dir(&dir).unwrap().count(),
            1,
            "no temporary file is left"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_killed_writers_temporary_files_are_removed_and_nothing_else() {
        let dir = std::env::temp_dir().join(format!("futexsim-temps-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        write_atomic(&dir.join("kept.json"), b"whole").unwrap();
        // No process has a pid beyond the kernel's limit of 2^22.
        fs::write(dir.join(".kept.json.tmp-99999999"), b"half").unwrap();
        let ours = format!(".other.json.tmp-{}", std::process::id());
        fs::write(dir.join(&ours), b"in flight").unwrap();
        fs::write(dir.join(".hidden"), b"not ours").unwrap();
        assert_eq!(remove_temp_files(&dir).unwrap(), 1);
        let mut left: Vec<String> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, [".hidden", ours.as_str(), "kept.json"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn dates_are_civil_utc() {
        let now = now_utc();
        assert_eq!(now.len(), 20);
        assert!(now.starts_with("20") && now.ends_with('Z'), "{now}");
    }
}
