//! What the event queue holds, and who waits at a line, each as the one
//! integer its holder keeps: the event queue packs an event's id into its
//! key beside the time and sequence (queue.rs), and the directory names a
//! line's waiters by number (coherence). This file alone knows how each
//! space is split.
//!
//! Event ids, in increasing order: tasks, line turns, ticks, the end of a
//! unit of a window that may end early, the warm-up's end. A line's queue
//! exists only while a task (in one at most) or a store-buffer entry waits
//! in it, so tasks and queues both fit below the ticks (`Engine::new` checks a run's numbers against `MAX_LINE_QUEUES`).

use super::queue::MAX_TASKS;
use crate::limits::MAX_CPUS;

/// An event of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Event {
    /// The task's next step is due, or its wait has news.
    Task(u32),
    /// The server of a line's queue may be free: its first waiter's turn.
    LineTurn(u32),
    /// A CPU's scheduler tick.
    Tick(u32),
    /// The warm-up is over: counting starts afresh.
    WarmupDone,
    /// A unit of a window that may end early is over (task::batch_means).
    UnitEnd,
}

const WARMUP_DONE: u32 = MAX_TASKS as u32 - 1;
const UNIT_END: u32 = WARMUP_DONE - 1;
const TICKS: u32 = UNIT_END - MAX_CPUS as u32;
const LINE_TURNS: u32 = TICKS / 2;

/// The most tasks and line queues together a run may have: both must fit
/// below the line turns' ids.
pub(super) const MAX_LINE_QUEUES: u32 = LINE_TURNS;

impl Event {
    /// The event's id in the event queue.
    #[inline]
    pub(super) fn id(self) -> u32 {
        match self {
            Event::Task(task) => task,
            Event::LineTurn(queue) => LINE_TURNS + queue,
            Event::Tick(cpu) => TICKS + cpu,
            Event::WarmupDone => WARMUP_DONE,
            Event::UnitEnd => UNIT_END,
        }
    }

    /// The event an id the queue held names.
    #[inline]
    pub(super) fn of_id(id: u32) -> Event {
        if id < LINE_TURNS {
            Event::Task(id)
        } else if id < TICKS {
            Event::LineTurn(id - LINE_TURNS)
        } else if id < UNIT_END {
            Event::Tick(id - TICKS)
        } else if id == UNIT_END {
            Event::UnitEnd
        } else {
            Event::WarmupDone
        }
    }
}

/// Who waits at a line in the directory's queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Waiter {
    /// A task's request (its access, or a lock protocol's).
    Task(u32),
    /// The oldest store of a CPU's store buffer (memory_order.rs).
    StoreBuffer(u32),
}

/// The first store-buffer waiter's number: above every task's.
const STORE_BUFFERS: u32 = 1 << 31;

impl Waiter {
    /// The waiter's number in the directory.
    #[inline]
    pub(super) fn id(self) -> u32 {
        match self {
            Waiter::Task(task) => task,
            Waiter::StoreBuffer(cpu) => STORE_BUFFERS + cpu,
        }
    }

    /// The waiter the directory's number names.
    #[inline]
    pub(super) fn of_id(id: u32) -> Waiter {
        match id.checked_sub(STORE_BUFFERS) {
            Some(cpu) => Waiter::StoreBuffer(cpu),
            None => Waiter::Task(id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each kind's extremes, a run's largest numbers included.
    fn events() -> Vec<Event> {
        let most_cpus = MAX_CPUS as u32 - 1;
        vec![
            Event::Task(0),
            Event::Task(MAX_LINE_QUEUES - 1),
            Event::LineTurn(0),
            Event::LineTurn(TICKS - LINE_TURNS - 1),
            Event::Tick(0),
            Event::Tick(most_cpus),
            Event::UnitEnd,
            Event::WarmupDone,
        ]
    }

    #[test]
    fn every_event_is_named_back_from_its_id() {
        for event in events() {
            assert_eq!(Event::of_id(event.id()), event);
        }
    }

    #[test]
    fn ids_order_tasks_then_line_turns_then_ticks_then_a_unit_end_then_the_warmup_end() {
        let ids: Vec<u32> = events().into_iter().map(Event::id).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
        assert!(*ids.last().unwrap() < MAX_TASKS as u32);
    }

    #[test]
    fn a_store_buffer_waiter_is_never_taken_for_a_task() {
        for waiter in [
            Waiter::Task(0),
            Waiter::Task(MAX_TASKS as u32),
            Waiter::StoreBuffer(0),
            Waiter::StoreBuffer(MAX_CPUS as u32 - 1),
        ] {
            assert_eq!(Waiter::of_id(waiter.id()), waiter);
        }
    }
}
