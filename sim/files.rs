//! The one way futexsim reads, writes, renames and removes files. The
//! filesystem is the user's: every command goes through here, and these
//! are the rules.
//!
//! - **Inputs are untrusted.** A file is read only when it is a regular
//!   file (a FIFO, device, socket or directory is refused at open, which is
//!   made with O_NONBLOCK so that a FIFO cannot stall it), and only up to a
//!   cap, checked before anything is read.
//! - **Nothing is written through a link.** A name futexsim writes, renames
//!   or removes is examined with lstat and opened with O_NOFOLLOW: a link
//!   there is refused, never followed. (The directory a user names may
//!   itself be a link: the user chose it. The names futexsim makes inside
//!   it may not.)
//! - **Only its own files are replaced or removed.** A regular file is
//!   replaced or removed only when the caller proves futexsim wrote it, from
//!   its content: a run file's checksum, a manifest's hash, a signed last
//!   line ([`Signature`]). Anything else at the name is refused, naming it.
//! - **A file is whole or absent.** It is written into an unnamed file
//!   (O_TMPFILE), flushed, given a temporary name that carries its content's
//!   hash, and renamed over the old one: a kill at any moment leaves the old
//!   file or the new one. A temporary name a killed writer left is removed
//!   only when its content matches the hash in its name.
//!
//! Every operation that changes the filesystem passes [`fault::step`], so a
//! test can fail any one of them, or kill the process there, and check
//! that what a directory holds is still the old state or the new one.

use crate::hash::lookup3::hashlittle2;
use crate::limits::{Cap, LOCK_FILE_CAP, REPLACED_CAP};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// What went wrong with a path: the path is always named.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// What is at the path is not something futexsim may read, replace or
    /// remove (a link, a FIFO, a user's file, a file over its cap): the
    /// input is wrong, and nothing was changed.
    #[error("{path}: {why}")]
    Refused { path: PathBuf, why: String },
    /// The filesystem failed the operation (no space, no permission...).
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
}

impl FileError {
    fn refused(path: &Path, why: impl Into<String>) -> FileError {
        FileError::Refused {
            path: path.to_path_buf(),
            why: why.into(),
        }
    }

    fn io(path: &Path) -> impl FnOnce(io::Error) -> FileError + '_ {
        move |source| FileError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// What is wrong, without the path (for a message that names it already).
    pub fn reason(&self) -> String {
        match self {
            FileError::Refused { why, .. } => format!("it {why}"),
            FileError::Io { source, .. } => source.to_string(),
        }
    }

    /// Whether the user is the one to fix it: a refusal, or a path that is
    /// not there or runs through something that is not a directory. The
    /// rest (no space, no permission, an I/O error) is the filesystem's.
    pub fn is_users_to_fix(&self) -> bool {
        match self {
            FileError::Refused { .. } => true,
            FileError::Io { source, .. } => is_users_to_fix(source),
        }
    }

