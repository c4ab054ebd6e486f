//! Reports rendered from a result set: one module per output format, all fed
//! from the same records, published into a directory all at once or not at all.
//!
//! A report is a generation: a directory `.report-<pid>-<time>` holding every
//! file, and a manifest of them written first. `.report` is a symbolic link
//! to the live generation, and the names a reader opens (report.md,
//! results.json, charts/, ...) are links through it. `write` renders every
//! file in memory, writes and syncs a new generation, and publishes it by
//! renaming one new link over `.report`: one atomic swap, so a reader, a
//! kill or an error at any moment sees the old report whole or the new one
//! whole. The old generation is then removed, file by file from its
//! manifest; anything else found in it (a file a user put there) is kept.
//! The caller holds the directory's lock ([`crate::campaign::lock`]).

pub mod c2c;
pub mod charts;
pub mod compare;
mod csv;
mod json;
mod markdown;
mod private_hash;
pub mod summary;
pub mod usl;

use crate::results::{ResultSet, SpeedLog};
use std::collections::BTreeSet;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// One rendered file, its path relative to the report directory.
pub struct File {
    pub path: String,
    pub bytes: Vec<u8>,
}

/// A format renders its files from the result set and the speed log.
type Format = fn(&ResultSet, &SpeedLog) -> std::io::Result<Vec<File>>;

const FORMATS: [Format; 4] = [charts::files, json::files, csv::files, markdown::files];

/// The link to the live generation.
pub const LIVE: &str = ".report";
/// What every generation's name starts with (then `<pid>-<nanoseconds>`).
pub const GENERATION: &str = ".report-";
/// In a generation: the paths of its files, one a line, written before them.
pub const MANIFEST: &str = "manifest";
pub const RESULTS_JSON: &str = "results.json";
pub const SPEED_JSON: &str = "speed.json";
pub const REPORT_MD: &str = "report.md";

fn context(what: &str, path: &Path) -> impl FnOnce(std::io::Error) -> std::io::Error {
    let path = path.display().to_string();
    let what = what.to_string();
    move |e: std::io::Error| std::io::Error::new(e.kind(), format!("{what} {path}: {e}"))
}

/// A name no other writer uses: this process's id and the time.
fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{prefix}{}-{nanos}", std::process::id())
}

pub fn write(dir: &Path, set: &ResultSet, speed: &SpeedLog) -> std::io::Result<()> {
    let mut files = Vec::new();
    for format in FORMATS {
        files.extend(format(set, speed)?);
    }
    fs::create_dir_all(dir).map_err(context("creating", dir))?;
    remove_dead_generations(dir)?;
    let generation = unique(GENERATION);
    let staged = dir.join(&generation);
    if let Err(e) = stage(&staged, &files) {
        // On a full disk, give back what the half-written report took; the
        // live report is untouched either way.
        let _ = remove_generation(&staged);
        return Err(e);
    }
    let entries: BTreeSet<&str> = files
        .iter()
        .filter_map(|f| f.path.split('/').next())
        .collect();
    let old = fs::read_link(dir.join(LIVE)).ok();
    if let Err(e) = publish(dir, &generation, &entries) {
        let _ = remove_generation(&staged);
        return Err(e);
    }
    // Only a generation's own name: a link edited to point elsewhere names
    // nothing futexsim wrote.
    let old = old
        .and_then(|o| o.to_str().map(str::to_string))
        .filter(|o| o.starts_with(GENERATION) && is_plain_relative(o) && *o != generation);
    match old {
        Some(old) => remove_generation(&dir.join(old)),
        None => Ok(()),
    }
}

/// Makes `generation` the live report: the names a reader opens link
/// through `.report`, and one rename points `.report` at it.
fn publish(dir: &Path, generation: &str, entries: &BTreeSet<&str>) -> std::io::Result<()> {
    for entry in entries {
        link_entry(dir, entry)?;
    }
    let link = dir.join(unique(".report.new-"));
    std::os::unix::fs::symlink(generation, &link).map_err(context("linking", &link))?;
    if let Err(e) = fs::rename(&link, dir.join(LIVE)) {
        let _ = fs::remove_file(&link);
        return Err(context("publishing", &dir.join(LIVE))(e));
    }
    // Make the swap itself durable.
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(context("syncing", dir))
}

