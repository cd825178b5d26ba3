//! Block offsets, chosen as fio 3.33 chooses them (fio-semantics.md §2): the taus88 generator
//! seeded with `0xb1899bed × job_number`, a block drawn as `floor(N × r / 2^32)`, and a random
//! map so that each pass over the file visits every block exactly once (a drawn block that is
//! already used is replaced by the next free one after it, wrapping). Also the sequential
//! generator and the PRNG that picks the direction of a mixed job.
//!
//! Everything here is pure and allocation-free after construction, so it is tested exactly
//! against fio's own offset logs (the §2.5 vectors).

/// fio's `FIO_RANDSEED` (fio ≤ 3.34 seeds the offset generator with it × thread_number).
pub const FIO_RANDSEED: u32 = 0xb189_9bed;

/// The 32-bit Tausworthe generator "taus88" (L'Ecuyer), as fio's lib/rand.c implements it.
#[derive(Debug, Clone)]
pub struct Taus88 {
    s1: u32,
    s2: u32,
    s3: u32,
}

impl Taus88 {
    /// Seeds the state as fio's `__init_rand32` does: three LCG steps from a fixed start
    /// value, each component raised to its minimum, then six outputs thrown away.
    pub fn new(seed: u32) -> Taus88 {
        // fio writes the start value as `(2^31) + (2^17) + (2^7)`, where `^` is XOR in C:
        // 29 + 19 + 5 = 53. Reproducing the quirk is what makes the offsets match.
        let lcg = |x: u32| x.wrapping_mul(69069) ^ seed;
        let at_least = |x: u32, m: u32| if x < m { x + m } else { x };
        let s1 = at_least(lcg(53), 1);
        let s2 = at_least(lcg(s1), 7);
        let s3 = at_least(lcg(s2), 15);
        let mut t = Taus88 { s1, s2, s3 };
        for _ in 0..6 {
            t.next_u32();
        }
        t
    }

    /// The generator for job `index` (0-based) of a job group: fio's thread_number is 1-based.
    pub fn for_job(index: usize) -> Taus88 {
        Taus88::new(FIO_RANDSEED.wrapping_mul(index as u32 + 1))
    }

    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        let Taus88 { s1, s2, s3 } = *self;
        self.s1 = ((s1 & 0xFFFF_FFFE) << 12) ^ (((s1 << 13) ^ s1) >> 19);
        self.s2 = ((s2 & 0xFFFF_FFF8) << 4) ^ (((s2 << 2) ^ s2) >> 25);
        self.s3 = ((s3 & 0xFFFF_FFF0) << 17) ^ (((s3 << 3) ^ s3) >> 11);
        self.s1 ^ self.s2 ^ self.s3
    }
}

/// fio scales the draw in double precision: `(u64)(N × (r / (2^32)))`. Doing it in integers
/// would differ for large N, so keep the float expression.
#[inline]
fn scale(n: u64, r: u32) -> u64 {
    (n as f64 * (r as f64 / 4_294_967_296.0)) as u64
}

/// One bit per block plus a summary level (one bit per full 64-block word), so that finding
/// the next free block stays cheap when a pass is nearly complete, whatever N is.
#[derive(Debug, Clone)]
pub struct BlockMap {
    words: Vec<u64>,
    full: Vec<u64>,
    n: u64,
    used: u64,
}

impl BlockMap {
    pub fn new(n: u64) -> BlockMap {
        let nwords = n.div_ceil(64) as usize;
        let nfull = nwords.div_ceil(64);
        let mut m = BlockMap {
            words: vec![0; nwords],
            full: vec![0; nfull],
            n,
            used: 0,
        };
        m.clear();
        m
    }

    /// Empties the map. Bits past the end are kept set so they are never "free".
    pub fn clear(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
        self.full.iter_mut().for_each(|w| *w = 0);
        self.used = 0;
        let tail = (self.n % 64) as u32;
        if tail != 0 {
            let last = self.words.len() - 1;
            self.words[last] = !0u64 << tail;
        }
        let nwords = self.words.len();
        let ftail = (nwords % 64) as u32;
        if ftail != 0 {
            let last = self.full.len() - 1;
            self.full[last] = !0u64 << ftail;
        }
    }

    pub fn len(&self) -> u64 {
        self.n
    }

    pub fn is_full(&self) -> bool {
        self.used >= self.n
    }

    #[inline]
    pub fn is_set(&self, b: u64) -> bool {
        self.words[(b / 64) as usize] & (1u64 << (b % 64)) != 0
    }

    #[inline]
    pub fn set(&mut self, b: u64) {
        let w = (b / 64) as usize;
        let bit = 1u64 << (b % 64);
        if self.words[w] & bit == 0 {
            self.words[w] |= bit;
            self.used += 1;
            if self.words[w] == !0 {
                self.full[w / 64] |= 1u64 << (w % 64);
            }
        }
    }