    /// Whether the file was not there at all.
    pub fn is_not_found(&self) -> bool {
        matches!(self, FileError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }
}

/// Whether an I/O error says the path is wrong (not there, or through
/// something that is not a directory), not that the filesystem failed.
pub fn is_users_to_fix(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotFound
        || matches!(
            e.raw_os_error(),
            Some(libc::ENOTDIR | libc::EISDIR | libc::ELOOP | libc::ENAMETOOLONG)
        )
}

pub type Result<T> = std::result::Result<T, FileError>;

/// 16 hex digits of lookup3's 64-bit hash: the content hash of temporary
/// names, manifests and signatures.
pub fn hash_hex(bytes: &[u8]) -> String {
    let (c, b) = hashlittle2(bytes, 0, 0);
    format!("{:016x}", (u64::from(c) << 32) | u64::from(b))
}

fn kind_name(kind: fs::FileType) -> &'static str {
    if kind.is_symlink() {
        "a symbolic link"
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_block_device() || kind.is_char_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

/// Opens a regular file for reading without blocking and checks, on the
/// open file, that it is one and within `cap`. `follow` says whether a link
/// at `path` is read through (an input the user names) or refused (a file
/// futexsim is about to replace).
fn open_regular(path: &Path, cap: Cap, follow: bool) -> Result<File> {
    // Looked at before the open, so that a device is never opened at all
    // (opening some has effects); checked again on the open file below.
    let meta = if follow {
        fs::metadata(path)
    } else {
        fs::symlink_metadata(path)
    }
    .map_err(FileError::io(path))?;
    if !meta.file_type().is_file() {
        return Err(FileError::refused(
            path,
            format!("is {}, not a regular file", kind_name(meta.file_type())),
        ));
    }
    let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC;
    if !follow {
        flags |= libc::O_NOFOLLOW;
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
        .map_err(|e| refuse_link(path, e))?;
    let meta = file.metadata().map_err(FileError::io(path))?;
    if !meta.file_type().is_file() {
        return Err(FileError::refused(
            path,
            format!("is {}, not a regular file", kind_name(meta.file_type())),
        ));
    }
    if meta.len() > cap.bytes {
        return Err(too_large(path, cap));
    }
    Ok(file)
}

fn too_large(path: &Path, cap: Cap) -> FileError {
    FileError::refused(
        path,
        format!(
            "is larger than the {} MiB {} may hold",
            cap.bytes >> 20,
            cap.what
        ),
    )
}

/// O_NOFOLLOW fails with ELOOP on a link: say what it is.
fn refuse_link(path: &Path, e: io::Error) -> FileError {
    if e.raw_os_error() == Some(libc::ELOOP) {
        FileError::refused(
            path,
            "is a symbolic link; futexsim does not write through links",
        )
    } else {
        FileError::io(path)(e)
    }
}

fn read_capped(mut file: File, path: &Path, cap: Cap) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    // One byte past the cap tells a file that grew after its size was read.
    Read::by_ref(&mut file)
        .take(cap.bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(FileError::io(path))?;
    if bytes.len() as u64 > cap.bytes {
        return Err(too_large(path, cap));
    }
    Ok(bytes)
}

/// The bytes of the input `path` (a link is read through).
pub fn read(path: &Path, cap: Cap) -> Result<Vec<u8>> {
    read_capped(open_regular(path, cap, true)?, path, cap)
}

/// The text of the input `path`; a file that is not UTF-8 is refused.
pub fn read_text(path: &Path, cap: Cap) -> Result<String> {
    String::from_utf8(read(path, cap)?).map_err(|_| FileError::refused(path, "is not UTF-8 text"))
}

/// The text of `path`, or None when nothing is there.
pub fn read_text_if_any(path: &Path, cap: Cap) -> Result<Option<String>> {
    match read_text(path, cap) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

/// The bytes of the regular file at `path` itself (a link is refused), or
/// None when nothing is there: how futexsim reads a file of its own.
pub fn read_own(path: &Path, cap: Cap) -> Result<Option<Vec<u8>>> {
    match open_regular(path, cap, false) {
        Ok(file) => read_capped(file, path, cap).map(Some),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

/// What tells a file futexsim wrote from anyone else's, by its content.
pub type Proof<'a> = &'a dyn Fn(&[u8]) -> bool;

/// A proof that accepts nothing: the name must be free.
pub fn nothing(_: &[u8]) -> bool {
    false
}

/// A file's last line carrying the hash of every byte before it, in the
/// comment syntax of its format: a standalone file futexsim writes (a
/// machine profile, a validation report) proves it is futexsim's, and one
/// edited since is a user's.
#[derive(Clone, Copy)]
pub struct Signature {
    open: &'static str,
    close: &'static str,
}

/// For TOML: `# written by futexsim, checksum <hash>`.
pub const TOML_SIGNATURE: Signature = Signature {
    open: "# written by futexsim, checksum ",
    close: "",
};
/// For Markdown: an HTML comment, invisible once rendered.
pub const MARKDOWN_SIGNATURE: Signature = Signature {
    open: "<!-- written by futexsim, checksum ",
    close: " -->",
};

impl Signature {
    pub const fn new(open: &'static str, close: &'static str) -> Signature {
        Signature { open, close }
    }

    /// `text` with its signature appended.
    pub fn sign(&self, text: &str) -> String {
        let mut signed = text.to_string();
        if !signed.is_empty() && !signed.ends_with('\n') {
            signed.push('\n');
        }
        let hash = hash_hex(signed.as_bytes());
        format!("{signed}{}{hash}{}\n", self.open, self.close)
    }

    /// Whether `bytes` end in this signature, and it matches what precedes it.
    pub fn verifies(&self, bytes: &[u8]) -> bool {
        let Some(body) = bytes.strip_suffix(b"\n") else {
            return false;
        };
        let start = body.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let (before, last) = body.split_at(start);
        std::str::from_utf8(last)
            .ok()
            .and_then(|l| l.strip_prefix(self.open))
            .and_then(|l| l.strip_suffix(self.close))
            .is_some_and(|hash| hash == hash_hex(before))
    }
}

/// Writes `bytes` to `path`, whole or not at all. A regular file already
/// there is replaced only when it holds these very bytes or `ours` proves it
/// futexsim's; anything else there is refused and left as it is.
pub fn write(path: &Path, bytes: &[u8], ours: Proof) -> Result<()> {
    let dir = parent(path);
    let name = file_name(path)?;
    let before = occupant(path, ours, bytes)?;
    let tmp = stage_file(dir, &name, bytes)?;
    let result = (|| {
        // The name may have changed hands since it was looked at (only
        // another process, outside the directory's lock, could do that).
        if occupant(path, ours, bytes)? != before {
            return Err(FileError::refused(
                path,
                "changed while futexsim was writing it; nothing was replaced",
            ));
        }
        rename(&tmp, path, before.is_none())?;
        sync_dir(dir)
    })();
    if result.is_err() {
        // The temporary file is this process's own, named by it just now.
        let _ = unlink(&tmp);
    }
    result
}

/// Refuses now, before any work, what [`write`] would refuse at `path`
/// (a link, a FIFO, a file `ours` does not prove futexsim's), so that a
/// command does not measure or simulate for minutes only to be refused.
pub fn check_replaceable(path: &Path, ours: Proof) -> Result<()> {
    occupant(path, ours, &[]).map(|_| ())
}

/// The (device, inode) of the regular file futexsim may replace at `path`,
/// None when the name is free; refused when anything else is there.
fn occupant(path: &Path, ours: Proof, new: &[u8]) -> Result<Option<(u64, u64)>> {
    let Some(old) = read_own(path, REPLACED_CAP)? else {
        return Ok(None);
    };
    if old != new && !ours(&old) {
        return Err(FileError::refused(
            path,
            "was not written by futexsim (or was changed since); move it away or choose another path",
        ));
    }
    let meta = fs::symlink_metadata(path).map_err(FileError::io(path))?;
    Ok(Some((meta.dev(), meta.ino())))
}

fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        // A bare file name lives in the current directory.
        _ => Path::new("."),
    }
}

fn file_name(path: &Path) -> Result<String> {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| FileError::refused(path, "names no file"))
}

/// In a temporary name: `.NAME.tmp-PID-HASH`.
const TEMP_MARK: &str = ".tmp-";

/// Writes `bytes` under a new temporary name beside `name` in `dir`, flushed.
fn stage_file(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf> {
    let tmp = dir.join(format!(
        ".{name}{TEMP_MARK}{}-{}",
        std::process::id(),
        hash_hex(bytes)
    ));
    match unnamed_file(dir, bytes)? {
        // Named only once whole: a kill before this leaves nothing.
        Some(file) => link_unnamed(&file, &tmp)?,
        // A filesystem without O_TMPFILE: a kill mid-write leaves a
        // temporary file whose hash does not match, which stays.
        None => {
            fault::step(&tmp)?;
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(&tmp)
                .map_err(|e| refuse_link(&tmp, e))?;
            let written = fault::step(&tmp)
                .and_then(|()| file.write_all(bytes).map_err(FileError::io(&tmp)))
                .and_then(|()| fault::step(&tmp))
                .and_then(|()| file.sync_all().map_err(FileError::io(&tmp)));
            if let Err(e) = written {
                let _ = fs::remove_file(&tmp);
                return Err(e);
            }
        }
    }
    Ok(tmp)
}

/// `bytes` in an unnamed file of `dir`, flushed; None where the filesystem
/// has no O_TMPFILE.
fn unnamed_file(dir: &Path, bytes: &[u8]) -> Result<Option<File>> {
    fault::step(dir)?;
    let file = match OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_TMPFILE | libc::O_CLOEXEC)
        .mode(0o666)
        .open(dir)
    {
        Ok(file) => file,
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)
            ) =>
        {
            return Ok(None)
        }
        Err(e) => return Err(FileError::io(dir)(e)),
    };
    let mut file = file;
    fault::step(dir)?;
    file.write_all(bytes).map_err(FileError::io(dir))?;
    fault::step(dir)?;
    file.sync_all().map_err(FileError::io(dir))?;
    Ok(Some(file))
}

/// Gives the unnamed `file` the name `path` (which must be free).
fn link_unnamed(file: &File, path: &Path) -> Result<()> {
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    fault::step(path)?;
    let from = std::ffi::CString::new(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .map_err(|e| FileError::io(path)(io::Error::other(e)))?;
    let to = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| FileError::refused(path, "holds a NUL byte"))?;
    // SAFETY: both arguments are NUL-terminated strings that live across
    // the call; linkat reads them and keeps no pointer.
    let rc = unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::AT_SYMLINK_FOLLOW,
        )
    };
    if rc != 0 {
        return Err(FileError::io(path)(io::Error::last_os_error()));
    }
    Ok(())
}

