//! Reports rendered from a result set: one module per output format, all fed
//! from the same records, published into a directory all at once or not at all.
//!
//! A report is a generation: a directory `.report-<pid>-<time>` holding every
//! file, and a manifest of them (each path with its content's hash) written
//! first. `.report` is a symbolic link to the live generation, and the names
//! a reader opens (report.md, results.json, charts/, ...) are links through
//! it. Publishing goes in this order, so that a failure or a kill at any
//! step leaves the directory's report as it was or as it is after:
//!
//! 1. every file is rendered in memory, then written and synced into a new
//!    generation, its manifest first;
//! 2. every name the report will take is looked at, and anything futexsim
//!    cannot prove its own (a user's file, a link it did not make, a FIFO)
//!    refuses the publish: the new generation is removed, nothing else was
//!    touched;
//! 3. a name the report has never had gets its link: it dangles (or shows
//!    the old generation's entry) until the swap;
//! 4. one rename points `.report` at the new generation: the swap, after
//!    which every linked name shows the new report;
//! 5. a name holding a plain copy of the old report (a copy made with its
//!    links dereferenced) becomes a link, each in one rename; a kill before
//!    all have is finished by the next publish;
//! 6. the old generation is removed, file by file from its manifest, each
//!    only when its hash matches; anything else in it stays, named.
//!
//! A repository's reports are published [`Layout::Plain`] instead: the
//! files themselves, each replaced in place (whole or not at all, see
//! [`crate::files::write`]) and listed with its hash in a signed
//! `.futexsim-manifest`, so that `git diff` shows what moved file by file
//! and a repository browser shows reports, not link targets. Publishing
//! plain goes in this order, so that a kill at any step leaves a directory
//! the next publish finishes:
//!
//! 1. every name the report will take is looked at as above, and anything
//!    futexsim cannot prove its own refuses the publish, nothing touched;
//! 2. the manifest is written listing the old report's files and the new
//!    one's, so either's bytes prove a file futexsim's until the end;
//! 3. the links a generation-style report left at those names are removed,
//!    and each file is written in place;
//! 4. files of the old report the new one lacks are removed (each only when
//!    its hash matches), then the manifest is written listing the new
//!    report's files only;
//! 5. the live link and the old generations, if any, are removed.
//!
//! A directory published plain stays plain: a later publish finds its
//! manifest and keeps the layout, whoever runs it.
//!
//! The caller holds the directory's lock ([`crate::dir_lock::lock`]).

mod axis;
pub mod c2c;
pub mod charts;
pub mod compare;
mod csv;
pub mod interval;
mod json;
mod markdown;
mod private_hash;
pub mod sensitivity;
pub mod summary;
pub mod time_spent;
pub mod track_record;
pub mod usl;

use crate::files::{self, FileError};
use crate::limits::{self, MANIFEST_CAP, REPORT_FILE_CAP};
use crate::results::{JsonError, ResultSet, SetError, SpeedLog};
use crate::sensitivity::spans::Sensitivity;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// One rendered file, its path relative to the report directory.
pub struct File {
    pub path: String,
    pub bytes: Vec<u8>,
}

/// How a report directory holds its report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// Generations behind links: a reader of the old report keeps it whole
    /// while a run replaces it (an out/ campaign).
    #[default]
    Generations,
    /// The files themselves, each replaced in place: a repository's
    /// reports, which `git diff` compares file by file.
    Plain,
}

impl Layout {
    /// The layout a command's `--plain` flag asks for.
    pub fn asked(plain: bool) -> Layout {
        if plain {
            Layout::Plain
        } else {
            Layout::Generations
        }
    }
}

/// A format renders its files from the result set and the speed log.
type Format = fn(&ResultSet, &SpeedLog) -> std::io::Result<Vec<File>>;

const FORMATS: [Format; 5] = [
    charts::files,
    json::files,
    csv::files,
    csv::summary_files,
    markdown::files,
];

