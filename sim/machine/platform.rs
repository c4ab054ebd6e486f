//! The part of a machine that the kernel's futex tables are sized and laid
//! out from: CPUs online and possible, memory nodes, the coherence line.
//! A resolved `Machine` gives its own; the layout and hash tools, which
//! price nothing, describe a machine by these figures alone.

use crate::limits::{MAX_CPUS, MAX_NODES, MAX_PAGE, MIN_PAGE};
use crate::memory::PAGE_SHIFT;
use serde::Serialize;

/// Tables are allocated at least a page apart, so no line up to a page
/// holds bytes of two of them.
const MAX_LINE: u64 = 1 << PAGE_SHIFT;

/// The machine facts the tables are sized and laid out from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Platform {
    pub cpus: u64,
    /// num_possible_cpus(): at least `cpus`.
    pub possible_cpus: u64,
    pub nodes: u32,
    /// Coherence line size in bytes.
    pub line_size: u64,
    /// The kernel's base page in bytes, which the futex key splits addresses by.
    pub page_size: u64,
}

/// A figure of a platform out of the range the tables can be built for.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlatformError {
    #[error("cpus = {0}: must be from 1 to {MAX_CPUS}")]
    Cpus(u64),
    #[error("possible_cpus = {possible_cpus}: must be from cpus ({cpus}) to {MAX_CPUS}")]
    PossibleCpus { possible_cpus: u64, cpus: u64 },
    #[error("nodes = {0}: must be from 1 to {MAX_NODES}")]
    Nodes(u32),
    #[error("line size {0}: must be a power of two from 8 to {MAX_LINE}")]
    LineSize(u64),
    #[error("page size {0}: must be a power of two from {MIN_PAGE} to {MAX_PAGE}")]
    PageSize(u64),
}

impl Platform {
    pub fn validate(&self) -> Result<(), PlatformError> {
        if !(1..=MAX_CPUS).contains(&self.cpus) {
            return Err(PlatformError::Cpus(self.cpus));
        }
        if !(self.cpus..=MAX_CPUS).contains(&self.possible_cpus) {
            return Err(PlatformError::PossibleCpus {
                possible_cpus: self.possible_cpus,
                cpus: self.cpus,
            });
        }
        if !(1..=MAX_NODES).contains(&self.nodes) {
            return Err(PlatformError::Nodes(self.nodes));
        }
        if !self.line_size.is_power_of_two() || !(8..=MAX_LINE).contains(&self.line_size) {
            return Err(PlatformError::LineSize(self.line_size));
        }
        if !self.page_size.is_power_of_two() || !(MIN_PAGE..=MAX_PAGE).contains(&self.page_size) {
            return Err(PlatformError::PageSize(self.page_size));
        }
        Ok(())
    }
}

#[cfg(test)]
impl Platform {
    /// A machine of `cpus` CPUs on `nodes` nodes, 64-byte lines and 4 KiB
    /// pages, for the tests of what reads a platform.
    pub(crate) fn uniform(cpus: u64, nodes: u32) -> Platform {
        Platform {
            cpus,
            possible_cpus: cpus,
            nodes,
            line_size: 64,
            page_size: MIN_PAGE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_figure_out_of_range_is_named() {
        assert_eq!(Platform::uniform(8, 2).validate(), Ok(()));
        assert_eq!(
            Platform::uniform(0, 1).validate(),
            Err(PlatformError::Cpus(0))
        );
        assert_eq!(
            Platform::uniform(MAX_CPUS + 1, 1).validate(),
            Err(PlatformError::Cpus(MAX_CPUS + 1))
        );
        let fewer_possible = Platform {
            possible_cpus: 4,
            ..Platform::uniform(8, 1)
        };
        assert_eq!(
            fewer_possible.validate(),
            Err(PlatformError::PossibleCpus {
                possible_cpus: 4,
                cpus: 8
            })
        );
        assert_eq!(
            Platform::uniform(8, 0).validate(),
            Err(PlatformError::Nodes(0))
        );
        for line_size in [4, 96, 2 * MAX_LINE] {
            let p = Platform {
                line_size,
                ..Platform::uniform(8, 1)
            };
            assert_eq!(p.validate(), Err(PlatformError::LineSize(line_size)));
        }
        for page_size in [2048, 12288, 2 * MAX_PAGE] {
            let p = Platform {
                page_size,
                ..Platform::uniform(8, 1)
            };
            assert_eq!(p.validate(), Err(PlatformError::PageSize(page_size)));
        }
        assert_eq!(
            PlatformError::LineSize(96).to_string(),
            "line size 96: must be a power of two from 8 to 4096"
        );
    }
}
