//! What the kernel does: futex keys, table designs, the memory accesses of
//! each futex operation per era, and the spinlock protocols. Function only;
//! timing lives in the engine. The futex files are named as the kernel's
//! (kernel/futex/): core.rs holds what every op shares, and syscalls.rs,
//! waitwake.rs, requeue.rs and pi.rs build on it alone. page_wait.rs is
//! the other hashed table of wait queues, the one lock_page sleeps on;
//! ttwu.rs is the scheduler's wake-up, whose CPU the engine chooses.
//! btf.rs reads a kernel's own bucket layout from its BTF, for `futexsim
//! design from-btf`; no run uses it.

pub mod btf;
pub mod core;
#[cfg(test)]
mod eras;
pub mod futex_hash;
pub mod key;
pub mod page_wait;
pub mod pi;
mod placement;
mod plist;
pub mod requeue;
pub mod resize;
pub mod script;
pub mod spinlock;
pub mod syscalls;
pub mod table;
#[cfg(test)]
mod testing;
pub mod ttwu;
pub mod waitwake;
