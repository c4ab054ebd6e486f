//! perf c2c's view of a run: which lines bounced, and for each line which
//! buckets and fields live at the offsets that moved.

use crate::record::{BucketRef, LineRecord, OffsetRecord};

/// The buckets whose lock words lie on the line, in offset order. Two or
/// more mean the line is falsely shared between bucket locks.
pub fn lock_buckets(line: &LineRecord) -> Vec<BucketRef> {
    let mut buckets: Vec<BucketRef> = Vec::new();
    for bucket in line.offsets.iter().filter_map(|o| o.what.bucket_lock()) {
        if !buckets.contains(&bucket) {
            buckets.push(bucket);
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
    use crate::kernel::table::FieldName;
    use crate::record::{BucketTable, Occupant};

    fn bucket(index: u32) -> BucketRef {
        BucketRef {
            table: BucketTable::Global,
            index,
        }
    }

    fn field(index: u32, name: FieldName) -> Occupant {
        Occupant::Bucket {
            bucket: bucket(index),
            field: Some(name),
        }
    }

    fn offset(offset: u16, what: Occupant) -> OffsetRecord {
        OffsetRecord {
            offset,
            what,
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
    fn a_line_names_the_buckets_whose_locks_it_holds() {
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
                offset(0, field(3, FieldName::Chain)),
                offset(8, field(4, FieldName::Lock)),
                offset(40, Occupant::PrivateHashHeader),
                offset(48, field(5, FieldName::Lock)),
                offset(52, field(5, FieldName::Waiters)),
                offset(56, field(4, FieldName::Lock)),
            ],
        };
        assert_eq!(lock_buckets(&line), [bucket(4), bucket(5)]);
        assert_eq!(nodes(&line.offsets[0]), "0,1");
    }
}
