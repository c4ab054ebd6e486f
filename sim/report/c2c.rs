//! perf c2c's view of a run: which lines bounced, and for each line which
//! buckets and fields live at the offsets that moved.

use crate::record::{LineRecord, OffsetRecord};

/// Splits an offset's name, "bucket 53 lock" or "process 0 bucket 7 chain",
/// into the bucket and the field; None for bytes outside a bucket (a
/// private hash header, user memory).
pub fn bucket_field(what: &str) -> Option<(&str, &str)> {
    let (bucket, field) = what.rsplit_once(' ')?;
    bucket.contains("bucket ").then_some((bucket, field))
}

/// The buckets whose lock words lie on the line, in offset order. Two or
/// more mean the line is falsely shared between bucket locks.
pub fn lock_buckets(line: &LineRecord) -> Vec<&str> {
    let mut buckets: Vec<&str> = Vec::new();
    for o in &line.offsets {
        if let Some((bucket, "lock")) = bucket_field(&o.what) {
            if !buckets.contains(&bucket) {
                buckets.push(bucket);
            }
        }
    }
    buckets
}

/// A share of a total, in percent; 0 of 0 is 0.
pub fn percent(part: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        100.0 * part as f64 / total as f64
    }
}

/// perf c2c's Node column in its first form: "0,1".
pub fn nodes(o: &OffsetRecord) -> String {
    o.nodes
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offset(offset: u16, what: &str) -> OffsetRecord {
        OffsetRecord {
            offset,
            what: what.into(),
            lcl_hitm: 1,
            rmt_hitm: 0,
            loads: 1,
            stores: 0,
            store_l1_hit: 0,
            store_l1_miss: 0,
            mean_hitm_ns: 0.0,
            cpu_count: 1,
            nodes: vec![0, 1],
        }
    }

    #[test]
    fn offsets_name_their_buckets() {
        assert_eq!(bucket_field("bucket 53 lock"), Some(("bucket 53", "lock")));
        assert_eq!(
            bucket_field("process 0 bucket 7 chain"),
            Some(("process 0 bucket 7", "chain"))
        );
        assert_eq!(bucket_field("private hash header"), None);
        assert_eq!(bucket_field("perf bench futex arrays"), None);
        let line = LineRecord {
            address: 0x1000,
            region: "futex_queues".into(),
            lcl_hitm: 0,
            rmt_hitm: 0,
            lcl_hit: 0,
            rmt_hit: 0,
            dram_lcl: 0,
            dram_rmt: 0,
            loads: 0,
            stores: 0,
            offsets: vec![
                offset(0, "bucket 3 chain"),
                offset(8, "bucket 4 lock"),
                offset(48, "bucket 5 lock"),
                offset(52, "bucket 5 waiters"),
            ],
        };
        assert_eq!(lock_buckets(&line), ["bucket 4", "bucket 5"]);
        assert_eq!(nodes(&line.offsets[0]), "0,1");
    }
}
