//! A bucket's chain as lib/plist.c keeps it: the words plist_add, plist_del
//! and a walk of the chain read and write, in the kernel's order. Every
//! futex_q of a chain has the same priority (futex_queue takes
//! min(normal_prio, MAX_RT_PRIO), MAX_RT_PRIO for every task futexsim runs),
//! so the chain is FIFO and each path below is the one equal priorities take.
//!
//! Two forms of the head, told apart by the chain field's size:
//!
//! - 2.6.39 on ("plist: Shrink struct plist_head", 16 bytes):
//!   the head is one `node_list` (next at +0, prev at +8). plist_add reads
//!   `next` (plist_head_empty, plist_first), and on a queued chain the first
//!   futex_q (its prio and prio_list: a lone priority's prio_list is its own
//!   ring, so the loop ends at once); list_add_tail reads `prev`, writes
//!   `prev`, the new node, and the old tail's `next` (the head's own `next`
//!   on an empty chain). plist_del finds the node's prio_list empty (every
//!   node's is, one priority) and list_del_init writes the next node's
//!   `prev` (the head's when it was the last), the previous node's `next`
//!   (the head's when it was the first), and the node itself.
//! - 2.6.18 to 2.6.38 (32 bytes): the head has a `prio_list` (+0) before
//!   its `node_list` (+16), and the first node of the one priority is on
//!   it. plist_add walks the head's prio_list (reads +0, then the first
//!   futex_q), and an empty chain links the node into the head's prio_list
//!   (reads and writes +8, writes +0) before the node_list. plist_del of the
//!   first node moves the next one onto the prio_list (writes it and the
//!   head's prio_list words) before list_del_init.
//!
//! A futex_q's plist_node is in its first line (prio, prio_list, node_list),
//! so a neighbour's links are its futex_q's line.

use super::script::Step;
use crate::coherence::AccessKind;
use crate::memory::Mem;
use crate::symbol::Symbol;

/// The words of a bucket's `chain` (struct plist_head) a path touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct PlistHead {
    /// `prio_list` of a 2.6.18-2.6.38 head (next, then prev 8 bytes on).
    prio_list: Option<(Mem, Mem)>,
    /// `node_list.next`: the first futex_q.
    next: Mem,
    /// `node_list.prev`: the last futex_q.
    prev: Mem,
}

/// The chain field's size in 2.6.18-2.6.38, whose head had a prio_list.
pub(super) const TWO_LIST_HEAD_BYTES: u32 = 32;

impl PlistHead {
    /// The head whose field starts at `chain` and is `size` bytes long,
    /// `word(offset)` giving the byte `offset` bytes into it.
    pub(super) fn new(size: u32, word: impl Fn(u64) -> Mem) -> PlistHead {
        // A design may shrink the field below a list_head: its words then
        // share the field's first byte.
        let prev = if size >= 16 { 8 } else { 0 };
        if size >= TWO_LIST_HEAD_BYTES {
            PlistHead {
                prio_list: Some((word(0), word(8))),
                next: word(16),
                prev: word(24),
            }
        } else {
            PlistHead {
                prio_list: None,
                next: word(0),
                prev: word(prev),
            }
        }
    }

    /// The read a walk of the chain starts with (plist_for_each_entry:
    /// `head->node_list.next`; futex_top_waiter's and futex_wake's walks),
    /// made by the walker `by`.
    pub(super) fn walk_start(self, by: Symbol) -> Step {
        Step::access(self.next, AccessKind::Read, by)
    }

    /// plist_add of `node` at the tail of a chain whose first and last
    /// queued futex_qs are `ends` (None: the chain is empty). The node's own
    /// plist_node_init (__futex_queue) is the caller's: a requeue or a
    /// rehash links a node plist_del has just reset.
    pub(super) fn add(self, ends: Option<(Mem, Mem)>, node: Mem) -> impl Iterator<Item = Step> {
        let read = |m: Mem| Step::access(m, AccessKind::Read, Symbol::PlistAdd);
        let write = |m: Mem| Step::access(m, AccessKind::Write, Symbol::PlistAdd);
        let mut steps = Vec::with_capacity(10);
        match self.prio_list {
            // 2.6.18-2.6.38: list_for_each_entry over the head's prio_list.
            Some((prio_next, prio_prev)) => {
                steps.push(read(prio_next));
                match ends {
                    Some((first, _)) => steps.push(read(first)),
                    // lt_prio: list_add_tail of the node's prio_list to the head's.
                    None => steps.extend([
                        read(prio_prev),
                        write(prio_prev),
                        write(node),
                        write(prio_next),
                    ]),
                }
            }
            None => {
                steps.push(read(self.next));
                if let Some((first, _)) = ends {
                    steps.push(read(first));
                }
            }
        }
        // list_add_tail(&node->node_list, &head->node_list).
        let tail_next = ends.map_or(self.next, |(_, last)| last);
        steps.extend([
            read(self.prev),
            write(self.prev),
            write(node),
            write(tail_next),
        ]);
        steps.into_iter()
    }