/// Renames `from` over `to`. When `to` must be free (nothing was there when
/// it was looked at), the kernel is asked to refuse rather than replace
/// whatever appeared meanwhile (RENAME_NOREPLACE, where the filesystem has it).
fn rename(from: &Path, to: &Path, to_free: bool) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    fault::step(to)?;
    if to_free {
        let cstr = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes());
        let (Ok(f), Ok(t)) = (cstr(from), cstr(to)) else {
            return Err(FileError::refused(to, "holds a NUL byte"));
        };
        // SAFETY: both paths are NUL-terminated strings that live across
        // the call; renameat2 reads them and keeps no pointer.
        let rc = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                f.as_ptr(),
                libc::AT_FDCWD,
                t.as_ptr(),
                libc::RENAME_NOREPLACE,
            )
        };
        if rc == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EEXIST) => {
                return Err(FileError::refused(
                    to,
                    "appeared while futexsim was writing it; nothing was replaced",
                ))
            }
            // No RENAME_NOREPLACE here: the look above has to do.
            Some(libc::EINVAL | libc::ENOSYS) => {}
            _ => return Err(FileError::io(to)(e)),
        }
    }
    fs::rename(from, to).map_err(FileError::io(to))
}

fn unlink(path: &Path) -> Result<()> {
    fault::step(path)?;
    fs::remove_file(path).map_err(FileError::io(path))
}

