//! Memory a workload program names: kernel objects (a lock, a struct page,
//! a task list) each on its own lines with a home node, and a process's
//! user words. Every object gets a distinct address and its own region, so
//! a perf-c2c line table names it.

use crate::memory::{Arena, Home, MemoryMap, RegionId};
use crate::task::{LockRef, Mem};

/// Where workload kernel objects are allocated: the direct map, above the
/// physical range the mm_struct slabs are drawn from.
const KERNEL_OBJECTS: u64 = crate::address_map::WORKLOAD_OBJECTS.base;

/// Allocates kernel objects and hands out ids for the workload's locks.
pub struct Objects {
    arena: Arena,
    lock_names: Vec<String>,
}

/// One kernel object: a region and its base address.
#[derive(Clone, Copy, Debug)]
pub struct Object {
    pub region: RegionId,
    pub base: u64,
}

impl Object {
    /// The byte at `offset` into the object.
    pub fn at(&self, memory: &MemoryMap, offset: u64) -> Mem {
        let addr = self.base + offset;
        Mem {
            addr,
            line: memory.line_in(self.region, addr),
        }
    }
}

impl Default for Objects {
    fn default() -> Self {
        Objects {
            arena: Arena::new(KERNEL_OBJECTS),
            lock_names: Vec::new(),
        }
    }
}

impl Objects {
    /// A line-aligned kernel object of `bytes` on `home`.
    pub fn object(
        &mut self,
        memory: &mut MemoryMap,
        name: impl Into<String>,
        bytes: u64,
        home: Home,
    ) -> Object {
        let base = self.arena.alloc(bytes, memory.line_size(), 0);
        Object {
            region: memory.add(name, base, bytes, home),
            base,
        }
    }

    /// A spinlock with its word at offset 0 of its own object.
    pub fn lock(&mut self, memory: &mut MemoryMap, name: &str, home: Home) -> LockRef {
        let object = self.object(memory, name, 4, home);
        self.lock_at(name, object.at(memory, 0))
    }

    /// A spinlock whose word lives inside an object allocated elsewhere.
    pub fn lock_at(&mut self, name: &str, word: Mem) -> LockRef {
        self.lock_names.push(name.to_string());
        LockRef::new(self.lock_names.len() as u32 - 1, word)
    }

    /// The lock names, by id, for the run's record.
    pub fn into_lock_names(self) -> Vec<String> {
        self.lock_names
    }
}
