//! Analyses that need no simulated time: how a table design spreads a
//! workload's futex keys over buckets and cache lines.

pub mod balls_into_bins;
pub mod layout;
pub mod population;
