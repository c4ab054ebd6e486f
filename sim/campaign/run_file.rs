//! A finished run on disk: its record, the id of the run it belongs to, and
//! a checksum of its bytes. A file renamed, copied over another run's, or
//! edited is caught when it is read, never used in place of the run it is
//! named for.
//!
//! The checksum is the last field and covers the text before it, so it is
//! checked on the bytes as written, independent of how they parse.

use crate::echo::{echo_in, EchoStyle};
use crate::files::hash_hex as hash64;
use crate::record::{RecordError, RunRecord, Speed};
use crate::results::{from_json, JsonError};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
pub struct RunFile {
    pub id: String,
    pub record: RunRecord,
    pub speed: Speed,
    /// When the run finished, RFC 3339 UTC, and the peak resident memory of
    /// the process that ran it by then (since its campaign started): a
    /// campaign resumed or reused later still reports when and in how much
    /// memory its runs were simulated.
    pub finished: String,
    pub peak_rss_bytes: u64,
}

/// Joins the body and its checksum: `{...,"checksum":"<16 hex>"}`.
const CHECKSUM_KEY: &str = ",\"checksum\":\"";

/// The file's text: the run as JSON with its checksum appended.
pub fn encode(file: &RunFile) -> String {
    let body = serde_json::to_string(file).expect("a run serializes");
    let open = body
        .strip_suffix('}')
        .expect("a struct serializes to an object");
    format!("{open}{CHECKSUM_KEY}{}\"}}", hash64(open.as_bytes()))
}

/// The run file `text` holds when it is whole and the run `id`'s, else why not.
pub fn decode(text: &str, id: &str) -> Result<RunFile, RunFileError> {
    let open = text
        .trim_end()
        .strip_suffix("\"}")
        .ok_or(RunFileError::NoChecksumAtEnd)?;
    let (body, sum) = open
        .rsplit_once(CHECKSUM_KEY)
        .ok_or(RunFileError::NoChecksum)?;
    if sum != hash64(body.as_bytes()) {
        return Err(RunFileError::ChecksumMismatch);
    }
    // Checked field by field: a file edited with its checksum made anew is
    // still refused for a value no run gives.
    let file: RunFile = from_json(text.as_bytes()).map_err(RunFileError::Parse)?;
    if file.id != id {
        return Err(RunFileError::OtherRun { id: file.id });
    }
    file.record.check().map_err(RunFileError::Record)?;
    Ok(file)
}

/// Why a file in runs/ is not the run it is named for.
#[derive(Debug, thiserror::Error)]
pub enum RunFileError {
    #[error("it is not text")]
    NotText,
    #[error("it does not end with a checksum")]
    NoChecksumAtEnd,
    #[error("it carries no checksum")]
    NoChecksum,
    #[error("its checksum does not match its content")]
    ChecksumMismatch,
    #[error("it does not parse: {0}")]
    Parse(JsonError),
    #[error("it holds run {}", echo_in(id, EchoStyle::AsStored))]
    OtherRun { id: String },
    #[error("it does not hold a run's record: record.{0}")]
    Record(RecordError),
}

/// Whether a file name is one a run file has: `<16 hex digits>.json`.
pub fn is_run_file_name(name: &str) -> bool {
    name.strip_suffix(".json")
        .is_some_and(|id| id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Whether a file in runs/ named `name` and holding `text` is a run file
/// futexsim wrote: named for the run it holds, with a checksum that matches,
/// or (written before run files had one) a run's id, record and speed.
pub fn is_futexsims(name: &str, text: &str) -> bool {
    let Some(id) = name
        .strip_suffix(".json")
        .filter(|_| is_run_file_name(name))
    else {
        return false;
    };
    if decode(text, id).is_ok() {
        return true;
    }
    serde_json::from_str::<serde_json::Value>(text).is_ok_and(|v| {
        v.get("id").and_then(|i| i.as_str()) == Some(id)
            && v.get("record").is_some()
            && v.get("speed").is_some()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_whole_files_of_the_named_run_decode() {
        let text = r#"{"id":"00000000000000ab","x":1}"#;
        let open = text.strip_suffix('}').unwrap();
        let signed = format!("{open}{CHECKSUM_KEY}{}\"}}", hash64(open.as_bytes()));
        // The body is no RunFile, but every check before parsing passes.
        let err = decode(&signed, "00000000000000ab").err();
        assert!(matches!(err, Some(RunFileError::Parse(_))), "{err:?}");
        assert!(err.is_some_and(|e| e.to_string().starts_with("it does not parse: ")));
        let edited = signed.replace("\"x\":1", "\"x\":2");
        assert!(matches!(
            decode(&edited, "00000000000000ab"),
            Err(RunFileError::ChecksumMismatch)
        ));
        assert!(matches!(
            decode(text, "00000000000000ab"),
            Err(RunFileError::NoChecksumAtEnd)
        ));
        assert!(is_run_file_name("0123456789abcdef.json"));
        assert!(!is_run_file_name("notes.json"));
        assert!(!is_run_file_name("0123456789abcdeg.json"));
    }
}