/// Removes the regular file `path` when `ours` proves it futexsim's.
/// Returns whether it was removed: false when nothing was there, or when
/// what is there is not futexsim's (left as it is).
pub fn remove(path: &Path, cap: Cap, ours: Proof) -> Result<bool> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(FileError::io(path)(e)),
    };
    if !meta.file_type().is_file() {
        return Ok(false);
    }
    match read_own(path, cap) {
        Ok(Some(bytes)) if ours(&bytes) => {}
        Ok(_) | Err(FileError::Refused { .. }) => return Ok(false),
        Err(e) => return Err(e),
    }
    unlink(path).map(|()| true)
}

/// Makes the directory `path` (its parent exists), or finds it made: a
/// link or anything else at the name is refused.
pub fn create_dir(path: &Path) -> Result<()> {
    fault::step(path)?;
    match fs::create_dir(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            let kind = fs::symlink_metadata(path)
                .map_err(FileError::io(path))?
                .file_type();
            if kind.is_dir() {
                Ok(())
            } else {
                Err(FileError::refused(
                    path,
                    format!(
                        "is {}, where futexsim keeps a directory of its own",
                        kind_name(kind)
                    ),
                ))
            }
        }
        Err(e) => Err(FileError::io(path)(e)),
    }
}

/// Makes the directory a user named, and those above it; the user's own
/// path may pass through links. What is there must be a directory.
pub fn create_user_dir(path: &Path) -> Result<()> {
    if let Ok(meta) = fs::metadata(path) {
        return if meta.is_dir() {
            Ok(())
        } else {
            Err(FileError::refused(
                path,
                format!("is {}, not a directory", kind_name(meta.file_type())),
            ))
        };
    }
    fault::step(path)?;
    fs::create_dir_all(path).map_err(FileError::io(path))
}

