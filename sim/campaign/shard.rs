//! `--shard K/N`: a stable share of a campaign's runs. A run belongs to the
//! shard its id falls in, so adding points never moves the others.

use std::fmt;
use std::str::FromStr;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// 1-based, as Slurm array indices and GNU parallel's {#} are written.
    pub index: u64,
    pub count: u64,
}

impl Shard {
    pub const ALL: Shard = Shard { index: 1, count: 1 };

    /// Whether the run with this id (16 hex digits) is this shard's.
    pub fn holds(&self, id: &str) -> bool {
        let hash = u64::from_str_radix(id, 16).expect("run ids are 16 hex digits");
        hash % self.count == self.index - 1
    }
}

/// A `--shard` argument that is not K/N with 1 <= K <= N: what was written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{written}' is not a shard: write K/N with 1 <= K <= N, e.g. 2/8")]
pub struct ShardError {
    pub written: String,
}

impl FromStr for Shard {
    type Err = ShardError;

    fn from_str(text: &str) -> Result<Shard, ShardError> {
        let bad = || ShardError {
            written: text.to_string(),
        };
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let index: u64 = k.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_partition() {
        assert_eq!("2/8".parse(), Ok(Shard { index: 2, count: 8 }));
        for bad in ["0/2", "3/2", "2", "a/b", "1/0"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        let ids = ["00000000000000ff", "0123456789abcdef", "fedcba9876543210"];
        for id in ids {
            let owners = (1..=3)
                .filter(|&k| Shard { index: k, count: 3 }.holds(id))
                .count();
            assert_eq!(owners, 1, "{id} belongs to exactly one shard");
        }
    }
}
