//! results.json (the result set with its provenance) and speed.json (the
//! host-dependent speed log), pretty-printed. Floats print in their shortest
//! exact form, so reading and writing again gives the same bytes.

use super::{File, RESULTS_JSON, SPEED_JSON};
use crate::results::{ResultSet, SpeedLog};

pub fn files(set: &ResultSet, speed: &SpeedLog) -> std::io::Result<Vec<File>> {
    Ok(vec![
        File {
            path: RESULTS_JSON.into(),
            bytes: pretty(set)?,
        },
        File {
            path: SPEED_JSON.into(),
            bytes: pretty(speed)?,
        },
    ])
}

fn pretty(value: &impl serde::Serialize) -> std::io::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(value)?;
    bytes.push(b'\n');
    Ok(bytes)
}