/// The link to the live generation.
pub const LIVE: &str = ".report";
/// What every generation's name starts with (then `<pid>-<nanoseconds>`).
pub const GENERATION: &str = ".report-";
/// In a generation: its files, one a line (`path<TAB>hash`), written first.
pub const MANIFEST: &str = "manifest";
/// In a plain report directory: its files, one a line (`path<TAB>hash`),
/// signed like a generation's manifest.
pub const PLAIN_MANIFEST: &str = ".futexsim-manifest";
pub const RESULTS_JSON: &str = "results.json";
pub const SPEED_JSON: &str = "speed.json";
pub const REPORT_MD: &str = "report.md";

/// A name no other writer uses: this process's id and the time.
fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{prefix}{}-{nanos}", std::process::id())
}

/// A name `.report` may point at: a generation's, in the same directory.
fn is_generation_name(target: &Path) -> bool {
    target
        .to_str()
        .is_some_and(|t| t.starts_with(GENERATION) && is_plain_relative(t) && !t.contains('/'))
}

/// The link futexsim makes for the report entry `entry`.
fn entry_target(entry: &str) -> PathBuf {
    Path::new(LIVE).join(entry)
}

/// Publishes the report of `set` in `dir`: as `layout` says, or plain
/// whatever it says when `dir` already holds a plain report.
pub fn write(
    dir: &Path,
    set: &ResultSet,
    speed: &SpeedLog,
    layout: Layout,
) -> Result<(), FileError> {
    write_with(dir, set, speed, None, layout)
}

/// Publishes the report of `set` as [`write`] does, with the model interval
/// of a `--sensitivity` run among its files when there is one, or else the
/// one `dir` already holds when it was computed around `set`.
pub fn write_with(
    dir: &Path,
    set: &ResultSet,
    speed: &SpeedLog,
    model_interval: Option<&Sensitivity>,
    layout: Layout,
) -> Result<(), FileError> {
    let io = |source| FileError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut rendered = Vec::new();
    for format in FORMATS {
        rendered.extend(format(set, speed).map_err(io)?);
    }
    // Published again from the same results, a report keeps its model
    // interval; one computed around other results goes with them.
    let kept = match model_interval {
        Some(_) => None,
        None => sensitivity::kept(dir, set),
    };
    if let Some(interval) = model_interval.or(kept.as_ref()) {
        for format in sensitivity::FORMATS {
            rendered.extend(format(interval).map_err(io)?);
        }
    }
    files::create_user_dir(dir)?;
    remove_dead_generations(dir)?;
    let entries: BTreeSet<&str> = rendered
        .iter()
        .filter_map(|f| f.path.split('/').next())
        .collect();
    if layout == Layout::Plain || fs::symlink_metadata(dir.join(PLAIN_MANIFEST)).is_ok() {
        return write_plain(dir, &rendered, &entries);
    }
    let generation = unique(GENERATION);
    let staged = dir.join(&generation);
    let prepared = stage(&staged, &rendered).and_then(|()| Published::look(dir, &entries));
    let old = match prepared {
        Ok(old) => old,
        Err(e) => {
            // On a full disk, give back what the half-written report took;
            // the live report is untouched either way.
            let _ = remove_generation(&staged);
            return Err(e);
        }
    };
    let mut made = Vec::new();
    if let Err(e) = swap(dir, &generation, &entries, &old, &mut made) {
        for link in made {
            let _ = files::remove_link(&link, &|t| t.starts_with(LIVE));
        }
        let _ = remove_generation(&staged);
        return Err(e);
    }
    // The new report is live from here: what is left makes the swap
    // durable and finishes the move, and a publish after a failure or a
    // kill here finishes it too.
    files::sync_dir(dir)?;
    for entry in &entries {
        if old.plain.contains(*entry) {
            make_link(dir, entry, &old)?;
        }
    }
    remove_dropped_links(dir, &old, &entries)?;
    for generation in old.generations() {
        remove_generation(&dir.join(generation))?;
    }
    Ok(())
}