/// Removes the directory `path` if it is empty; says whether it did.
pub fn remove_empty_dir(path: &Path) -> Result<bool> {
    if !fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        return Ok(false);
    }
    fault::step(path)?;
    Ok(fs::remove_dir(path).is_ok())
}

/// Creates the regular file `path`, which must not exist, holding `bytes`,
/// flushed (a file of a new directory: nothing to replace, nothing to stage).
pub fn create_new(path: &Path, bytes: &[u8]) -> Result<()> {
    fault::step(path)?;
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| refuse_link(path, e))?;
    fault::step(path)?;
    file.write_all(bytes).map_err(FileError::io(path))?;
    fault::step(path)?;
    file.sync_all().map_err(FileError::io(path))
}

/// Makes a rename durable: the directory entry itself is flushed.
pub fn sync_dir(dir: &Path) -> Result<()> {
    fault::step(dir)?;
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(FileError::io(dir))
}

/// The link at `path` points to `target` afterwards, whatever was there: a
/// link `ours_link` accepts, a regular file `ours` proves futexsim's, or
/// nothing. One rename makes the change, so a reader sees the old entry or
/// the new one.
pub fn put_link(
    path: &Path,
    target: &Path,
    ours_link: &dyn Fn(&Path) -> bool,
    ours: Proof,
) -> Result<()> {
    let free = match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            let now = fs::read_link(path).map_err(FileError::io(path))?;
            if now == target {
                return Ok(());
            }
            if !ours_link(&now) {
                return Err(FileError::refused(
                    path,
                    format!("is a link futexsim did not make (to {})", now.display()),
                ));
            }
            false
        }
        Ok(meta) if meta.file_type().is_file() => {
            occupant(path, ours, &[])?;
            false
        }
        Ok(meta) => {
            return Err(FileError::refused(
                path,
                format!(
                    "is {}, where futexsim puts a link to its report",
                    kind_name(meta.file_type())
                ),
            ))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => true,
        Err(e) => return Err(FileError::io(path)(e)),
    };
    let tmp = parent(path).join(format!(
        ".{}{TEMP_MARK}link-{}",
        file_name(path)?,
        std::process::id()
    ));
    fault::step(&tmp)?;
    std::os::unix::fs::symlink(target, &tmp).map_err(FileError::io(&tmp))?;
    rename(&tmp, path, free).inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })
}

/// Removes the link `path` when `ours_link` accepts its target.
pub fn remove_link(path: &Path, ours_link: &dyn Fn(&Path) -> bool) -> Result<bool> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {}
        _ => return Ok(false),
    }
    if !fs::read_link(path).is_ok_and(|t| ours_link(&t)) {
        return Ok(false);
    }
    unlink(path).map(|()| true)
}

/// Renames the directory `from` (futexsim's own, proven by the caller) to
/// the free name `to`.
pub fn rename_dir(from: &Path, to: &Path) -> Result<()> {
    rename(from, to, true)
}

