//! The Markov model of a ticket spinlock's collapse (Boyd-Wickizer,
//! Kaashoek, Morris, Zeldovich, "Non-scalable locks are dangerous", Linux
//! Symposium 2012; docs/references.md §4.2).
//!
//! n cores each acquire one lock, hold it for a serial section s, then work
//! for a before the next acquire. The state k is the number of cores at the
//! lock (waiting or holding). A birth-death chain: from k, a new core arrives
//! at rate (n - k)/a; the lock passes on at rate 1/(s + c·k/2), since every
//! release makes all k spinners re-read the lock word, one line transfer of
//! cost c each, and the next ticket's owner is on average halfway through
//! them. The stationary distribution is
//! P_k ∝ ∏_{i<k} ((n - i)/a)·(s + c(i + 1)/2), and throughput (acquisitions
//! per unit time) is Σ_{k≥1} P_k / (s + c·k/2).

/// The three times of the model, in one unit (nanoseconds, say).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TicketLockModel {
    /// Time each core works between releasing the lock and acquiring it again.
    pub think: f64,
    /// Time the lock is held: the serial section.
    pub serial: f64,
    /// One cache-line transfer between cores.
    pub transfer: f64,
}

impl TicketLockModel {
    /// Mean time to pass the lock on with `waiting` cores at it.
    fn service_time(&self, waiting: u32) -> f64 {
        self.serial + self.transfer * f64::from(waiting) / 2.0
    }

    /// The stationary probabilities P_0..=P_n for `cores` cores. Each term is
    /// built from the one before, scaled as it goes so large n do not overflow.
    fn stationary(&self, cores: u32) -> Vec<f64> {
        let mut weights = Vec::with_capacity(cores as usize + 1);
        weights.push(1.0);
        for k in 1..=cores {
            let arrival = f64::from(cores - (k - 1)) / self.think;
            let next = weights[k as usize - 1] * arrival * self.service_time(k);
            weights.push(next);
            if next > 1e100 {
                weights.iter_mut().for_each(|w| *w /= next);
            }
        }
        let total: f64 = weights.iter().sum();
        weights.into_iter().map(|w| w / total).collect()
    }

    /// Acquisitions per unit time with `cores` cores contending.
    pub fn throughput(&self, cores: u32) -> f64 {
        self.stationary(cores)
            .iter()
            .enumerate()
            .skip(1)
            .map(|(k, p)| p / self.service_time(k as u32))
            .sum()
    }

    /// The core count among `counts` with the highest throughput (the first
    /// of equals): where the curve turns from scaling to collapse.
    pub fn knee(&self, counts: &[u32]) -> Option<u32> {
        counts.iter().copied().fold(None, |best, n| match best {
            Some(b) if self.throughput(b) >= self.throughput(n) => Some(b),
            _ => Some(n),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWEEP: [u32; 12] = [1, 2, 4, 6, 8, 10, 12, 14, 16, 20, 24, 32];

    fn model(transfer: f64) -> TicketLockModel {
        TicketLockModel {
            think: 2000.0,
            serial: 100.0,
            transfer,
        }
    }

    #[test]
    fn one_core_alone_cycles_through_think_and_hold() {
        let m = model(64.0);
        let cycle = m.think + m.serial + m.transfer / 2.0;
        assert!((m.throughput(1) * cycle - 1.0).abs() < 1e-12);
    }

    #[test]
    fn acquisitions_balance_arrivals() {
        // In steady state the lock passes on exactly as often as cores arrive.
        let m = model(64.0);
        for n in SWEEP {
            let p = m.stationary(n);
            let arrivals: f64 = (0..=n)
                .map(|k| p[k as usize] * f64::from(n - k) / m.think)
                .sum();
            assert!((arrivals / m.throughput(n) - 1.0).abs() < 1e-9, "n = {n}");
        }
    }

    #[test]
    fn free_hand_offs_never_collapse() {
        let m = model(0.0);
        let curve: Vec<f64> = SWEEP.iter().map(|&n| m.throughput(n)).collect();
        assert!(curve.windows(2).all(|w| w[1] > w[0]), "{curve:?}");
        assert!(curve[SWEEP.len() - 1] < 1.0 / m.serial);
        assert_eq!(m.knee(&SWEEP), Some(32));
    }

    #[test]
    fn costly_hand_offs_collapse_past_a_knee() {
        let m = model(64.0);
        let knee = m.knee(&SWEEP).unwrap();
        assert!(1 < knee && knee < 32, "knee at {knee}");
        assert!(m.throughput(32) < 0.5 * m.throughput(knee));
    }

    #[test]
    fn dearer_transfers_move_the_knee_left() {
        let knees: Vec<u32> = [16.0, 64.0, 256.0]
            .iter()
            .map(|&c| model(c).knee(&SWEEP).unwrap())
            .collect();
        assert!(knees.windows(2).all(|w| w[1] < w[0]), "{knees:?}");
    }

    #[test]
    fn large_core_counts_stay_finite() {
        let t = model(64.0).throughput(4096);
        assert!(t.is_finite() && t > 0.0);
    }
}