/// The plain publish (the module's second list).
fn write_plain(dir: &Path, rendered: &[File], entries: &BTreeSet<&str>) -> Result<(), FileError> {
    // A publish killed between a file's temporary name and its rename left
    // that name beside the file, in the directory or in one of the
    // report's own (charts/, points/): clear them, or the next publish
    // would take them for a user's.
    files::remove_temp_files(dir)?;
    for entry in entries {
        let sub = dir.join(entry);
        if fs::symlink_metadata(&sub).is_ok_and(|m| m.is_dir()) {
            files::remove_temp_files(&sub)?;
        }
    }
    let old = Published::look(dir, entries)?;
    let new: BTreeSet<(String, String)> = rendered
        .iter()
        .map(|f| (f.path.clone(), files::hash_hex(&f.bytes)))
        .collect();
    let old_listed: BTreeSet<(String, String)> = old
        .manifest
        .iter()
        .filter_map(|(path, hash)| hash.as_ref().map(|h| (path.clone(), h.clone())))
        .chain(old.plain_manifest.iter().cloned())
        .collect();
    write_plain_manifest(dir, &new.union(&old_listed).cloned().collect())?;
    for entry in &old.linked {
        files::remove_link(&dir.join(entry), &|t| t == entry_target(entry))?;
    }
    let mut dirs = BTreeSet::new();
    for f in rendered {
        let path = dir.join(&f.path);
        for parent in Path::new(&f.path).ancestors().skip(1) {
            if !parent.as_os_str().is_empty() && dirs.insert(parent.to_path_buf()) {
                files::create_dir(&dir.join(parent))?;
            }
        }
        files::write(&path, &f.bytes, &|b: &[u8]| old.proves(&f.path, b))?;
    }
    let new_paths: BTreeSet<&str> = rendered.iter().map(|f| f.path.as_str()).collect();
    for (path, _) in old
        .plain_manifest
        .iter()
        .filter(|(p, _)| !new_paths.contains(p.as_str()))
    {
        files::remove(&dir.join(path), REPORT_FILE_CAP, &|b: &[u8]| {
            old.proves(path, b)
        })?;
        if let Some(parent) = Path::new(path)
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
        {
            files::remove_empty_dir(&dir.join(parent))?;
        }
    }
    write_plain_manifest(dir, &new)?;
    remove_dropped_links(dir, &old, entries)?;
    if old.live.is_some() {
        files::remove_link(&dir.join(LIVE), &is_generation_name)?;
    }
    let copied_live = old.copied_live.as_ref().map(|_| LIVE.to_string());
    for generation in old.live.iter().chain(&copied_live) {
        remove_generation(&dir.join(generation))?;
    }
    Ok(())
}

/// Removes the links of the names the old generation-style report had and
/// the new one has not (a report published without `--sensitivity` after
/// one with it): they would point at nothing once the old generation goes.
fn remove_dropped_links(
    dir: &Path,
    old: &Published,
    entries: &BTreeSet<&str>,
) -> Result<(), FileError> {
    for path in old.manifest.keys() {
        if let Some(entry) = path.split('/').next().filter(|e| !entries.contains(e)) {
            files::remove_link(&dir.join(entry), &|t| t == entry_target(entry))?;
        }
    }
    Ok(())
}

/// Writes the plain manifest listing `listed`, replacing one futexsim signed.
fn write_plain_manifest(dir: &Path, listed: &BTreeSet<(String, String)>) -> Result<(), FileError> {
    let text: String = listed
        .iter()
        .map(|(path, hash)| format!("{path}\t{hash}\n"))
        .collect();
    files::write(
        &dir.join(PLAIN_MANIFEST),
        MANIFEST_SIGNATURE.sign(&text).as_bytes(),
        &|b: &[u8]| MANIFEST_SIGNATURE.verifies(b),
    )
}

/// A plain report directory's files and their hashes (a path twice while a
/// publish replaces it); None when there is no manifest. One futexsim did
/// not sign is refused: it would prove anything its writer chose.
fn read_plain_manifest(dir: &Path) -> Result<Option<BTreeSet<(String, String)>>, FileError> {
    let path = dir.join(PLAIN_MANIFEST);
    let Some(bytes) = files::read_own(&path, MANIFEST_CAP)? else {
        return Ok(None);
    };
    if !MANIFEST_SIGNATURE.verifies(&bytes) {
        return Err(FileError::Refused {
            path,
            why: "is not a manifest futexsim wrote (or was edited since); move it away".into(),
        });
    }
    let text = String::from_utf8_lossy(&bytes);
    Ok(Some(
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split_once('\t'))
            .filter(|(path, _)| is_plain_relative(path))
            .map(|(path, hash)| (path.to_string(), hash.to_string()))
            .collect(),
    ))
}

