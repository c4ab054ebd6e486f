//! Workloads: what the benchmarks put in memory and, later, the task
//! programs they run.

pub mod user_memory;