    /// plist_del of `node`, whose neighbours on the chain are `prev` and
    /// `next` (None: the head).
    pub(super) fn del(
        self,
        prev: Option<Mem>,
        node: Mem,
        next: Option<Mem>,
    ) -> impl Iterator<Item = Step> {
        let write = |m: Mem| Step::access(m, AccessKind::Write, Symbol::PlistDel);
        let mut steps = vec![Step::access(node, AccessKind::Read, Symbol::PlistDel)];
        if let (Some((prio_next, prio_prev)), None) = (self.prio_list, prev) {
            // 2.6.18-2.6.38: the first node leaves the head's prio_list, the
            // next one (list_move_tail) taking its place.
            steps.extend(next.map(write));
            steps.extend([write(node), write(prio_next), write(prio_prev)]);
        }
        // list_del_init(&node->node_list).
        steps.extend([
            write(next.unwrap_or(self.prev)),
            write(prev.unwrap_or(self.next)),
            write(node),
        ]);
        steps.into_iter()
    }
}

/// The word `offset` bytes into a chain head of `size` bytes, for the era
/// tests' lists: the node_list's next and prev, a 2.6.29 head's prio_list
/// before them.
#[cfg(test)]
pub(super) fn word_name(size: u32, offset: u64) -> &'static str {
    match (size >= TWO_LIST_HEAD_BYTES, offset) {
        (true, 0) => ".prio_list.next",
        (true, 8) => ".prio_list.prev",
        (true, 16) | (false, 0) => ".next",
        (true, 24) | (false, 8) => ".prev",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mem(addr: u64) -> Mem {
        Mem {
            addr,
            line: (addr / 64) as u32,
        }
    }

    fn head(size: u32) -> PlistHead {
        PlistHead::new(size, |offset| mem(0x1000 + offset))
    }

    fn names(steps: impl Iterator<Item = Step>) -> Vec<String> {
        let name = |addr: u64| match addr {
            0x1000..=0x101f => format!("head+{}", addr - 0x1000),
            a => format!("q{}", (a - 0x2000) / 0x100),
        };
        steps
            .map(|s| match s {
                Step::Access(a) => format!("{:?} {}", a.kind, name(a.mem().addr)).to_lowercase(),
                other => format!("{other:?}"),
            })
            .collect()
    }

    fn q(n: u64) -> Mem {
        mem(0x2000 + n * 0x100)
    }

    /// 2.6.39's plist_add: the emptiness test and the first node are
    /// read before list_add_tail reads and writes the head's prev.
    #[test]
    fn add_reads_the_head_and_the_first_node_before_it_links() {
        let h = head(16);
        assert_eq!(
            names(h.add(None, q(0))),
            [
                "read head+0",
                "read head+8",
                "write head+8",
                "write q0",
                "write head+0"
            ]
        );
        assert_eq!(
            names(h.add(Some((q(0), q(2))), q(3))),
            [
                "read head+0",
                "read q0",
                "read head+8",
                "write head+8",
                "write q3",
                "write q2"
            ]
        );
    }

    /// plist_del writes both neighbours' links, the head standing in for a
    /// missing one, then the node itself.
    #[test]
    fn del_writes_the_neighbours_links() {
        let h = head(16);
        assert_eq!(
            names(h.del(Some(q(0)), q(1), Some(q(2)))),
            ["read q1", "write q2", "write q0", "write q1"]
        );
        assert_eq!(
            names(h.del(None, q(0), None)),
            ["read q0", "write head+8", "write head+0", "write q0"]
        );
    }

    /// A 2.6.29 head: the prio_list words before the node_list's.
    #[test]
    fn a_two_list_head_keeps_the_first_node_on_its_prio_list() {
        let h = head(32);
        assert_eq!(
            names(h.add(None, q(0))),
            [
                "read head+0",
                "read head+8",
                "write head+8",
                "write q0",
                "write head+0",
                "read head+24",
                "write head+24",
                "write q0",
                "write head+16"
            ]
        );
        assert_eq!(
            names(h.del(None, q(0), Some(q(1)))),
            [
                "read q0",
                "write q1",
                "write q0",
                "write head+0",
                "write head+8",
                "write q1",
                "write head+16",
                "write q0"
            ]
        );
        assert_eq!(
            h.walk_start(Symbol::FutexWake),
            Step::access(mem(0x1010), AccessKind::Read, Symbol::FutexWake)
        );
    }
}
