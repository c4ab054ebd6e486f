//! A profile's `[plausible]` table: for each parameter not measured on the
//! part, the range its value plausibly lies in and where that range comes
//! from. `futexsim run --sensitivity` re-runs a config over these ranges
//! (sim/sensitivity); nothing else reads them. A parameter is named by its
//! path in the profile, as a config's `machine.` paths name it without the
//! `machine.`:
//!
//! ```toml
//! [plausible]
//! "coherence.read_occupancy" = { low = 1.2, high = 60.1, source = "..." }
//! ```

use super::{Machine, MachineSpec};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use toml::{Table, Value};

/// One parameter's range and its source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlausibleRange {
    pub low: f64,
    pub high: f64,
    /// Where the range comes from, or how it was chosen where no source gives one.
    pub source: String,
}

/// The ranges, by parameter path, in the order of their paths.
pub type Plausible = BTreeMap<String, PlausibleRange>;

/// The kernel costs a profile may leave out, each then derived from the
/// profile's clock and mitigations (`KernelCosts::ns`): a range on one is a
/// range on what the machine resolves it to.
const DERIVED_COSTS: [&str; 4] = [
    "kernel.syscall",
    "kernel.futex_key_private",
    "kernel.futex_key_shared",
    "kernel.jhash2",
];

/// The occupancies a profile may leave out, each then the transfer's own
/// latency at its level: a range on one is checked against the farthest such
/// transfer and written as a number at its ends.
const OCCUPANCIES: [&str; 3] = [
    "coherence.transfer_occupancy",
    "coherence.llc_transfer_occupancy",
    "coherence.remote_transfer_occupancy",
];

/// Why a range cannot be used: the parameter, the key of its entry the
/// error is about (`low`, `high`, `source`; None: the entry), and why.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("plausible.\"{parameter}\": {message}")]
pub struct PlausibleError {
    pub parameter: String,
    pub key: Option<&'static str>,
    pub message: String,
}

/// The value `spec` gives the parameter at `path`: a number the profile
/// writes or defaults, or one of the kernel costs it derives.
pub fn nominal(spec: &MachineSpec, path: &str) -> Result<f64, String> {
    let ns = spec.kernel.ns();
    match path {
        "kernel.syscall" => return Ok(ns.syscall),
        "kernel.futex_key_private" => return Ok(ns.futex_key_private),
        "kernel.futex_key_shared" => return Ok(ns.futex_key_shared),
        "kernel.jhash2" => return Ok(ns.jhash2),
        _ => {}
    }
    match lookup(&as_table(spec)?, path) {
        Some(Value::Float(x)) => Ok(*x),
        Some(Value::Integer(i)) => Ok(*i as f64),
        None if OCCUPANCIES.contains(&path) => Ok(absent_occupancy(spec, path)),
        _ => Err(format!(
            "names no number of the profile: expected the path of a number it writes or its \
             section defaults, such as \"latency.rmw\" or \"scheduler.ipi_send\" (an \
             optional field left out, such as coherence.snoop_delay, must be written to take a \
             range), or one of {}, derived when left out, or {}, the transfer's own latency when \
             left out",
            DERIVED_COSTS.join(", "),
            OCCUPANCIES.join(", ")
        )),
    }
}

/// What an occupancy the profile leaves out stands for: the transfer's own
/// latency at its level, the farthest one there (within a node, `latency.node`;
/// between nodes, the farthest `latency.remote`); inside an LLC domain, what
/// the node's occupancy is.
fn absent_occupancy(spec: &MachineSpec, path: &str) -> f64 {
    let c = &spec.coherence;
    let within_node = c.transfer_occupancy.unwrap_or(spec.latency.node);
    match path {
        "coherence.llc_transfer_occupancy" => c.llc_transfer_occupancy.unwrap_or(within_node),
        "coherence.remote_transfer_occupancy" => spec.latency.remote.farthest(),
        _ => within_node,
    }
}

/// Whether the parameter at `path` is a whole number (`coherence.local_batch`).
pub fn is_whole(spec: &MachineSpec, path: &str) -> bool {
    as_table(spec).is_ok_and(|t| matches!(lookup(&t, path), Some(Value::Integer(_))))
}

/// `spec` with the parameter at `path` set to `value`: rounded to a whole
/// number where the profile's value is one (`coherence.local_batch`).
pub fn with_value(spec: &MachineSpec, path: &str, value: f64) -> Result<MachineSpec, String> {
    let mut table = as_table(spec)?;
    let segments: Vec<&str> = path.split('.').collect();
    let (last, parents) = segments
        .split_last()
        .ok_or_else(|| "is an empty path".to_string())?;
    let mut at = &mut table;
    for seg in parents {
        at = match at
            .entry(seg.to_string())
            .or_insert_with(|| Value::Table(Table::new()))
        {
            Value::Table(t) => t,
            _ => return Err(format!("'{seg}' is not a table of the profile")),
        };
    }
    let written = match at.get(*last) {
        Some(Value::Integer(_)) => Value::Integer(value.round() as i64),
        Some(Value::Float(_)) => Value::Float(value),
        None if DERIVED_COSTS.contains(&path) || OCCUPANCIES.contains(&path) => Value::Float(value),
        _ => return Err(format!("'{path}' names no number of the profile")),
    };
    at.insert(last.to_string(), written);
    let mut changed = MachineSpec::deserialize(Value::Table(table)).map_err(|e| e.to_string())?;
    changed.plausible = spec.plausible.clone();
    Ok(changed)
}