    /// The first free block at or after `from`, wrapping to 0; None when the map is full.
    /// (fio's `axmap_next_free` looks strictly after a used block; called with a used block
    /// the two are the same.)
    pub fn next_free(&self, from: u64) -> Option<u64> {
        if self.is_full() {
            return None;
        }
        let from = if from >= self.n { 0 } else { from };
        let w = (from / 64) as usize;
        let free = !self.words[w] & (!0u64 << (from % 64));
        if free != 0 {
            return Some(w as u64 * 64 + free.trailing_zeros() as u64);
        }
        self.free_word_from(w + 1)
            .or_else(|| self.free_word_from(0))
            .map(|w| w as u64 * 64 + (!self.words[w]).trailing_zeros() as u64)
    }

    /// The first word at or after `w` that has a free bit, found through the summary level.
    fn free_word_from(&self, w: usize) -> Option<usize> {
        if w >= self.words.len() {
            return None;
        }
        let mut f = w / 64;
        let mut mask = !self.full[f] & (!0u64 << (w % 64));
        loop {
            if mask != 0 {
                return Some(f * 64 + mask.trailing_zeros() as usize);
            }
            f += 1;
            if f >= self.full.len() {
                return None;
            }
            mask = !self.full[f];
        }
    }
}

/// What an offset generator hands out next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// A block index (multiply by bs for the byte offset).
    Block(u64),
    /// The previous pass was complete: the map was cleared and this is the first block of a
    /// new pass. The caller drops the file's cached pages as fio does (`loop_cache_invalidate`).
    NewPass(u64),
    /// The single pass of a job that is not time_based is complete.
    Done,
}

/// fio's random offsets with the random map (randrepeat=1, tausworthe, uniform).
#[derive(Debug, Clone)]
pub struct RandomBlocks {
    rng: Taus88,
    map: BlockMap,
}

impl RandomBlocks {
    pub fn new(n: u64, rng: Taus88) -> RandomBlocks {
        RandomBlocks {
            rng,
            map: BlockMap::new(n),
        }
    }

    /// The generator of job `index` (0-based) over `n` blocks.
    pub fn for_job(n: u64, index: usize) -> RandomBlocks {
        RandomBlocks::new(n, Taus88::for_job(index))
    }

    #[inline]
    pub fn next(&mut self, wrap: bool) -> Pick {
        let n = self.map.len();
        let r = self.rng.next_u32();
        if self.map.is_full() {
            // fio draws first and only then finds the map full: that draw is lost.
            if !wrap {
                return Pick::Done;
            }
            self.map.clear();
            let b = scale(n, self.rng.next_u32());
            self.map.set(b);
            return Pick::NewPass(b);
        }
        let mut b = scale(n, r);
        if self.map.is_set(b) {
            b = self
                .map
                .next_free(b)
                .expect("the map is not full, so a free block exists");
        }
        self.map.set(b);
        Pick::Block(b)
    }
}

/// Sequential blocks 0, 1, 2 …; a time_based job loops back to 0 at the end of the file.
#[derive(Debug, Clone)]
pub struct SeqBlocks {
    next: u64,
    n: u64,
}

impl SeqBlocks {
    pub fn new(n: u64) -> SeqBlocks {
        SeqBlocks { next: 0, n }
    }

    #[inline]
    pub fn next(&mut self, wrap: bool) -> Pick {
        if self.next < self.n {
            let b = self.next;
            self.next += 1;
            return Pick::Block(b);
        }
        if !wrap {
            return Pick::Done;
        }
        self.next = 1;
        Pick::NewPass(0)
    }
}

/// Chooses the direction of each I/O of a mixed job: a read with probability `pct`%.
/// A taus88 of its own, so the offsets stay those of fio whatever the mix does.
#[derive(Debug, Clone)]
pub struct MixPicker {
    rng: Taus88,
    pct: u32,
}

impl MixPicker {
    pub fn new(pct: u8, index: usize) -> MixPicker {
        // Any fixed seed distinct from the offset seed keeps runs repeatable.
        MixPicker {
            rng: Taus88::new(0x5eed_4d1f ^ (index as u32).wrapping_mul(0x9e37_0001)),
            pct: pct as u32,
        }
    }

