//! The vocabulary of an operation's script: what the kernel does, step by
//! step, in terms the engine can time. The kernel writes scripts (function);
//! the engine prices and orders them (timing).

use crate::coherence::AccessKind;
use crate::memory::{LineId, Mem};
use crate::symbol::Symbol;

/// A spinlock: a dense id for its logical state, and its lock word. The
/// word is kept as its two halves, not as a `Mem`, so that the id fills
/// what would be a `Mem`'s padding: a step naming a lock, the largest
/// kind, stays 24 bytes, and an op's script a quarter fewer host lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LockRef {
    pub id: u32,
    line: LineId,
    addr: u64,
}

impl LockRef {
    pub const fn new(id: u32, word: Mem) -> LockRef {
        LockRef {
            id,
            line: word.line,
            addr: word.addr,
        }
    }

    /// The lock word.
    #[inline]
    pub const fn word(self) -> Mem {
        Mem {
            addr: self.addr,
            line: self.line,
        }
    }
}

/// An access in program order: the byte, what is done to it and the
/// function that does it, the byte kept as a `Mem`'s two halves so that the
/// kind and the symbol fill what would be its padding (as `LockRef` keeps
/// its id): an access step stays 24 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    addr: u64,
    line: LineId,
    pub kind: AccessKind,
    pub by: Symbol,
}

impl Access {
    /// The byte accessed.
    #[inline]
    pub const fn mem(self) -> Mem {
        Mem {
            addr: self.addr,
            line: self.line,
        }
    }
}

/// A byte an access of a fixed kind touches (a load, a relaxed or acquire
/// RMW), and the function that touches it, in what would be a `Mem`'s
/// padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Touch {
    addr: u64,
    line: LineId,
    pub by: Symbol,
}

impl Touch {
    pub const fn new(mem: Mem, by: Symbol) -> Touch {
        Touch {
            addr: mem.addr,
            line: mem.line,
            by,
        }
    }

    /// The byte touched.
    #[inline]
    pub const fn mem(self) -> Mem {
        Mem {
            addr: self.addr,
            line: self.line,
        }
    }
}

/// A bucket's `waiters` field and the dense id of the bucket's lock, by
/// which the kernel's count of the tasks on their way in is kept; the
/// field kept as a `Mem`'s two halves, as `LockRef` keeps its word, so that
/// a step naming it stays 24 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitersWord {
    addr: u64,
    line: LineId,
    pub lock: u32,
}

impl WaitersWord {
    pub const fn new(lock: u32, waiters: Mem) -> WaitersWord {
        WaitersWord {
            addr: waiters.addr,
            line: waiters.line,
            lock,
        }
    }

    /// The `waiters` field.
    #[inline]
    pub const fn mem(self) -> Mem {
        Mem {
            addr: self.addr,
            line: self.line,
        }
    }
}

/// Work that touches no shared memory, priced by the machine profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cost {
    /// Half of a syscall's entry plus exit: charged once on the way in, once out.
    SyscallHalf,
    FutexKeyPrivate,
    FutexKeyShared,
    Jhash2,
    /// Going to sleep in schedule().
    Schedule,
    /// A fixed number of picoseconds (user-space work of a workload).
    Ps(u64),
}

/// A point where what happens next depends on state at that moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// futex_wait under the bucket lock: compare the user word, then queue or return EAGAIN.
    WaitCompare,
    /// futex_wake (3.14+): `waiters` was read; skip the lock if it is zero.
    WakeCheckWaiters,
    /// futex_wake under the bucket lock: walk the chain and unqueue matches.
    WakeWalk,
    /// futex_requeue under both bucket locks: compare the user word, then
    /// wake and move waiters.
    RequeueWalk,
    /// futex_lock_pi_atomic under the bucket lock: take a free lock, or queue
    /// behind its owner.
    LockPiAtomic,
    /// futex_unlock_pi under the bucket lock: release, or hand the lock to the
    /// top waiter.
    UnlockPiHandOver,
    /// A private-hash resize has published its new table (resize.rs): the
    /// process's ops no longer wait for its mutex.
    HashPublished(u32),
}