/// Steps 3 and 4: links for new names, then the swap. `made` collects the
/// links made, for the caller to remove should the swap fail.
fn swap(
    dir: &Path,
    generation: &str,
    entries: &BTreeSet<&str>,
    old: &Published,
    made: &mut Vec<PathBuf>,
) -> Result<(), FileError> {
    for entry in entries
        .iter()
        .filter(|e| !old.linked.contains(**e) && !old.plain.contains(**e))
    {
        let path = dir.join(entry);
        files::put_link(&path, &entry_target(entry), &|_| false, &files::nothing)?;
        made.push(path);
    }
    let live = dir.join(LIVE);
    if let Some(copy) = &old.copied_live {
        // A copy of a generation stands where the link goes: it becomes a
        // generation of its own, removed with the old one.
        files::rename_dir(&live, &dir.join(copy))?;
    }
    let swapped = files::put_link(
        &live,
        Path::new(generation),
        &is_generation_name,
        &files::nothing,
    );
    if let (Err(_), Some(copy)) = (&swapped, &old.copied_live) {
        let _ = files::rename_dir(&dir.join(copy), &live);
    }
    swapped
}

/// Step 5: the plain copy at `entry` (a file or a directory of files, each
/// proven a copy of the old report's) becomes the link.
fn make_link(dir: &Path, entry: &str, old: &Published) -> Result<(), FileError> {
    let path = dir.join(entry);
    if fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
        for item in fs::read_dir(&path).map_err(|source| FileError::Io {
            path: path.clone(),
            source,
        })? {
            let item = item.map_err(|source| FileError::Io {
                path: path.clone(),
                source,
            })?;
            let rel = format!("{entry}/{}", item.file_name().to_string_lossy());
            files::remove(&item.path(), REPORT_FILE_CAP, &|b: &[u8]| {
                old.proves(&rel, b)
            })?;
        }
        if !files::remove_empty_dir(&path)? {
            return Err(FileError::Refused {
                path,
                why: "holds files futexsim did not write: move them away and publish again".into(),
            });
        }
    }
    files::put_link(&path, &entry_target(entry), &|_| false, &|b: &[u8]| {
        old.proves(entry, b)
    })
}

/// What a directory holds of a published report, as step 2 finds it.
#[derive(Default)]
struct Published {
    /// Entries already linked through `.report`.
    linked: BTreeSet<String>,
    /// Entries that are plain copies of the old report.
    plain: BTreeSet<String>,
    /// The live generation `.report` points at.
    live: Option<String>,
    /// A name for the directory standing at `.report` (a dereferenced copy
    /// of a generation), once it is moved aside.
    copied_live: Option<String>,
    /// The old report's files and their hashes (None in a manifest written
    /// before manifests had hashes), and the directory holding them.
    manifest: BTreeMap<String, Option<String>>,
    manifest_dir: PathBuf,
    /// A plain report's files and their hashes.
    plain_manifest: BTreeSet<(String, String)>,
}

