//! Analyses that need no simulated time: how a table design spreads a
//! workload's futex keys over buckets and cache lines, and the closed-form
//! models the simulator is validated against.

pub mod balls_into_bins;
pub mod layout;
pub mod population;
pub mod ticket_lock;
