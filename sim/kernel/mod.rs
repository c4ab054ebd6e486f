//! What the kernel does: futex keys, table designs and the memory accesses
//! of each futex operation, per era. Function only; timing lives in the engine.

pub mod futex_hash;
pub mod key;
pub mod pi;
pub mod requeue;
pub mod script;
pub mod table;
#[cfg(test)]
mod testing;
pub mod waitwake;