    /// True when the next I/O is a read.
    #[inline]
    pub fn is_read(&mut self) -> bool {
        // A value in 1..=100, as fio's rand_between(1, 100).
        let v = 1 + scale(100, self.rng.next_u32()) as u32;
        v <= self.pct
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(n: u64, job: usize, count: usize) -> Vec<u64> {
        let mut g = RandomBlocks::for_job(n, job);
        (0..count)
            .map(|_| match g.next(true) {
                Pick::Block(b) | Pick::NewPass(b) => b,
                Pick::Done => unreachable!(),
            })
            .collect()
    }

    // fio-semantics.md §2.5: fio 3.33's own offset logs of a 4 GiB file, threads 1 and 2.
    #[test]
    fn four_gib_threads_match_fio() {
        let fio: [[u64; 12]; 2] = [
            [
                63243, 776250, 884141, 492845, 421435, 880938, 398977, 370693, 957356, 70069,
                896770, 682782,
            ],
            [
                267161, 190466, 629880, 41235, 474991, 647061, 729303, 298394, 302667, 88596,
                404479, 65934,
            ],
        ];
        for (job, want) in fio.iter().enumerate() {
            assert_eq!(blocks(1 << 20, job, 12), want, "thread {}", job + 1);
        }
    }

    #[test]
    fn sixteen_blocks_wrap_with_a_lost_draw_as_fio() {
        let expect = vec![
            0, 11, 13, 7, 6, 14, 8, 5, 15, 1, 2, 10, 3, 4, 9, 12, // pass 1
            12, 5, 9, 0, 6, 7, 11, 13, 15, 14, 4, 8, 1, 2, 3, 10, // pass 2
            0, 1,
        ];
        assert_eq!(blocks(16, 0, 34), expect);
        // The 17th and 33rd picks start new passes.
        let mut g = RandomBlocks::for_job(16, 0);
        let kinds: Vec<bool> = (0..34)
            .map(|_| matches!(g.next(true), Pick::NewPass(_)))
            .collect();
        let passes: Vec<usize> = kinds
            .iter()
            .enumerate()
            .filter(|(_, k)| **k)
            .map(|(i, _)| i)
            .collect();
        assert_eq!(passes, vec![16, 32]);
    }

    #[test]
    fn one_mib_byte_offsets_match_fio() {
        let offs: Vec<u64> = blocks(256, 0, 6).iter().map(|b| b * 4096).collect();
        assert_eq!(offs, vec![61440, 774144, 880640, 491520, 417792, 884736]);
    }

    #[test]
    fn each_pass_is_a_permutation() {
        for n in [1u64, 2, 63, 64, 65, 100, 4095, 4096, 4097, 70_000] {
            let mut g = RandomBlocks::for_job(n, 3);
            for pass in 0..2 {
                let mut seen = vec![false; n as usize];
                for i in 0..n {
                    let b = match g.next(true) {
                        Pick::Block(b) => {
                            assert!(pass == 0 || i > 0);
                            b
                        }
                        Pick::NewPass(b) => {
                            assert!(pass > 0 && i == 0, "n={n} pass={pass} i={i}");
                            b
                        }
                        Pick::Done => unreachable!(),
                    };
                    assert!(b < n);
                    assert!(!seen[b as usize], "n={n}: block {b} twice in a pass");
                    seen[b as usize] = true;
                }
            }
        }
    }

    #[test]
    fn one_pass_only_without_time_based() {
        let mut g = RandomBlocks::for_job(10, 0);
        for _ in 0..10 {
            assert!(matches!(g.next(false), Pick::Block(_)));
        }
        assert_eq!(g.next(false), Pick::Done);
        let mut s = SeqBlocks::new(3);
        assert_eq!(s.next(false), Pick::Block(0));
        assert_eq!(s.next(false), Pick::Block(1));
        assert_eq!(s.next(false), Pick::Block(2));
        assert_eq!(s.next(false), Pick::Done);
    }

    #[test]
    fn sequential_wraps_to_zero() {
        let mut s = SeqBlocks::new(3);
        let got: Vec<Pick> = (0..7).map(|_| s.next(true)).collect();
        use Pick::*;
        assert_eq!(
            got,
            vec![
                Block(0),
                Block(1),
                Block(2),
                NewPass(0),
                Block(1),
                Block(2),
                NewPass(0)
            ]
        );
    }

    #[test]
    fn next_free_wraps_and_uses_the_summary() {
        let mut m = BlockMap::new(64 * 70 + 5);
        for b in 0..m.len() {
            if b != 3 && b != 64 * 69 + 2 {
                m.set(b);
            }
        }
        assert_eq!(m.next_free(4), Some(64 * 69 + 2));
        assert_eq!(m.next_free(64 * 69 + 3), Some(3));
        m.set(3);
        m.set(64 * 69 + 2);
        assert!(m.is_full());
        assert_eq!(m.next_free(0), None);
        m.clear();
        assert_eq!(m.next_free(64 * 70 + 4), Some(64 * 70 + 4));
    }

    #[test]
    fn the_mix_follows_the_percentage() {
        for pct in [0u8, 30, 50, 100] {
            let mut m = MixPicker::new(pct, 0);
            let reads = (0..100_000).filter(|_| m.is_read()).count();
            let got = reads as f64 / 1000.0;
            assert!((got - pct as f64).abs() < 1.0, "pct={pct} got {got}");
        }
    }
}
