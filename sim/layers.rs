//! The crate's layers, bottom first (docs/architecture.md): a module may
//! import from its own layer and the layers below it, never from one above.
//! The tests read the sources and name every import that breaks this.

use std::path::{Path, PathBuf};

/// Each layer and the top-level modules of sim/ in it, bottom first. The
/// command line (sim/cli, sim/main.rs) is the top and may use anything.
const LAYERS: [(&str, &[&str]); 12] = [
    (
        "foundations",
        &[
            "limits",
            "address_map",
            "echo",
            "hash",
            "memory",
            "huge_pages",
            "prefetch",
            "perf_stat",
            "files",
            "dir_lock",
            "expr",
            "symbol",
        ],
    ),
    ("machine", &["machine", "progress"]),
    ("coherence", &["coherence"]),
    ("kernel", &["kernel"]),
    ("engine", &["task", "engine"]),
    ("record", &["record", "results"]),
    ("workload", &["workload"]),
    ("analysis", &["analysis", "footprint"]),
    ("scenario", &["scenario"]),
    ("config", &["config"]),
    ("report", &["report", "sensitivity"]),
    ("commands", &["campaign", "validate", "host", "advise"]),
];

/// The layer a top-level module is in, by its index from the bottom.
fn layer_of(module: &str) -> Option<usize> {
    LAYERS
        .iter()
        .position(|(_, modules)| modules.contains(&module))
}

/// The imports in `source` (of top-level module `module`) from a higher
/// layer, as "line: module imports other (layer)". Test modules at the end
/// of a file may import anything; comments are not read.
fn upward_imports(module: &str, source: &str) -> Vec<String> {
    let own = layer_of(module);
    let code = source
        .find("#[cfg(test)]\nmod ")
        .map_or(source, |at| &source[..at]);
    let mut found = Vec::new();
    for (n, line) in code.lines().enumerate() {
        if line.trim_start().starts_with("//") {
            continue;
        }
        for (at, _) in line.match_indices("crate::") {
            let rest = &line[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if name.is_empty() {
                found.push(format!(
                    "{}: an import of several modules at once; name one module a `use`",
                    n + 1
                ));
                continue;
            }
            if name == module {
                continue;
            }
            match (own, layer_of(&name)) {
                (Some(own), Some(other)) if other > own => found.push(format!(
                    "{}: {module} imports {name} (layer {})",
                    n + 1,
                    LAYERS[other].0
                )),
                (_, None) => found.push(format!("{}: {name} is in no layer", n + 1)),
                _ => {}
            }
        }
    }
    found
}

fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.map(|e| e.path()).unwrap_or_default())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sim_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("sim")
    }

    #[test]
    fn every_module_of_the_library_is_in_exactly_one_layer() {
        let lib = std::fs::read_to_string(sim_dir().join("lib.rs")).unwrap();
        let modules: Vec<&str> = lib
            .lines()
            .filter_map(|l| l.trim_start_matches("pub ").strip_prefix("mod "))
            .map(|l| l.trim_end_matches(';'))
            .filter(|m| *m != "layers")
            .collect();
        assert!(modules.len() > 20, "{modules:?}");
        for module in &modules {
            let layers = LAYERS.iter().filter(|(_, ms)| ms.contains(module)).count();
            assert_eq!(layers, 1, "{module} is in {layers} layers");
        }
        for (_, layer) in LAYERS {
            for module in layer {
                assert!(modules.contains(module), "{module} is not a module");
            }
        }
    }

    #[test]
    fn no_module_imports_from_a_layer_above_its_own() {
        let sim = sim_dir();
        let mut files = Vec::new();
        rust_files(&sim, &mut files);
        let mut found = Vec::new();
        for path in files {
            let rel = path.strip_prefix(&sim).unwrap();
            let first = rel
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_string_lossy();
            let module = first.trim_end_matches(".rs");
            if ["lib", "main", "cli", "layers"].contains(&module) {
                continue;
            }
            let source = std::fs::read_to_string(&path).unwrap();
            for import in upward_imports(module, &source) {
                found.push(format!("sim/{}:{import}", rel.display()));
            }
        }
        assert!(found.is_empty(), "{}", found.join("\n"));
    }

    #[test]
    fn the_check_names_an_import_from_above_and_lets_one_from_below_pass() {
        let source = "use crate::memory::Mem;\nuse crate::analysis::population::MAX_TASKS;\n\
                      // crate::report in a comment\n#[cfg(test)]\nmod tests {\n    use crate::config::Config;\n}\n";
        assert_eq!(
            upward_imports("kernel", source),
            ["2: kernel imports analysis (layer analysis)"]
        );
        assert_eq!(
            upward_imports("kernel", "use crate::{memory, report};"),
            ["1: an import of several modules at once; name one module a `use`"]
        );
    }
}
