//! What a campaign publishes: its result set and speed log as JSON.

use crate::campaign::write_atomic;
use crate::results::{ResultSet, SpeedLog};
use serde::Serialize;
use std::path::Path;

pub fn write(dir: &Path, set: &ResultSet, speed: &SpeedLog) -> std::io::Result<()> {
    write_atomic(&dir.join("results.json"), &json(set))?;
    write_atomic(&dir.join("speed.json"), &json(speed))
}

fn json(value: &impl Serialize) -> Vec<u8> {
    (serde_json::to_string_pretty(value).expect("results serialize") + "\n").into_bytes()
}
