//! Cost of `jhash2` over a 4-word futex key, the simulator's per-operation hash.
//!
//! Each group times 1024 hashes per iteration (so ns/hash = time / 1024, or 1e3 / Melem/s):
//! - `independent_keys`: 1024 precomputed keys hashed back to back, which measures throughput
//!   since no hash waits for another;
//! - `dependent_chain`: each hash is xored into the next key's first word, which measures
//!   latency.
//!
//! `benches/c/run.sh` times the same two loops, on the same keys, in C built with gcc -O2.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use futexsim::hash::{lookup2, lookup3};
use std::hint::black_box;

const NKEYS: usize = 1024;
/// A page offset, the initval the futex code passes.
const INITVAL: u32 = 0xabc;

/// The C reference's keys: xorshift64 from the same seed, low 32 bits, row by row.
fn keys() -> Vec<[u32; 4]> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x as u32
    };
    (0..NKEYS)
        .map(|_| [next(), next(), next(), next()])
        .collect()
}

fn bench_jhash2(c: &mut Criterion, group: &str, jhash2: impl Fn(&[u32], u32) -> u32) {
    let keys = keys();
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(NKEYS as u64));

    g.bench_function("independent_keys", |b| {
        b.iter(|| {
            // Opaque keys and initval: nothing may be folded or hoisted out of the loop.
            let (keys, iv) = (black_box(&keys), black_box(INITVAL));
            keys.iter().fold(0, |acc, k| acc ^ jhash2(k, iv))
        })
    });

    let mut h = 0;
    g.bench_function("dependent_chain", |b| {
        b.iter(|| {
            let (keys, iv) = (black_box(&keys), black_box(INITVAL));
            for k in keys {
                h = jhash2(&[k[0] ^ h, k[1], k[2], k[3]], iv);
            }
            h
        })
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    bench_jhash2(c, "lookup3_jhash2_4w", lookup3::jhash2);
    bench_jhash2(c, "lookup2_jhash2_4w", lookup2::jhash2);
}

criterion_group!(hash, benches);
criterion_main!(hash);