/// Writes every file into the new generation `staged`, its manifest first,
/// and syncs them.
fn stage(staged: &Path, files: &[File]) -> std::io::Result<()> {
    fs::create_dir(staged).map_err(context("creating", staged))?;
    let manifest: String = files.iter().map(|f| format!("{}\n", f.path)).collect();
    let mut dirs = BTreeSet::from([staged.to_path_buf()]);
    for (path, bytes) in std::iter::once((MANIFEST, manifest.as_bytes()))
        .chain(files.iter().map(|f| (f.path.as_str(), f.bytes.as_slice())))
    {
        let path = staged.join(path);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(context("creating", parent))?;
            dirs.insert(parent.to_path_buf());
        }
        let mut out = fs::File::create_new(&path).map_err(context("writing", &path))?;
        out.write_all(bytes)
            .and_then(|()| out.sync_all())
            .map_err(context("writing", &path))?;
    }
    for d in dirs {
        fs::File::open(&d)
            .and_then(|f| f.sync_all())
            .map_err(context("syncing", &d))?;
    }
    Ok(())
}

/// Makes `dir/entry` the link `.report/entry`. A plain file or directory
/// there is the report of a futexsim that wrote reports in place: its files
/// are replaced, and a chart directory holding anything but charts is left
/// alone and refused.
fn link_entry(dir: &Path, entry: &str) -> std::io::Result<()> {
    let path = dir.join(entry);
    let target = Path::new(LIVE).join(entry);
    match fs::symlink_metadata(&path) {
        Ok(m) if m.file_type().is_symlink() => {
            if fs::read_link(&path)? == target {
                return Ok(());
            }
            fs::remove_file(&path).map_err(context("replacing", &path))?;
        }
        Ok(m) if m.is_dir() => {
            for item in fs::read_dir(&path)? {
                let item = item?.path();
                if item.extension().is_some_and(|e| e == "svg") && item.is_file() {
                    fs::remove_file(&item).map_err(context("replacing", &item))?;
                }
            }
            fs::remove_dir(&path).map_err(|e| {
                std::io::Error::new(
                    e.kind(),
                    format!(
                        "{} holds files futexsim did not write: move them away and publish again",
                        path.display()
                    ),
                )
            })?;
        }
        Ok(_) => fs::remove_file(&path).map_err(context("replacing", &path))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(context("reading", &path)(e)),
    }
    std::os::unix::fs::symlink(&target, &path).map_err(context("linking", &path))
}

/// Removes a generation's files as its manifest lists them, then its
/// directories once empty. What the manifest does not list stays, named in
/// a warning.
fn remove_generation(generation: &Path) -> std::io::Result<()> {
    let manifest = generation.join(MANIFEST);
    let listed = match fs::read_to_string(&manifest) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(context("reading", &manifest)(e)),
    };
    let mut dirs = BTreeSet::new();
    for path in listed.lines().filter(|l| is_plain_relative(l)) {
        let path = generation.join(path);
        match fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(context("removing", &path)(e)),
        }
        let mut parent = path.parent();
        while let Some(p) = parent.filter(|p| p.starts_with(generation) && *p != generation) {
            dirs.insert(p.to_path_buf());
            parent = p.parent();
        }
    }
    let _ = fs::remove_file(&manifest);
    // Deepest first.
    for d in dirs.iter().rev() {
        let _ = fs::remove_dir(d);
    }
    if fs::remove_dir(generation).is_err() && generation.exists() {
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
/// report's own: the live link, a generation, a link a reader opens through
/// the live one, or the new link of a writer killed before its swap.
pub fn is_own_entry(dir: &Path, name: &str, kind: fs::FileType) -> bool {
    if name == LIVE || name.starts_with(".report.new-") {
        kind.is_symlink()
    } else if name.starts_with(GENERATION) {
        kind.is_dir()
    } else {
        kind.is_symlink()
            && fs::read_link(dir.join(name)).is_ok_and(|t| t == Path::new(LIVE).join(name))
    }
}

/// Generations and links a killed writer left: none is live, so none holds
/// anything to keep (but files a user put there, which stay).
fn remove_dead_generations(dir: &Path) -> std::io::Result<()> {
    let live = fs::read_link(dir.join(LIVE)).ok();
    for entry in fs::read_dir(dir).map_err(context("reading", dir))? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry.file_type()?;
        if name.starts_with(".report.new-") && kind.is_symlink() {
            fs::remove_file(entry.path()).map_err(context("removing", &entry.path()))?;
        } else if name.starts_with(GENERATION)
            && kind.is_dir()
            && live.as_deref() != Some(Path::new(&name))
        {
            remove_generation(&entry.path())?;
        }
    }
    Ok(())
}

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Not JSON, or a field not of its type or out of its range; `why`
    /// names the field.
    #[error("{path}: not a futexsim result file: {why}")]
    Json { path: PathBuf, why: String },
    #[error("{path}: not a consistent result set: {why}")]
    Inconsistent { path: PathBuf, why: String },
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
    let text = fs::read(path).map_err(|source| ReadError::Io {
        path: path.into(),
        source,
    })?;
    crate::results::from_json(&text).map_err(|why| ReadError::Json {
        path: path.into(),
        why,
    })
}
