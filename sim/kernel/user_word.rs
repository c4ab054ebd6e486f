//! The user-space atomics programs run on futex words. Their values live
//! with the kernel's view of user memory, because futex_wait compares them
//! and a lock's owner is written into them.

/// One atomic on a futex word, as C11 or `__sync` builtins issue it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WordUpdate {
    /// A plain store.
    Store(u32),
    /// Compare-and-swap: becomes `new` only if it holds `old`.
    Cas { old: u32, new: u32 },
}

impl WordUpdate {
    /// The word's value after the atomic, from its value before.
    pub fn apply(self, current: u32) -> u32 {
        match self {
            WordUpdate::Store(v) => v,
            WordUpdate::Cas { old, new } if current == old => new,
            WordUpdate::Cas { .. } => current,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cas_changes_only_the_expected_value() {
        let cas = WordUpdate::Cas { old: 1, new: 2 };
        assert_eq!(cas.apply(1), 2);
        assert_eq!(cas.apply(3), 3);
        assert_eq!(WordUpdate::Store(7).apply(3), 7);
    }
}
