//! A time_exit child (the table in mod.rs): the fault on the shared page,
//! ready, the spin until the release, and the exit path step by step as
//! v3.8's do_exit runs it.

use super::actions::{Action, Actions, Stage};
use super::{
    Context, PageField, Shared, COW_COPY_NS, EXIT_OTHER_PRIVATE_NS, EXIT_ZOMBIE, FAULT_PRIVATE_NS,
    FREE_PT_PAGE_NS, NOTIFY_NS, TEXT_VMAS, UNMAP_VMA_NS, UPPER_PT_PAGES, VMA_UNLINK_NS, ZAP_PTE_NS,
};
use crate::task::{AccessKind, AtomicOp, Done, Op, Program, Until};
use crate::workload::primitives::rwlock::Side;
use std::sync::Arc;

/// A child: its first touch of the shared page, ready, the spin until
/// the release, then its whole exit path, queued when it is forked.
pub(super) struct Child {
    actions: Actions,
}

impl Child {
    pub(super) fn new(s: &Shared, child: usize, schedule_ps: u64, context: Arc<Context>) -> Child {
        Child {
            actions: exit_path(s, child, schedule_ps, context),
        }
    }
}

impl Program for Child {
    fn next_op(&mut self) -> Op {
        self.actions.next().unwrap_or(Op::Exit)
    }

    fn op_returned(&mut self, done: Done) {
        self.actions.returned(done);
    }

    fn in_kernel(&self) -> bool {
        self.actions.in_kernel()
    }

    fn held_bytes(&self) -> u64 {
        self.actions.held_bytes()
    }
}

/// Child `child`'s actions, from its first touch of the shared page to
/// its last schedule: the fault, the release, and do_exit.
fn exit_path(s: &Shared, child: usize, schedule_ps: u64, context: Arc<Context>) -> Actions {
    let ns = |n: u64| Op::Compute(n * 1000);
    let parent_pages = Arc::clone(&context);
    let anon = &parent_pages.anon;
    let mut a = Actions::new(context);
    // The first touch of the shared page faults: fork copied no pte of a
    // shared mapping. shmem_fault finds the page and returns it locked;
    // __do_fault maps it and unlocks it.
    a.push(
        Stage::Fault,
        [
            Op::Access(s.page_tree, AccessKind::Read),
            Op::Atomic(s.page_count, AtomicOp::Add(1)),
        ],
    );
    a.push_action(Stage::Fault, Action::LockPage(s.page_lock));
    a.push(
        Stage::Fault,
        [Op::Atomic(s.mapcount, AtomicOp::Add(1)), ns(FAULT_PRIVATE_NS)],
    );
    a.push_action(Stage::Fault, Action::UnlockPage(s.page_lock));
    a.push(
        Stage::BeforeRelease,
        [
            Op::Atomic(s.ready, AtomicOp::Add(1)),
            Op::SpinUntil(s.quit, Until::NotEquals(0)),
        ],
    );
    // exit(): the first write to each of these pages since fork is a
    // copy-on-write fault; do_wp_page locks the old page to see whether it
    // may reuse it (it may not: every sibling maps it), copies it, and
    // drops the child's mapping and reference of it.
    let (written, end) = (s.exit_cow_faults, anon.len() as u32);
    let shared = |field| Action::PageDrops {
        field,
        at: written,
        end,
    };
    for page in &anon[..written as usize] {
        a.push_action(Stage::ExitFaults, Action::LockPage(page.lock));
        a.push(
            Stage::ExitFaults,
            [Op::Access(page.mapcount.mem, AccessKind::Read)],
        );
        a.push_action(Stage::ExitFaults, Action::UnlockPage(page.lock));
        a.push(
            Stage::ExitFaults,
            [
                ns(COW_COPY_NS),
                Op::Atomic(page.mapcount, AtomicOp::Sub(1)),
                Op::Atomic(page.count, AtomicOp::Sub(1)),
            ],
        );
    }
    // exit_mm -> exit_mmap -> unmap_vmas: zap the shared page, then each
    // pte: a page still shared with the parent loses this mapping
    // (page_remove_rmap); one the child copied is its own.
    let vmas = s.anon_vma_roots.len() as u32 + 1 + TEXT_VMAS;
    a.push(
        Stage::ExitMm,
        [
            Op::Access(s.page_flags, AccessKind::Rmw),
            Op::Access(s.page_flags, AccessKind::Read),
            Op::Atomic(s.mapcount, AtomicOp::Sub(1)),
            ns(u64::from(vmas) * UNMAP_VMA_NS),
        ],
    );
    if written < end {
        a.push_action(Stage::ExitMm, shared(PageField::MapCount));
    }
    a.push(Stage::ExitMm, [ns(u64::from(end) * ZAP_PTE_NS)]);
    // free_pgtables: each vma's anon_vmas, then the file vma from i_mmap.
    for &(lock, root) in &s.anon_vma_roots {
        a.push(
            Stage::FreePgtables,
            [
                Op::SpinLock(lock),
                Op::Access(root, AccessKind::Write),
                ns(VMA_UNLINK_NS),
                Op::SpinUnlock(lock),
            ],
        );
    }
    a.push(
        Stage::FreePgtables,
        [
            Op::SpinLock(s.i_mmap_mutex),
            Op::Access(s.i_mmap, AccessKind::Write),
            ns(VMA_UNLINK_NS),
            Op::SpinUnlock(s.i_mmap_mutex),
        ],
    );
    // free_pgd_range frees a PTE page per vma and the pages above them;
    // tlb_finish_mmu -> free_pages_and_swap_cache -> release_pages drops
    // the gathered pages' references: the shared pages' `_count`.
    let pt_pages = s.anon_vma_roots.len() as u64 + 1 + u64::from(UPPER_PT_PAGES);
    a.push(Stage::FreePgtables, [ns(pt_pages * FREE_PT_PAGE_NS)]);
    if written < end {
        a.push_action(Stage::FreePgtables, shared(PageField::Count));
    }
    a.push(
        Stage::RemoveVma,
        [Op::Atomic(s.shm_file, AtomicOp::Sub(1))],
    );
    a.push(
        Stage::ExitFiles,
        s.std_files.iter().map(|&f| Op::Atomic(f, AtomicOp::Sub(1))),
    );
    for &(d_lock, d_count) in &s.dentries {
        a.push(
            Stage::ExitFs,
            [
                Op::SpinLock(d_lock),
                Op::Access(d_count, AccessKind::Write),
                Op::SpinUnlock(d_lock),
            ],
        );
    }
    a.push(Stage::ExitFs, [ns(EXIT_OTHER_PRIVATE_NS)]);
    a.push_action(Stage::ExitNotify, Action::RwLock(s.tasklist_lock, Side::Write));
    a.push(
        Stage::ExitNotify,
        [
            Op::SpinLock(s.siglock),
            ns(NOTIFY_NS),
            Op::SpinLock(s.wait_chldexit_lock),
            Op::Atomic(s.notified, AtomicOp::Add(1)),
            Op::WakeUp(s.notified.mem),
            Op::SpinUnlock(s.wait_chldexit_lock),
            Op::SpinUnlock(s.siglock),
            Op::Atomic(s.exit_state[child], AtomicOp::Store(EXIT_ZOMBIE)),
        ],
    );
    a.push_action(
        Stage::ExitNotify,
        Action::RwUnlock(s.tasklist_lock, Side::Write),
    );
    a.push(Stage::Schedule, [Op::Compute(schedule_ps)]);
    // Tens of thousands of children each hold their queue from the start:
    // without the room its growth left, it is half the size.
    a.queue.shrink_to_fit();
    a
}

