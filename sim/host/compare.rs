//! The model against this machine: the same benchmarks simulated on the
//! calibrated host profile and run natively, side by side.

use super::calibrate::{simulated_hash, simulated_ops_per_thread};
use super::native::{false_sharing, HashBench};
use crate::machine::MachineSpec;
use std::time::Duration;

pub struct Comparison {
    pub what: String,
    pub simulated: f64,
    pub native: f64,
}

/// perf bench futex hash with 1 and 2 threads, private and shared (the
/// averaged per-thread ops/s), and the false-sharing ratio: two threads
/// incrementing words in one line against two lines.
pub fn compare(spec: &MachineSpec, native_ms: u64) -> Result<Vec<Comparison>, String> {
    let mut out = Vec::new();
    for shared in [false, true] {
        for threads in [1, 2] {
            let native = HashBench {
                threads,
                futexes: 1024,
                shared,
                duration: Duration::from_millis(native_ms),
            }
            .run()
            .map_err(|e| e.to_string())?;
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

/// Per-thread atomic adds per second of two threads whose words lie
/// `stride` bytes apart.
fn simulated_adds(spec: &MachineSpec, stride: u64) -> Result<f64, String> {
    let machine = toml::to_string(spec).map_err(|e| e.to_string())?;
    let machine: String = machine
        .lines()
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        .replace("[topology]", "[machine.topology]")
        .replace("[latency]", "[machine.latency]")
        .replace("[coherence]", "[machine.coherence]")
        .replace("[kernel]", "[machine.kernel]");
    let text = format!(
        "[run]\nduration_us = 100\nwarmup_us = 20\n\n[workload]\nname = \"program\"\n\
         threads = 2\nwords = {{ w = \"{stride} * thread\" }}\n\
         steps = [{{ op = \"atomic\", word = \"w\", action = \"add\", value = 1 }}]\n\n\
         [[table]]\npreset = \"private-6.17\"\n\n[machine]\n{machine}"
    );
    simulated_ops_per_thread(&text)
}
