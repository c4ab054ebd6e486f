//! The model against this machine: the same benchmarks simulated on the
//! calibrated host profile and run natively, side by side.

use super::calibrate::{run_of, simulated_hash, simulated_on, this_kernels_table, ModelError};
use super::native::{false_sharing, HashBench, NativeError};
use crate::machine::MachineSpec;
use std::time::Duration;
use toml::{Table, Value};

pub struct Comparison {
    pub what: String,
    pub simulated: f64,
    pub native: f64,
}

/// perf bench futex hash with 1 and 2 threads, private and shared (the
/// averaged per-thread ops/s), and the false-sharing ratio: two threads
/// incrementing words in one line against two lines.
pub fn compare(spec: &MachineSpec, native_ms: u64) -> Result<Vec<Comparison>, CompareError> {
    let mut out = Vec::new();
    for shared in [false, true] {
        for threads in [1, 2] {
            let native = HashBench {
                threads,
                futexes: 1024,
                shared,
                duration: Duration::from_millis(native_ms),
            }
            .run()?;
            out.push(Comparison {
                what: format!(
                    "perf hash -t {threads}{}, averaged ops/s",
                    if shared { " -S" } else { "" }
                ),
                simulated: simulated_hash(spec, threads, shared, 300)?,
                native: native.mean(),
            });
        }
    }
    let native_ratio = false_sharing(true, Duration::from_millis(native_ms))
        / false_sharing(false, Duration::from_millis(native_ms));
    out.push(Comparison {
        what: "2 threads adding to words in one line / in two lines".into(),
        simulated: simulated_adds(spec, 4)? / simulated_adds(spec, 128)?,
        native: native_ratio,
    });
    Ok(out)
}

/// Why a comparison has no figure: the native bench failed, or the model.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error(transparent)]
    Native(#[from] NativeError),
    #[error(transparent)]
    Model(#[from] ModelError),
}

/// Per-thread atomic adds per second of two threads whose words lie
/// `stride` bytes apart.
fn simulated_adds(spec: &MachineSpec, stride: u64) -> Result<f64, ModelError> {
    let add = Table::from_iter([
        ("op".to_string(), Value::from("atomic")),
        ("word".to_string(), Value::from("w")),
        ("action".to_string(), Value::from("add")),
        ("value".to_string(), Value::from(1)),
    ]);
    simulated_on(
        spec,
        run_of(100, 20),
        Table::from_iter([
            ("name".to_string(), Value::from("program")),
            ("threads".to_string(), Value::from(2)),
            (
                "words".to_string(),
                Value::Table(Table::from_iter([(
                    "w".to_string(),
                    Value::from(format!("{stride} * thread")),
                )])),
            ),
            ("steps".to_string(), Value::Array(vec![Value::Table(add)])),
        ]),
        this_kernels_table(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::presets;

    /// The profile reaches the config whole, whatever sections it has: a
    /// profile nested by renaming four section headers sent its
    /// `[scheduler]` to the config's top level, and every comparison of
    /// `validate --host` failed on it.
    #[test]
    fn the_false_sharing_comparison_simulates_on_every_shipped_profile() {
        for name in presets::names() {
            let spec = presets::preset(name).expect("a shipped preset");
            let adds = simulated_adds(&spec, 4).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(adds.is_finite() && adds > 0.0, "{name}: {adds}");
        }
    }
}