/// Removes the temporary files killed writers left in `dir`: a name of the
/// form `.NAME.tmp-PID-HASH`, of a process no longer running, holding bytes
/// whose hash is HASH (so whole, and futexsim's). Returns how many.
pub fn remove_temp_files(dir: &Path) -> Result<usize> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(FileError::io(dir)(e)),
    };
    let mut removed = 0;
    for entry in entries {
        let entry = entry.map_err(FileError::io(dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some((pid, hash)) = temp_name_parts(&name) else {
            continue;
        };
        if Path::new("/proc").join(pid).exists() {
            // Its writer is still at work (another futexsim).
            continue;
        }
        let path = entry.path();
        if remove(&path, REPLACED_CAP, &|bytes| hash_hex(bytes) == hash)? {
            removed += 1;
        }
    }
    Ok(removed)
}

/// The writer's pid and content hash of a temporary name futexsim gives.
fn temp_name_parts(name: &str) -> Option<(&str, &str)> {
    let (_, rest) = name.strip_prefix('.')?.rsplit_once(TEMP_MARK)?;
    let (pid, hash) = rest.split_once('-')?;
    let digits = |s: &str, hex: bool| {
        !s.is_empty()
            && s.bytes().all(|b| {
                if hex {
                    b.is_ascii_hexdigit()
                } else {
                    b.is_ascii_digit()
                }
            })
    };
    (digits(pid, false) && hash.len() == 16 && digits(hash, true)).then_some((pid, hash))
}

/// A design name made safe for a file name: a chart's, a run's.
pub fn file_part(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Whether `name` is one of futexsim's temporary names (whoever wrote it).
pub fn is_temp_name(name: &str) -> bool {
    temp_name_parts(name).is_some()
}

/// Opens the lock file `path` for an flock: created if absent, a regular
/// file holding at most a process id if present. A link, a FIFO, or a
/// file with anything else in it is refused, never opened for writing.
pub fn open_lock_file(path: &Path) -> Result<File> {
    if let Some(bytes) = read_own(path, LOCK_FILE_CAP)? {
        if !bytes.iter().all(|b| b.is_ascii_digit() || *b == b'\n') {
            return Err(FileError::refused(
                path,
                "is futexsim's lock file's name but holds something else; move it away",
            ));
        }
    }
    fault::step(path)?;
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| refuse_link(path, e))?;
    let kind = file.metadata().map_err(FileError::io(path))?.file_type();
    if !kind.is_file() {
        return Err(FileError::refused(
            path,
            format!("is {}, not futexsim's lock file", kind_name(kind)),
        ));
    }
    Ok(file)
}

/// Fault injection: `FUTEXSIM_FAULT=fail:N` fails the N-th operation that
/// changes the filesystem (counting from 1) as a full disk would;
/// `kill:N` kills the process there with SIGKILL. Tests use it to walk
/// every step of a publish and of a campaign's creation.
pub mod fault {
    use super::{FileError, Path};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::OnceLock;

    #[derive(Clone, Copy)]
    enum Fault {
        Fail(u64),
        Kill(u64),
    }

    fn planned() -> Option<Fault> {
        static PLAN: OnceLock<Option<Fault>> = OnceLock::new();
        *PLAN.get_or_init(|| {
            let spec = std::env::var("FUTEXSIM_FAULT").ok()?;
            let (how, n) = spec.split_once(':')?;
            let n = n.parse().ok()?;
            match how {
                "fail" => Some(Fault::Fail(n)),
                "kill" => Some(Fault::Kill(n)),
                _ => None,
            }
        })
    }

    static STEPS: AtomicU64 = AtomicU64::new(0);

    /// Counts one operation on `path`; fails it or kills the process when
    /// it is the one planned.
    pub fn step(path: &Path) -> Result<(), FileError> {
        let Some(fault) = planned() else {
            return Ok(());
        };
        let n = STEPS.fetch_add(1, Ordering::Relaxed) + 1;
        match fault {
            Fault::Fail(at) if at == n => Err(FileError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::StorageFull,
                    format!("fault injected at filesystem operation {n}"),
                ),
            }),
            Fault::Kill(at) if at == n => {
                // SAFETY: kill(2) on this process's own id: no memory is
                // shared with the call, and SIGKILL ends the process here.
                unsafe {
                    libc::kill(libc::getpid(), libc::SIGKILL);
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::{CONFIG_CAP, RUN_FILE_CAP};

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("futexsim-files-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_written_file_replaces_the_old_one_whole_and_leaves_no_temporary_file() {
        let dir = scratch("whole");
        let path = dir.join("f.json");
        write(&path, b"old", &nothing).unwrap();
        write(&path, b"new", &|b| b == b"old").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_futexsim_cannot_prove_its_own_is_never_replaced() {
        let dir = scratch("foreign");
        let path = dir.join("report.md");
        fs::write(&path, b"mine").unwrap();
        let e = write(&path, b"futexsim's", &nothing).unwrap_err();
        assert!(matches!(e, FileError::Refused { .. }), "{e}");
        assert_eq!(fs::read(&path).unwrap(), b"mine");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_link_is_never_written_through() {
        let dir = scratch("link");
        let target = dir.join("user.txt");
        fs::write(&target, b"keep").unwrap();
        let link = dir.join("out.toml");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(write(&link, b"x", &|_| true).is_err());
        assert!(open_lock_file(&link).is_err());
        assert!(!remove(&link, RUN_FILE_CAP, &|_| true).unwrap());
        assert_eq!(fs::read(&target).unwrap(), b"keep");
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_fifo_is_refused_at_open_without_blocking() {
        let dir = scratch("fifo");
        let fifo = dir.join("config.toml");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        assert!(matches!(
            read(&fifo, CONFIG_CAP),
            Err(FileError::Refused { .. })
        ));
        assert!(matches!(
            write(&fifo, b"x", &|_| true),
            Err(FileError::Refused { .. })
        ));
        assert!(open_lock_file(&fifo).is_err());
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_input_over_its_cap_is_refused_before_it_is_read() {
        let dir = scratch("cap");
        let path = dir.join("big.toml");
        fs::write(&path, vec![b'#'; 100]).unwrap();
        let e = read(&path, Cap::new("a test file", 99)).unwrap_err();
        assert!(e.to_string().contains("larger than"), "{e}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_signed_file_verifies_and_an_edited_one_does_not() {
        let signed = MARKDOWN_SIGNATURE.sign("# Report\n\nbody\n");
        assert!(MARKDOWN_SIGNATURE.verifies(signed.as_bytes()));
        assert!(!TOML_SIGNATURE.verifies(signed.as_bytes()));
        let edited = signed.replace("body", "bodY");
        assert!(!MARKDOWN_SIGNATURE.verifies(edited.as_bytes()));
    }

    #[test]
    fn only_whole_temporary_files_of_dead_writers_are_removed() {
        let dir = scratch("temps");
        // No process has a pid beyond the kernel's limit of 2^22.
        let whole = format!(".a.json{TEMP_MARK}99999999-{}", hash_hex(b"whole"));
        fs::write(dir.join(&whole), b"whole").unwrap();
        let half = format!(".b.json{TEMP_MARK}99999999-{}", hash_hex(b"whole"));
        fs::write(dir.join(&half), b"wh").unwrap();
        let alive = format!(
            ".c.json{TEMP_MARK}{}-{}",
            std::process::id(),
            hash_hex(b"x")
        );
        fs::write(dir.join(&alive), b"x").unwrap();
        fs::write(dir.join(".x.tmp-5"), b"a user's").unwrap();
        assert_eq!(remove_temp_files(&dir).unwrap(), 1);
        let mut left: Vec<String> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let mut expected = vec![half, alive, ".x.tmp-5".to_string()];
        expected.sort();
        assert_eq!(left, expected);
        fs::remove_dir_all(&dir).unwrap();
    }
}