/// The tag is a whole word, so that no padding lies between it and the
/// payload: with a byte's tag, the compiler copied a step built on the
/// stack from its byte 1 on, a 16-byte load across the payload's own store
/// that the host cannot forward from its store buffer (in futex_q_unlock's
/// script alone, 1.4% of the 64-CPU benchmark's time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum Step {
    Compute(Cost),
    /// An access in program order that depends on what came before: it
    /// waits for the loads in flight (a locked RMW also for the store
    /// buffer to drain). A plain store retires into the store buffer.
    Access(Access),
    /// An atomic RMW that returns no value, so orders nothing
    /// (Documentation/atomic_t.txt: "RMW operations that do not return a
    /// value are unordered"): futex_hb_waiters_dec's atomic_dec. On x86 it
    /// is a locked instruction like any other and drains the store buffer,
    /// as `Access(_, Rmw)` does; on a weakly ordered core it waits neither
    /// for the stores nor for the loads before it.
    RelaxedRmw(Touch),
    /// An acquire RMW (lock_page's test_and_set_bit_lock): it orders what
    /// comes after it, not what came before. Timed as `RelaxedRmw`: the
    /// next step waits for it in either case.
    AcquireRmw(Touch),
    /// A load nothing waits for yet: it issues, up to the core's
    /// outstanding misses, and the script goes on. The next dependent
    /// access, `Join`, lock or the op's end waits for it.
    Load(Touch),
    /// Waits for the loads in flight: what follows needs their values.
    Join,
    /// futex_hb_waiters_inc before the bucket lock: a fully ordered RMW of
    /// `waiters`, timed as `Access(_, Rmw)`: futex_hb_waiters_inc's (the
    /// field and the lock's id fill the step, so the variant names the
    /// function). The bucket counts the task as
    /// a waiter from the moment the line serves it, when the line holds
    /// the new value, not from the op's start.
    WaitersInc(WaitersWord),
    /// futex_hb_waiters_pending's read of `waiters` (3.14+), futex_wake's,
    /// timed as `Access(_, Read)`: futex_wake decides whether to take the lock
    /// (`Decision::WakeCheckWaiters`) on the value the line holds when it
    /// serves the read, not on the value at the read's completion.
    WaitersRead(WaitersWord),
    /// The op's user-space atomic on a word whose value matters (the
    /// engine keeps which, so that a step stays 24 bytes). It acts on the
    /// word when the word's line serves it, not when it is issued: a load
    /// returns the value then, a locked RMW changes it then (after the
    /// store buffer drains), and a plain store's value is the word's once
    /// the store commits; until then only its own task sees it, forwarded
    /// from the store buffer.
    Atomic,
    Lock(LockRef),
    Unlock(LockRef),
    Decide(Decision),
    /// Sleep until another task's Wake.
    Block,
    /// Make a sleeping task runnable: try_to_wake_up, whose accesses the
    /// engine's scheduler writes in after this step.
    Wake(u32),
    /// ttwu_do_activate under the target runqueue's lock: the task is
    /// queued on its CPU, or runs at once on an idle one.
    Activate(u32),
    /// What the operation returns to its program: a syscall's return value.
    Returns(i64),
    /// The operation is complete: count it and its latency.
    OpDone,
}

impl Step {
    /// `Access`: `kind` of `mem` by the function `by`, in program order.
    #[inline]
    pub const fn access(mem: Mem, kind: AccessKind, by: Symbol) -> Step {
        Step::Access(Access {
            addr: mem.addr,
            line: mem.line,
            kind,
            by,
        })
    }

    /// `Load`: a load of `mem` by `by` that nothing waits for yet.
    #[inline]
    pub const fn load(mem: Mem, by: Symbol) -> Step {
        Step::Load(Touch::new(mem, by))
    }

    /// `RelaxedRmw` of `mem` by `by`.
    #[inline]
    pub const fn relaxed_rmw(mem: Mem, by: Symbol) -> Step {
        Step::RelaxedRmw(Touch::new(mem, by))
    }

    /// `AcquireRmw` of `mem` by `by`.
    #[inline]
    pub const fn acquire_rmw(mem: Mem, by: Symbol) -> Step {
        Step::AcquireRmw(Touch::new(mem, by))
    }
}

pub type Script = Vec<Step>;

// Every step an op's script holds is read again by the engine, a host line
// for every few: the build fails if a variant grows a step past 24 bytes.
const _: () = assert!(std::mem::size_of::<Step>() == 24);