impl Published {
    /// Step 2: looks at every name the report takes; refuses the first that
    /// futexsim cannot prove its own.
    fn look(dir: &Path, entries: &BTreeSet<&str>) -> Result<Published, FileError> {
        let mut old = Published::default();
        let live = dir.join(LIVE);
        match fs::symlink_metadata(&live) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = fs::read_link(&live).map_err(|source| FileError::Io {
                    path: live.clone(),
                    source,
                })?;
                if !is_generation_name(&target) {
                    return Err(FileError::Refused {
                        path: live,
                        why: format!("is a link futexsim did not make (to {})", target.display()),
                    });
                }
                old.manifest_dir = dir.join(&target);
                old.live = target.to_str().map(str::to_string);
            }
            Ok(m) if m.is_dir() && m.file_type().is_dir() => {
                if read_manifest(&live)?.is_none() {
                    return Err(FileError::Refused {
                        path: live,
                        why: "is a directory futexsim did not write (it has no manifest); move it away"
                            .into(),
                    });
                }
                old.manifest_dir = live.clone();
                old.copied_live = Some(unique(GENERATION));
            }
            Ok(_) => {
                return Err(FileError::Refused {
                    path: live,
                    why: "is not the link to futexsim's live report; move it away".into(),
                })
            }
            Err(_) => {}
        }
        if !old.manifest_dir.as_os_str().is_empty() {
            old.manifest = read_manifest(&old.manifest_dir)?.unwrap_or_default();
        }
        old.plain_manifest = read_plain_manifest(dir)?.unwrap_or_default();
        for entry in entries {
            let path = dir.join(entry);
            let meta = match fs::symlink_metadata(&path) {
                Ok(meta) => meta,
                Err(_) => continue,
            };
            let kind = meta.file_type();
            if kind.is_symlink() {
                if fs::read_link(&path).is_ok_and(|t| t == entry_target(entry)) {
                    old.linked.insert(entry.to_string());
                    continue;
                }
                return Err(FileError::Refused {
                    path,
                    why: "is a link futexsim did not make; move it away".into(),
                });
            }
            let proven = if kind.is_file() {
                old.proves_file(&path, entry)
            } else if kind.is_dir() {
                fs::read_dir(&path).is_ok_and(|items| {
                    items.filter_map(Result::ok).all(|item| {
                        let rel = format!("{entry}/{}", item.file_name().to_string_lossy());
                        old.proves_file(&item.path(), &rel)
                    })
                })
            } else {
                false
            };
            if !proven {
                return Err(FileError::Refused {
                    path,
                    why: "holds what futexsim did not write (it is no copy of this directory's \
                          report): move it away and publish again"
                        .into(),
                });
            }
            old.plain.insert(entry.to_string());
        }
        Ok(old)
    }

    /// Whether `bytes` are the old report's file `rel`: its manifest's hash,
    /// or (a manifest without hashes) the same bytes as the file, or a hash
    /// the plain manifest lists for it.
    fn proves(&self, rel: &str, bytes: &[u8]) -> bool {
        if self
            .plain_manifest
            .contains(&(rel.to_string(), files::hash_hex(bytes)))
        {
            return true;
        }
        match self.manifest.get(rel) {
            Some(Some(hash)) => files::hash_hex(bytes) == *hash,
            Some(None) => files::read(&self.manifest_dir.join(rel), REPORT_FILE_CAP)
                .is_ok_and(|theirs| theirs == bytes),
            None => false,
        }
    }

    fn proves_file(&self, path: &Path, rel: &str) -> bool {
        fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file())
            && files::read(path, REPORT_FILE_CAP).is_ok_and(|bytes| self.proves(rel, &bytes))
    }

    /// The generations the new one replaces.
    fn generations(&self) -> impl Iterator<Item = &String> {
        self.live.iter().chain(&self.copied_live)
    }
}

/// Step 1: writes every file into the new generation `staged`, its manifest
/// first, and syncs them.
fn stage(staged: &Path, rendered: &[File]) -> Result<(), FileError> {
    files::create_dir(staged)?;
    let manifest: String = rendered
        .iter()
        .map(|f| format!("{}\t{}\n", f.path, files::hash_hex(&f.bytes)))
        .collect();
    let manifest = MANIFEST_SIGNATURE.sign(&manifest);
    let mut dirs = BTreeSet::from([staged.to_path_buf()]);
    for (path, bytes) in std::iter::once((MANIFEST, manifest.as_bytes())).chain(
        rendered
            .iter()
            .map(|f| (f.path.as_str(), f.bytes.as_slice())),
    ) {
        let path = staged.join(path);
        if let Some(parent) = path.parent() {
            if dirs.insert(parent.to_path_buf()) {
                files::create_dir(parent)?;
            }
        }
        files::create_new(&path, bytes)?;
    }
    for d in dirs {
        files::sync_dir(&d)?;
    }
    Ok(())
}

