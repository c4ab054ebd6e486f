//! The set of CPUs holding a line shared. Most lines are touched by one or
//! two CPUs, so a few ids sit inline; only a line that many CPUs spin on
//! (a contended lock word) grows a bitmap, which it keeps once grown: such
//! a line is emptied at every write, and an access must not allocate. The
//! bitmap sits behind one thin pointer, so the set takes 16 bytes and a
//! directory line's state fits one host cache line.

const INLINE: usize = 6;

#[derive(Clone, Debug)]
pub enum SharerSet {
    Few { len: u8, cpus: [u16; INLINE] },
    Many(Box<Bitmap>),
}

/// A grown set: a bit per CPU of the machine, and how many are set.
#[derive(Clone, Debug)]
pub struct Bitmap {
    count: u32,
    bits: Box<[u64]>,
}

impl Default for SharerSet {
    fn default() -> Self {
        SharerSet::Few {
            len: 0,
            cpus: [0; INLINE],
        }
    }
}

impl SharerSet {
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn len(&self) -> usize {
        match self {
            SharerSet::Few { len, .. } => *len as usize,
            SharerSet::Many(m) => m.count as usize,
        }
    }

    #[inline]
    pub fn contains(&self, cpu: u16) -> bool {
        match self {
            SharerSet::Few { len, cpus } => cpus[..*len as usize].contains(&cpu),
            SharerSet::Many(m) => m.bits[cpu as usize / 64] >> (cpu % 64) & 1 == 1,
        }
    }

    /// Adds a CPU; `cpus` is the machine's CPU count, for the bitmap's size.
    /// Inline: every counted access and every shared read comes here, and
    /// almost always finds the CPU in the inline ids or room beside them.
    #[inline]
    pub fn insert(&mut self, cpu: u16, cpus: usize) {
        match self {
            SharerSet::Few { len, cpus: ids } => {
                if ids[..*len as usize].contains(&cpu) {
                    return;
                }
                if (*len as usize) < INLINE {
                    ids[*len as usize] = cpu;
                    *len += 1;
                    return;
                }
                self.grow(cpu, cpus);
            }
            SharerSet::Many(m) => {
                let word = &mut m.bits[cpu as usize / 64];
                if *word >> (cpu % 64) & 1 == 0 {
                    *word |= 1 << (cpu % 64);
                    m.count += 1;
                }
            }
        }
    }

    /// The inline ids are full: the set becomes a bitmap, with `cpu` in it.
    #[cold]
    fn grow(&mut self, cpu: u16, cpus: usize) {
        let SharerSet::Few { cpus: ids, .. } = self else {
            return;
        };
        let mut bits = vec![0u64; cpus.div_ceil(64)].into_boxed_slice();
        for &c in ids.iter() {
            bits[c as usize / 64] |= 1 << (c % 64);
        }
        *self = SharerSet::Many(Box::new(Bitmap {
            count: INLINE as u32,
            bits,
        }));
        self.insert(cpu, cpus);
    }

    /// Empties the set; a bitmap stays allocated, zeroed.
    pub fn clear(&mut self) {
        match self {
            SharerSet::Few { len, .. } => *len = 0,
            SharerSet::Many(m) => {
                if m.count != 0 {
                    m.bits.fill(0);
                    m.count = 0;
                }
            }
        }
    }

    /// Keeps only the CPUs `keep` says to (a bitmap stays allocated).
    pub fn retain(&mut self, mut keep: impl FnMut(u16) -> bool) {
        match self {
            SharerSet::Few { len, cpus } => {
                let mut kept = 0;
                for i in 0..*len as usize {
                    if keep(cpus[i]) {
                        cpus[kept] = cpus[i];
                        kept += 1;
                    }
                }
                *len = kept as u8;
            }
            SharerSet::Many(m) => {
                for (w, word) in m.bits.iter_mut().enumerate() {
                    let mut rest = *word;
                    while rest != 0 {
                        let bit = rest.trailing_zeros();
                        rest &= rest - 1;
                        if !keep((w * 64) as u16 + bit as u16) {
                            *word &= !(1 << bit);
                            m.count -= 1;
                        }
                    }
                }
            }
        }
    }

    /// Every CPU in the set, in no particular order.
    pub fn for_each(&self, mut f: impl FnMut(u16)) {
        match self {
            SharerSet::Few { len, cpus } => cpus[..*len as usize].iter().for_each(|&c| f(c)),
            SharerSet::Many(m) => {
                for (w, &word) in m.bits.iter().enumerate() {
                    let mut rest = word;
                    while rest != 0 {
                        f((w * 64) as u16 + rest.trailing_zeros() as u16);
                        rest &= rest - 1;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_to_a_bitmap_and_empties_in_place() {
        let mut s = SharerSet::default();
        for cpu in [3, 4000, 3, 17, 18, 19, 20, 21, 4095] {
            s.insert(cpu, 4096);
        }
        assert_eq!(s.len(), 8);
        assert!(matches!(s, SharerSet::Many(_)));
        assert!(s.contains(4000) && s.contains(21) && !s.contains(22));
        let mut seen = Vec::new();
        s.for_each(|c| seen.push(c));
        seen.sort();
        assert_eq!(seen, [3, 17, 18, 19, 20, 21, 4000, 4095]);
        s.retain(|c| c != 17 && c < 4000);
        assert_eq!(s.len(), 5);
        assert!(s.contains(3) && !s.contains(17) && !s.contains(4000) && s.contains(21));
        s.clear();
        assert!(s.is_empty() && !s.contains(4000) && matches!(s, SharerSet::Many(_)));
        s.insert(7, 4096);
        assert!(s.contains(7) && s.len() == 1);
    }

    #[test]
    fn retain_keeps_only_the_chosen_cpus_inline() {
        let mut s = SharerSet::default();
        for cpu in [5, 9, 2] {
            s.insert(cpu, 64);
        }
        s.retain(|c| c != 9);
        let mut seen = Vec::new();
        s.for_each(|c| seen.push(c));
        assert_eq!(seen, [5, 2]);
    }

    #[test]
    fn inline_form_is_small() {
        assert!(std::mem::size_of::<SharerSet>() <= 16);
    }
}
