/*
 * Speed reference for the Rust jhash2 (sim/hash/lookup3.rs, sim/hash/lookup2.rs).
 *
 * The simulator hashes a 4-word futex key per simulated futex operation, so its jhash2 must
 * be as fast as the C the kernel compiles to. This program is that yardstick: lookup3 and
 * lookup2 jhash2 written in plain C from the same algorithm description
 * (docs/kernel-facts.md section 1, not kernel source), built with gcc -O2, and
 * timed exactly as benches/hash.rs times the Rust version:
 *   - throughput: 1024 independent precomputed 4-word keys, hashes xor-folded;
 *   - latency: a dependent chain, each hash xored into the next key's first word.
 * It prints ns per hash (median and best of several trials). It also checks two §1.5 futex
 * vectors so a timing is never reported for a wrong hash.
 *
 * The hashes are always_inline: left to itself gcc -O2 calls an out-of-line copy of the
 * lookup3 jhash2 (about 4 ns more per dependent hash), while rustc inlines the #[inline] Rust
 * one, and the point is to compare the hash, not a call. Note that gcc -O2 (like rustc)
 * vectorises the independent-keys loop, hashing 4 keys per SSE2 register.
 *
 * Build and run: benches/c/run.sh
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NKEYS 1024
#define REPS 2000 /* 2M hashes per trial, a few ms */
#define TRIALS 15

#define HASH_FN static inline __attribute__((always_inline))

static inline uint32_t rol32(uint32_t x, unsigned r) { return (x << r) | (x >> (32 - r)); }

/* ---- lookup3 (kernels >= 2.6.37/38) ---- */

#define L3_INITVAL 0xdeadbeefu

HASH_FN void l3_mix(uint32_t *a, uint32_t *b, uint32_t *c)
{
	*a -= *c; *a ^= rol32(*c, 4);  *c += *b;
	*b -= *a; *b ^= rol32(*a, 6);  *a += *c;
	*c -= *b; *c ^= rol32(*b, 8);  *b += *a;
	*a -= *c; *a ^= rol32(*c, 16); *c += *b;
	*b -= *a; *b ^= rol32(*a, 19); *a += *c;
	*c -= *b; *c ^= rol32(*b, 4);  *b += *a;
}

HASH_FN void l3_final(uint32_t *a, uint32_t *b, uint32_t *c)
{
	*c ^= *b; *c -= rol32(*b, 14);
	*a ^= *c; *a -= rol32(*c, 11);
	*b ^= *a; *b -= rol32(*a, 25);
	*c ^= *b; *c -= rol32(*b, 16);
	*a ^= *c; *a -= rol32(*c, 4);
	*b ^= *a; *b -= rol32(*a, 14);
	*c ^= *b; *c -= rol32(*b, 24);
}

HASH_FN uint32_t l3_jhash2(const uint32_t *k, uint32_t n, uint32_t initval)
{
	uint32_t a, b, c;

	a = b = c = L3_INITVAL + (n << 2) + initval;
	for (; n > 3; n -= 3, k += 3) {
		a += k[0];
		b += k[1];
		c += k[2];
		l3_mix(&a, &b, &c);
	}
	switch (n) {
	case 3: c += k[2]; /* fall through */
	case 2: b += k[1]; /* fall through */
	case 1: a += k[0];
		l3_final(&a, &b, &c);
		break;
	case 0: break; /* no final for an empty key */
	}
	return c;
}

/* ---- lookup2 (kernels <= 2.6.36) ---- */

#define L2_GOLDEN_RATIO 0x9e3779b9u

HASH_FN void l2_mix(uint32_t *a, uint32_t *b, uint32_t *c)
{
	*a -= *b; *a -= *c; *a ^= *c >> 13;
	*b -= *c; *b -= *a; *b ^= *a << 8;
	*c -= *a; *c -= *b; *c ^= *b >> 13;
	*a -= *b; *a -= *c; *a ^= *c >> 12;
	*b -= *c; *b -= *a; *b ^= *a << 16;
	*c -= *a; *c -= *b; *c ^= *b >> 5;
	*a -= *b; *a -= *c; *a ^= *c >> 3;
	*b -= *c; *b -= *a; *b ^= *a << 10;
	*c -= *a; *c -= *b; *c ^= *b >> 15;
}

