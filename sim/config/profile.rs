//! A machine profile a user brings as a file: `[machine] preset = "path"`.
//! It is read and checked on its own, so a mistake in it is reported at its
//! own file, line and column, not at the config that names it.

use super::source::{ConfigError, Source};
use super::with_suggestion;
use crate::machine::{plausible, Machine, MachineSpec};
use std::ops::Range;
use std::path::{Path, PathBuf};

/// Whether a `preset` value names a file rather than a shipped profile: a
/// shipped name holds neither a `/` nor the `.toml` of a file.
pub fn is_profile_path(preset: &str) -> bool {
    preset.contains('/') || preset.ends_with(".toml")
}

/// Where a profile named in `config_file` lies: a relative path resolves
/// against the directory of the config that names it.
pub fn resolve(config_file: &str, preset: &str) -> PathBuf {
    let named = Path::new(preset);
    match Path::new(config_file).parent() {
        Some(dir) if named.is_relative() => dir.join(named),
        _ => named.to_path_buf(),
    }
}

/// Reads and checks the profile at `path`. `named_at` places the one error
/// the profile's own text cannot: that the file cannot be read.
pub fn load(
    path: &Path,
    named_at: impl FnOnce(String) -> ConfigError,
) -> Result<MachineSpec, ConfigError> {
    let file = path.display().to_string();
    let text = crate::files::read_text(path, crate::limits::CONFIG_CAP).map_err(|e| {
        named_at(format!(
            "cannot read the machine profile {file}: {}; expected a profile file \
             (the format of configs/machines/*.toml) or a shipped preset's name",
            e.reason()
        ))
    })?;
    parse(&file, &text)
}

/// A profile's text, checked as a whole machine: the first mistake at its
/// line and column.
pub fn parse(file: &str, text: &str) -> Result<MachineSpec, ConfigError> {
    let src = Source::parse(file, text).map_err(in_profile)?;
    let spec: MachineSpec = toml::from_str(text)
        .map_err(|e| in_profile(src.error_at(e.span(), with_suggestion(e.message()))))?;
    Machine::new(spec.clone()).map_err(|e| {
        let at = blamed_span(&src, &e.message);
        in_profile(src.error_at(at, e.message))
    })?;
    plausible::check(&spec).map_err(|e| {
        let mut path = vec!["plausible".to_string(), e.parameter.clone()];
        path.extend(e.key.map(String::from));
        in_profile(src.error_at_path(&path, e.to_string()))
    })?;
    Ok(spec)
}

/// Every error found inside a profile says so, as the file it names may be
/// taken for the config.
fn in_profile(mut e: ConfigError) -> ConfigError {
    e.message = format!("machine profile: {}", e.message);
    e
}

/// A machine's check names the key it blames first (`topology.sockets must
/// ...`); the error is placed there when the file writes it.
fn blamed_span(src: &Source, message: &str) -> Option<Range<usize>> {
    let key = message.split_whitespace().next()?;
    let path: Vec<String> = key
        .split('.')
        .map(|s| {
            s.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .to_string()
        })
        .collect();
    if path.len() < 2 || path.iter().any(String::is_empty) {
        return None;
    }
    src.span_of(&path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROFILE: &str = "name = \"two\"\nsource = \"a test\"\n\n[topology]\nsockets = 1\n\
        cores_per_socket = 4\ncores_per_llc = 4\n\n[latency]\nl1_hit = 1.0\nsmt = 5.0\n\
        llc = 40.0\nnode = 40.0\nremote = [[0.0]]\ndram_local = 90.0\nrmw = 6.0\n";

    #[test]
    fn names_with_a_slash_or_a_toml_ending_are_files() {
        assert!(is_profile_path("machines/box.toml"));
        assert!(is_profile_path("box.toml"));
        assert!(is_profile_path("./box"));
        assert!(!is_profile_path("icx-2s"));
    }

    #[test]
    fn relative_paths_resolve_against_the_config_directory() {
        assert_eq!(
            resolve("configs/study.toml", "machines/box.toml"),
            Path::new("configs/machines/box.toml")
        );
        assert_eq!(
            resolve("configs/study.toml", "/etc/box.toml"),
            Path::new("/etc/box.toml")
        );
        assert_eq!(resolve("study.toml", "box.toml"), Path::new("box.toml"));
    }

    #[test]
    fn a_whole_profile_parses_and_a_broken_one_is_placed_in_it() {
        assert_eq!(parse("p.toml", PROFILE).unwrap().name, "two");
        let unknown = PROFILE.replace("rmw", "rmww");
        let e = parse("p.toml", &unknown).unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("p.toml", 16));
        assert!(e.message.contains("did you mean `rmw`"), "{e}");
        let uneven = PROFILE.replace("cores_per_llc = 4", "cores_per_llc = 3");
        let e = parse("p.toml", &uneven).unwrap_err();
        assert_eq!((e.line, e.column), (6, 20), "{e}");
        assert!(e.message.starts_with("machine profile: "), "{e}");
    }

    #[test]
    fn a_plausible_range_that_excludes_the_profile_value_is_refused_at_its_bound() {
        let ranged = format!(
            "{PROFILE}\n[plausible]\n\"latency.rmw\" = {{ low = 7.0, high = 9.0, source = \"a test\" }}\n"
        );
        let e = parse("p.toml", &ranged).unwrap_err();
        assert_eq!(
            (e.file.as_str(), e.line, e.column),
            ("p.toml", 19, 25),
            "{e}"
        );
        assert!(
            e.message.contains("plausible.\"latency.rmw\"")
                && e.message
                    .contains("does not hold the profile's own value, 6"),
            "{e}"
        );
        let held = ranged.replace("low = 7.0", "low = 5.0");
        assert_eq!(parse("p.toml", &held).unwrap().plausible.len(), 1);
    }
}