/// A manifest's last line: its checksum, so that one a user wrote or
/// edited is never taken for futexsim's.
const MANIFEST_SIGNATURE: files::Signature =
    files::Signature::new("# futexsim report manifest, checksum ", "");

/// A generation's manifest: each path with its hash (None in a manifest
/// written before manifests had them); None when there is none, or what is
/// there is not a manifest futexsim wrote.
fn read_manifest(generation: &Path) -> Result<Option<BTreeMap<String, Option<String>>>, FileError> {
    let Some(bytes) = files::read_own(&generation.join(MANIFEST), MANIFEST_CAP)? else {
        return Ok(None);
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return Ok(None);
    };
    let listed: BTreeMap<String, Option<String>> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| match l.split_once('\t') {
            Some((path, hash)) => (path.to_string(), Some(hash.to_string())),
            None => (l.to_string(), None),
        })
        .collect();
    // A manifest from before manifests were signed lists report files
    // only, one path a line.
    let unsigned_but_plain = || {
        listed.iter().all(|(path, hash)| {
            hash.is_none()
                && is_plain_relative(path)
                && [".md", ".json", ".csv", ".svg"]
                    .iter()
                    .any(|e| path.ends_with(e))
        })
    };
    let proven = MANIFEST_SIGNATURE.verifies(text.as_bytes()) || unsigned_but_plain();
    Ok(proven.then(|| {
        listed
            .into_iter()
            .filter(|(path, _)| is_plain_relative(path))
            .collect()
    }))
}

/// Removes a generation's files as its manifest lists them (each only when
/// its hash matches), then its directories once empty. What the manifest
/// does not list, or lists with another hash, stays, named in a warning.
fn remove_generation(generation: &Path) -> Result<(), FileError> {
    if !fs::symlink_metadata(generation).is_ok_and(|m| m.file_type().is_dir()) {
        return Ok(());
    }
    let Some(listed) = read_manifest(generation)? else {
        eprintln!(
            "futexsim: warning: {} has no manifest futexsim wrote; it is left as it is",
            generation.display()
        );
        return Ok(());
    };
    let mut dirs = BTreeSet::new();
    for (path, hash) in &listed {
        let path = generation.join(path);
        let ours = |bytes: &[u8]| hash.as_ref().is_none_or(|h| files::hash_hex(bytes) == *h);
        files::remove(&path, REPORT_FILE_CAP, &ours)?;
        let mut parent = path.parent();
        while let Some(p) = parent.filter(|p| p.starts_with(generation) && *p != generation) {
            dirs.insert(p.to_path_buf());
            parent = p.parent();
        }
    }
    // The manifest last: until it goes, a kill leaves a generation the
    // next publish can still remove.
    files::remove(&generation.join(MANIFEST), MANIFEST_CAP, &|_| true)?; // proven above
    for d in dirs.iter().rev() {
        files::remove_empty_dir(d)?;
    }
    if !files::remove_empty_dir(generation)? && generation.exists() {
        eprintln!(
            "futexsim: warning: {} keeps files futexsim did not write; look at them and remove it",
            generation.display()
        );
    }
    Ok(())
}

/// A manifest line names a file inside its generation: no `..`, not absolute.
fn is_plain_relative(line: &str) -> bool {
    !line.is_empty()
        && Path::new(line)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}

/// Whether the entry `name` of `dir`, of file type `kind`, is a published
/// report's own: a plain report's manifest, the live link (or a copy of
/// its generation), a generation, a link a reader opens through the live
/// one, a link a killed writer was about to rename, or a file of the report
/// (a plain report's, or a plain copy of a generation's).
pub fn is_own_entry(dir: &Path, name: &str, kind: fs::FileType) -> bool {
    if name == PLAIN_MANIFEST {
        kind.is_file() && read_plain_manifest(dir).is_ok_and(|m| m.is_some())
    } else if name == LIVE {
        kind.is_symlink()
            || (kind.is_dir() && read_manifest(&dir.join(LIVE)).is_ok_and(|m| m.is_some()))
    } else if name.starts_with(GENERATION) {
        kind.is_dir()
    } else if is_stale_link_name(name) {
        kind.is_symlink()
    } else if kind.is_symlink() {
        fs::read_link(dir.join(name)).is_ok_and(|t| t == entry_target(name))
    } else {
        Published::look(dir, &BTreeSet::from([name])).is_ok()
    }
}