/// Every range of `spec`: finite, low at most high, sourced, naming a
/// number of the profile, holding the profile's own value, and giving a
/// machine futexsim can build at either end.
pub fn check(spec: &MachineSpec) -> Result<(), PlausibleError> {
    for (parameter, range) in &spec.plausible {
        let error = |key, message: String| PlausibleError {
            parameter: parameter.clone(),
            key,
            message,
        };
        for (key, bound) in [("low", range.low), ("high", range.high)] {
            if !bound.is_finite() {
                return Err(error(Some(key), format!("{key} = {bound} is not a number")));
            }
        }
        if range.low > range.high {
            return Err(error(
                Some("high"),
                format!(
                    "high = {} is below low = {}: write the range low to high",
                    range.high, range.low
                ),
            ));
        }
        if range.source.trim().is_empty() {
            return Err(error(
                Some("source"),
                "has no source: say where the range comes from, or how it was chosen".into(),
            ));
        }
        let value = nominal(spec, parameter).map_err(|e| error(None, e))?;
        if !(range.low..=range.high).contains(&value) {
            let key = if value < range.low { "low" } else { "high" };
            return Err(error(
                Some(key),
                format!(
                    "the range {} to {} does not hold the profile's own value, {value}",
                    range.low, range.high
                ),
            ));
        }
        for (key, bound) in [("low", range.low), ("high", range.high)] {
            with_value(spec, parameter, bound)
                .and_then(|m| Machine::new(m).map_err(|e| e.message))
                .map_err(|e| error(Some(key), format!("{key} = {bound} gives no machine: {e}")))?;
        }
    }
    Ok(())
}

fn as_table(spec: &MachineSpec) -> Result<Table, String> {
    match Value::try_from(spec) {
        Ok(Value::Table(t)) => Ok(t),
        _ => Err("the profile does not serialize to a table".into()),
    }
}

fn lookup<'a>(table: &'a Table, path: &str) -> Option<&'a Value> {
    let mut segments = path.split('.');
    let mut value = table.get(segments.next()?)?;
    for seg in segments {
        value = value.as_table()?.get(seg)?;
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::presets;

    fn with_range(path: &str, low: f64, high: f64) -> MachineSpec {
        let mut spec = presets::preset("uv-512").unwrap();
        spec.plausible = Plausible::from([(
            path.to_string(),
            PlausibleRange {
                low,
                high,
                source: "a test".into(),
            },
        )]);
        spec
    }

    #[test]
    fn every_shipped_profile_has_ranges_that_hold_its_values() {
        for name in presets::names() {
            let spec = presets::preset(name).unwrap();
            assert!(!spec.plausible.is_empty(), "{name} has no [plausible]");
            check(&spec).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }

    #[test]
    fn a_range_that_excludes_the_profile_value_is_refused_at_the_bound_it_misses() {
        let e = check(&with_range("coherence.read_occupancy", 0.25, 0.75)).unwrap_err();
        assert_eq!(e.key, Some("high"), "{e}");
        assert!(e.message.contains("own value, 1.5"), "{e}");
        let e = check(&with_range("latency.rmw", 8.0, 9.0)).unwrap_err();
        assert_eq!(e.key, Some("low"), "{e}");
    }

    #[test]
    fn a_path_that_names_no_number_is_refused_and_a_derived_cost_is_taken() {
        let e = check(&with_range("latency.remote", 0.0, 1.0)).unwrap_err();
        assert_eq!(e.key, None);
        assert!(e.message.contains("names no number"), "{e}");
        assert!(check(&with_range("kernel.syscall", 60.0, 130.0)).is_ok());
    }

    #[test]
    fn an_absent_occupancy_stands_for_its_farthest_hop_and_is_written_at_either_end() {
        let spec = presets::preset("uv-512").unwrap();
        assert_eq!(spec.coherence.remote_transfer_occupancy, None);
        let farthest = spec.latency.remote.farthest();
        assert_eq!(
            nominal(&spec, "coherence.remote_transfer_occupancy"),
            Ok(farthest)
        );
        let e = check(&with_range(
            "coherence.remote_transfer_occupancy",
            18.1,
            farthest - 1.0,
        ))
        .unwrap_err();
        assert_eq!(e.key, Some("high"), "{e}");
        let set = with_value(&spec, "coherence.remote_transfer_occupancy", 40.0).unwrap();
        assert_eq!(set.coherence.remote_transfer_occupancy, Some(40.0));
        assert_eq!(
            set.coherence.transfer_occupancy,
            spec.coherence.transfer_occupancy
        );
    }

    #[test]
    fn setting_a_value_changes_that_parameter_alone_and_rounds_a_whole_number() {
        let spec = presets::preset("uv-512").unwrap();
        let set = with_value(&spec, "coherence.local_batch", 2.4).unwrap();
        assert_eq!(set.coherence.local_batch, Some(2));
        assert_eq!(set.latency, spec.latency);
        let set = with_value(&spec, "kernel.syscall", 120.0).unwrap();
        assert_eq!(set.kernel.ns().syscall, 120.0);
        let same = with_value(
            &spec,
            "kernel.syscall",
            nominal(&spec, "kernel.syscall").unwrap(),
        );
        assert_eq!(same.unwrap().kernel.ns(), spec.kernel.ns());
    }
}
