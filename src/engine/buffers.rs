//! I/O buffers: one aligned allocation holding `iodepth` buffers of `bs` bytes, filled once
//! with pseudo-random bytes, and the per-write scramble that keeps every write different and
//! incompressible (fio's `fill_random_buf` + `small_content_scramble`, fio-semantics.md §1.5).

use std::alloc::{Layout, alloc, dealloc};

/// Page alignment: enough for O_DIRECT on any common device (logical blocks ≤ 4096).
pub const ALIGN: usize = 4096;

/// `count` buffers of `len` bytes, each starting on a 4096-byte boundary.
pub struct Buffers {
    base: *mut u8,
    layout: Layout,
    stride: usize,
    len: usize,
    count: usize,
}

// SAFETY: the buffers are plain memory owned by this value; the engine hands out raw pointers
// only while it owns the value and drains all I/O before dropping it.
unsafe impl Send for Buffers {}

impl Buffers {
    pub fn new(count: usize, len: usize, seed: u64) -> Buffers {
        let stride = len.div_ceil(ALIGN) * ALIGN;
        let total = (stride * count).max(ALIGN);
        let layout = Layout::from_size_align(total, ALIGN).expect("buffer layout");
        // SAFETY: the layout has a non-zero size.
        let base = unsafe { alloc(layout) };
        if base.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        // SAFETY: `base` points to `total` writable bytes.
        let all = unsafe { std::slice::from_raw_parts_mut(base, total) };
        fill_random(all, seed);
        Buffers {
            base,
            layout,
            stride,
            len,
            count,
        }
    }

    /// The start of buffer `i`.
    #[inline]
    pub fn ptr(&self, i: usize) -> *mut u8 {
        debug_assert!(i < self.count);
        // SAFETY: i < count, so the offset is inside the allocation.
        unsafe { self.base.add(i * self.stride) }
    }

    /// Buffer `i` as a slice, for code that is not racing with the kernel on it.
    pub fn slice_mut(&mut self, i: usize) -> &mut [u8] {
        // SAFETY: within the allocation, and `&mut self` excludes other users.
        unsafe { std::slice::from_raw_parts_mut(self.ptr(i), self.len) }
    }
}

impl Drop for Buffers {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.base, self.layout) }
    }
}

/// splitmix64: a fast, well-mixed generator for buffer contents (not for offsets).
#[inline]
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Fills `buf` with pseudo-random bytes.
pub fn fill_random(buf: &mut [u8], seed: u64) {
    let mut s = seed;
    let mut chunks = buf.chunks_exact_mut(8);
    for c in &mut chunks {
        c.copy_from_slice(&splitmix(&mut s).to_ne_bytes());
    }
    let rest = chunks.into_remainder();
    let last = splitmix(&mut s).to_ne_bytes();
    rest.copy_from_slice(&last[..rest.len()]);
}

/// Makes a buffer unique before a write: in every 512-byte sector, stores the sector's byte
/// offset in the file at the start of a 64-byte slot chosen from the stamp, and the stamp
/// (a per-job write counter) at the end of that slot. Like fio's scramble, this touches a few
/// bytes per sector, so it costs next to nothing, yet no two writes carry the same data and
/// nothing dedups or compresses. The values are multiplied by odd constants (a bijection, so
/// they stay unique) to look as random as the rest of the buffer.
///
/// # Safety
/// `buf` must point to `len` writable bytes that no I/O is using.
#[inline]
pub unsafe fn scramble(buf: *mut u8, len: usize, offset: u64, stamp: u64) {
    const K1: u64 = 0x9e37_79b9_7f4a_7c15;
    const K2: u64 = 0xc2b2_ae3d_27d4_eb4f;
    let st = stamp.wrapping_mul(K2);
    let mut sector = 0usize;
    while sector + 64 <= len {
        let room = (len - sector).min(512) / 64; // whole 64-byte slots in this sector
        let slot = ((stamp as usize) ^ (sector >> 9)) % room;
        let p = sector + slot * 64;
        let off = (offset + sector as u64).wrapping_mul(K1);
        // SAFETY: p + 64 <= len; unaligned writes are fine.
        unsafe {
            buf.add(p).cast::<u64>().write_unaligned(off);
            buf.add(p + 48).cast::<u64>().write_unaligned(st);
            buf.add(p + 56)
                .cast::<u64>()
                .write_unaligned(st ^ off.rotate_left(23));
        }
        sector += 512;
    }
    if (8..64).contains(&len) {
        // Tiny blocks: at least make the first word unique.
        // SAFETY: len >= 8.
        unsafe {
            buf.cast::<u64>()
                .write_unaligned((offset ^ stamp).wrapping_mul(K1))
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_and_random() {
        let mut b = Buffers::new(3, 4096 + 512, 7);
        for i in 0..3 {
            assert_eq!(b.ptr(i) as usize % ALIGN, 0);
        }
        let s = b.slice_mut(1);
        let zeros = s.iter().filter(|&&x| x == 0).count();
        assert!(zeros < s.len() / 64, "{zeros} zero bytes");
    }

    #[test]
    fn every_write_differs_in_every_sector() {
        let mut b = Buffers::new(1, 4096, 1);
        let p = b.ptr(0);
        unsafe { scramble(p, 4096, 8192, 1) };
        let first = b.slice_mut(0).to_vec();
        unsafe { scramble(p, 4096, 8192, 2) };
        let second = b.slice_mut(0).to_vec();
        for (a, c) in first.chunks(512).zip(second.chunks(512)) {
            assert_ne!(a, c);
        }
        // Sectors of one write differ from each other too.
        assert_ne!(&second[..512], &second[512..1024]);
    }

    #[test]
    fn odd_sizes_stay_in_bounds() {
        for len in [1usize, 8, 63, 64, 100, 511, 512, 513, 4095] {
            let b = Buffers::new(1, len, 3);
            unsafe { scramble(b.ptr(0), len, 0, 99) };
        }
    }
}