/// The name of a link a writer killed before its rename left: the old
/// `.report.new-*`, or a temporary link of [`files::put_link`].
fn is_stale_link_name(name: &str) -> bool {
    name.starts_with(".report.new-") || (name.starts_with('.') && name.contains(".tmp-link-"))
}

/// Generations and links a killed writer left: none is live, so none holds
/// anything to keep (but files a user put there, which stay).
fn remove_dead_generations(dir: &Path) -> Result<(), FileError> {
    let live = fs::read_link(dir.join(LIVE)).ok();
    let entries = fs::read_dir(dir).map_err(|source| FileError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    for entry in entries {
        let entry = entry.map_err(|source| FileError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let name = entry.file_name().to_string_lossy().into_owned();
        // The caller holds the directory's lock: no other writer is at
        // work here, so every such link is a killed one's.
        if is_stale_link_name(&name) {
            files::remove_link(&entry.path(), &|t| {
                t.starts_with(LIVE) || is_generation_name(t)
            })?;
        } else if name.starts_with(GENERATION) && live.as_deref() != Some(Path::new(&name)) {
            remove_generation(&entry.path())?;
        }
    }
    Ok(())
}

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    File(#[from] FileError),
    /// Not JSON, or a field not of its type or out of its range; `why`
    /// names the field.
    #[error("{path}: not a futexsim result file: {why}")]
    Json { path: PathBuf, why: JsonError },
    #[error("{path}: not a consistent result set: {why}")]
    Inconsistent { path: PathBuf, why: SetError },
}

/// Why two result sets' figures do not compare like with like (another
/// window or another number of repetitions); None when they do.
pub fn incomparable(a: &ResultSet, b: &ResultSet) -> Option<String> {
    let window = |set: &ResultSet| {
        let doc: toml::Table = toml::from_str(&set.provenance.resolved_config).unwrap_or_default();
        let run = doc
            .get("run")
            .and_then(toml::Value::as_table)
            .cloned()
            .unwrap_or_default();
        let us = |key: &str| run.get(key).and_then(toml::Value::as_integer);
        (
            us("duration_us"),
            us("warmup_us"),
            set.provenance.repetitions,
        )
    };
    let (wa, wb) = (window(a), window(b));
    (wa != wb).then(|| {
        let show = |(d, w, r): (Option<i64>, Option<i64>, u32)| {
            let us = |v: Option<i64>| v.map_or("?".into(), |v| v.to_string());
            format!("{} us after {} us of warmup, {r} repetitions", us(d), us(w))
        };
        format!("A runs {}, B {}", show(wa), show(wb))
    })
}

/// [`read`] under the directory's shared lock: a futexsim writing there
/// finishes first.
pub fn read_locked(dir: &Path) -> Result<(ResultSet, SpeedLog), ReadError> {
    let _lock = crate::dir_lock::lock_shared(dir)?;
    read(dir)
}

/// The result set and speed log of a report directory. A missing speed.json
/// (results copied without it) reads as an empty log.
pub fn read(dir: &Path) -> Result<(ResultSet, SpeedLog), ReadError> {
    let path = dir.join(RESULTS_JSON);
    let set: ResultSet = read_json(&path)?;
    set.check()
        .map_err(|why| ReadError::Inconsistent { path, why })?;
    let speed_path = dir.join(SPEED_JSON);
    let speed = if speed_path.exists() {
        read_json(&speed_path)?
    } else {
        SpeedLog::default()
    };
    Ok((set, speed))
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, ReadError> {
    let text = files::read(path, limits::RESULTS_CAP)?;
    crate::results::from_json(&text).map_err(|why| ReadError::Json {
        path: path.into(),
        why,
    })
}