HASH_FN uint32_t l2_jhash2(const uint32_t *k, uint32_t length, uint32_t initval)
{
	uint32_t a = L2_GOLDEN_RATIO, b = L2_GOLDEN_RATIO, c = initval, n = length;

	for (; n >= 3; n -= 3, k += 3) {
		a += k[0];
		b += k[1];
		c += k[2];
		l2_mix(&a, &b, &c);
	}
	c += length * 4; /* the whole length, not what is left */
	switch (n) {
	case 2: b += k[1]; /* fall through */
	case 1: a += k[0];
	}
	l2_mix(&a, &b, &c); /* always, even for an empty key */
	return c;
}

/* ---- timing ---- */

/* Opaque to the optimiser, like black_box: keys and initval cannot be constant-folded. */
static uint32_t keys[NKEYS][4];
static volatile uint32_t initval_src = 0xabc;

#define barrier(x) __asm__ volatile("" : "+r"(x) : : "memory")

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

static volatile uint32_t sink;

/*
 * One function per (hash, measurement) pair, so that each inner loop is compiled exactly
 * like a direct call site with a constant length of 4, as in the Rust bench.
 */
#define DEFINE_BENCH(NAME, HASH)                                                      \
	static double NAME##_throughput(void)                                          \
	{                                                                               \
		uint32_t iv = initval_src, acc = 0;                                    \
		double t0 = now_ns();                                                   \
		for (int r = 0; r < REPS; r++) {                                        \
			for (int i = 0; i < NKEYS; i++)                                 \
				acc ^= HASH(keys[i], 4, iv);                           \
			barrier(acc);                                                   \
		}                                                                       \
		double t = now_ns() - t0;                                               \
		sink = acc;                                                             \
		return t / ((double)REPS * NKEYS);                                      \
	}                                                                               \
	static double NAME##_latency(void)                                             \
	{                                                                               \
		uint32_t iv = initval_src, h = 0;                                      \
		double t0 = now_ns();                                                   \
		for (int r = 0; r < REPS; r++) {                                        \
			for (int i = 0; i < NKEYS; i++) {                               \
				uint32_t k[4] = { keys[i][0] ^ h, keys[i][1],           \
						  keys[i][2], keys[i][3] };             \
				h = HASH(k, 4, iv);                                     \
			}                                                               \
			barrier(h);                                                     \
		}                                                                       \
		double t = now_ns() - t0;                                               \
		sink = h;                                                               \
		return t / ((double)REPS * NKEYS);                                      \
	}

DEFINE_BENCH(l3, l3_jhash2)
DEFINE_BENCH(l2, l2_jhash2)

static void report(const char *name, double (*bench)(void))
{
	double t[TRIALS];

	bench(); /* warm-up */
	for (int i = 0; i < TRIALS; i++)
		t[i] = bench();
	qsort(t, TRIALS, sizeof(t[0]), cmp_double);
	printf("%-28s median %6.3f ns/hash   best %6.3f ns/hash\n", name, t[TRIALS / 2], t[0]);
}

static int check(const char *what, uint32_t got, uint32_t want)
{
	if (got == want)
		return 0;
	fprintf(stderr, "%s: got %#010x, want %#010x\n", what, got, want);
	return 1;
}

int main(void)
{
	/* §1.5: mm 0xffff888100abc000, page 0x7f1234567000, initval 0xabc. */
	const uint32_t old_order[4] = { 0x34567000, 0x00007f12, 0x00abc000, 0xffff8881 };
	const uint32_t new_order[4] = { 0x00abc000, 0xffff8881, 0x34567000, 0x00007f12 };
	uint64_t x = 0x9e3779b97f4a7c15ull; /* xorshift64 seed for the keys */

	if (check("lookup2 old order", l2_jhash2(old_order, 4, 0xabc), 0x96836945) |
	    check("lookup3 5.6+ order", l3_jhash2(new_order, 4, 0xabc), 0x5e886637))
		return 1;

	for (int i = 0; i < NKEYS; i++)
		for (int j = 0; j < 4; j++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			keys[i][j] = (uint32_t)x;
		}

	report("lookup3 jhash2 4w throughput", l3_throughput);
	report("lookup3 jhash2 4w latency", l3_latency);
	report("lookup2 jhash2 4w throughput", l2_throughput);
	report("lookup2 jhash2 4w latency", l2_latency);
	return 0;
}
