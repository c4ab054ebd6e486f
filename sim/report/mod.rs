//! Reports rendered from a result set: one module per output format, all fed
//! from the same records, written into a directory all at once or not at all.
//!
//! `write` renders every file in memory, writes them into a temporary
//! directory inside the report directory, syncs them, and only then renames
//! each into place (charts first, report.md last). A run that fails or is
//! interrupted before the renames leaves the previous report as it was.

mod c2c;
pub mod charts;
pub mod compare;
mod csv;
mod json;
mod markdown;
pub mod summary;
pub mod usl;

use crate::results::{ResultSet, SpeedLog};
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

/// Every format, in the order their files are moved into place: report.md,
/// which links the rest, comes last.
const FORMATS: [Format; 4] = [charts::files, json::files, csv::files, markdown::files];

/// Where files are written before they are moved into place.
pub const TEMP_DIR: &str = ".report-tmp";
pub const RESULTS_JSON: &str = "results.json";
pub const SPEED_JSON: &str = "speed.json";
pub const REPORT_MD: &str = "report.md";

pub fn write(dir: &Path, set: &ResultSet, speed: &SpeedLog) -> std::io::Result<()> {
    let mut files = Vec::new();
    for format in FORMATS {
        files.extend(format(set, speed)?);
    }
    let context = |what: &str, path: &Path| {
        let path = path.display().to_string();
        let what = what.to_string();
        move |e: std::io::Error| std::io::Error::new(e.kind(), format!("{what} {path}: {e}"))
    };
    fs::create_dir_all(dir).map_err(context("creating", dir))?;
    let temp = dir.join(TEMP_DIR);
    // A directory left by an interrupted run holds nothing worth keeping.
    if temp.is_dir() {
        fs::remove_dir_all(&temp).map_err(context("removing", &temp))?;
    }
    fs::create_dir(&temp).map_err(context("creating", &temp))?;
    let written = files.iter().try_for_each(|file| {
        let path = temp.join(&file.path);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(context("creating", parent))?;
        }
        let mut out = fs::File::create(&path).map_err(context("writing", &path))?;
        out.write_all(&file.bytes)
            .and_then(|()| out.sync_all())
            .map_err(context("writing", &path))
    });
    if let Err(e) = written {
        // On a full disk, give back what the half-written report took; the
        // previous report is untouched either way.
        let _ = fs::remove_dir_all(&temp);
        return Err(e);
    }
    for file in &files {
        let (from, to) = (temp.join(&file.path), dir.join(&file.path));
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent).map_err(context("creating", parent))?;
        }
        fs::rename(&from, &to).map_err(context("moving into place", &to))?;
    }
    remove_stale_charts(dir, &files)?;
    fs::remove_dir_all(&temp).map_err(context("removing", &temp))?;
    // Make the renames themselves durable.
    fs::File::open(dir).and_then(|d| d.sync_all())
}

/// Charts of designs or points a previous report had and this one lacks.
fn remove_stale_charts(dir: &Path, files: &[File]) -> std::io::Result<()> {
    let charts = dir.join(charts::DIR);
    if !charts.is_dir() {
        return Ok(());
    }
    for entry in fs::read_dir(&charts)? {
        let path = entry?.path();
        let relative = format!(
            "{}/{}",
            charts::DIR,
            path.file_name().unwrap_or_default().to_string_lossy()
        );
        let svg = path.extension().is_some_and(|e| e == "svg");
        if svg && !files.iter().any(|f| f.path == relative) {
            fs::remove_file(&path)?;
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
    #[error("{path}: not a futexsim result file: {source}")]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
}

/// The result set and speed log of a report directory. A missing speed.json
/// (results copied without it) reads as an empty log.
pub fn read(dir: &Path) -> Result<(ResultSet, SpeedLog), ReadError> {
    let set = read_json(&dir.join(RESULTS_JSON))?;
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
    serde_json::from_slice(&text).map_err(|source| ReadError::Json {
        path: path.into(),
        source,
    })
}
