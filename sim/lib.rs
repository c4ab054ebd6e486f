//! futexsim: a discrete-event simulator of hashed lock tables (the Linux futex
//! hash first) and the cache-line false sharing between their buckets.
//!
//! Data flows one way: config -> scenario -> engine -> records -> report.

pub mod address_map;
pub mod advise;
pub mod analysis;
pub mod campaign;
pub mod coherence;
pub mod config;
pub mod dir_lock;
pub mod echo;
pub mod engine;
pub mod expr;
pub mod files;
pub mod footprint;
pub mod hash;
pub mod host;
pub mod huge_pages;
pub mod kernel;
#[cfg(test)]
mod layers;
pub mod limits;
pub mod machine;
pub mod memory;
pub mod perf_stat;
pub mod prefetch;
pub mod progress;
pub mod record;
pub mod report;
pub mod results;
pub mod scenario;
pub mod sensitivity;
pub mod symbol;
pub mod task;
pub mod validate;
pub mod workload;
