//! A single-producer single-consumer ring of fixed-size slots in shared
//! memory: one per ordered pair of ranks, so no slot ever has two writers
//! and no lock is needed.
//!
//! Each slot holds a `FrameHeader` and its payload; the header's `kind`
//! word is also the slot's flag (0: empty). The producer and the consumer
//! keep their positions privately, so a small message moves only the
//! cache lines of its own slot between the two cores: the consumer polls
//! the flag of the next slot, the producer checks that the slot it fills
//! is empty. Slots start on cache-line boundaries.

use crate::transport::{FrameHeader, HEADER_BYTES};
use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};

pub struct Ring {
    base: *mut u8,
    nslots: u64,
    stride: usize,
    payload: usize,
    /// Producer's next slot (private to the producing process).
    tail: Cell<u64>,
    /// Consumer's next slot (private to the consuming process).
    head: Cell<u64>,
}

// SAFETY: a Ring is a view of shared memory whose synchronisation is done by
// the slot flags; its private counters are used by one thread at a time
// (the engine is behind the runtime's lock).
unsafe impl Send for Ring {}

const LINE: usize = 64;

impl Ring {
    pub fn stride(payload: usize) -> usize {
        (HEADER_BYTES + payload).div_ceil(LINE) * LINE
    }

    pub fn bytes_needed(nslots: usize, payload: usize) -> usize {
        nslots * Self::stride(payload)
    }

    /// # Safety
    /// `base` must point to `bytes_needed(nslots, payload)` bytes, 64-byte
    /// aligned, zeroed before first use, that stay mapped while the Ring
    /// lives, with at most one producer and one consumer using them.
    pub unsafe fn new(base: *mut u8, nslots: usize, payload: usize) -> Ring {
        assert!(nslots.is_power_of_two() && payload.is_multiple_of(8));
        Ring {
            base,
            nslots: nslots as u64,
            stride: Self::stride(payload),
            payload,
            tail: Cell::new(0),
            head: Cell::new(0),
        }
    }

    pub fn payload(&self) -> usize {
        self.payload
    }

    fn slot(&self, index: u64) -> *mut u8 {
        let i = (index & (self.nslots - 1)) as usize;
        // SAFETY: i < nslots, so the slot lies inside the ring.
        unsafe { self.base.add(i * self.stride) }
    }

    fn flag(slot: *mut u8) -> &'static AtomicU32 {
        // SAFETY: every slot starts with the 4-byte, 64-aligned kind word,
        // which lives as long as the mapping (the Ring's lifetime; the
        // reference never escapes a method).
        unsafe { &*(slot as *const AtomicU32) }
    }

    /// Producer: write one frame whose payload (`len` bytes, at most
    /// `payload()`) is produced by `fill`. False if the ring is full.
    pub fn try_push(&self, header: &FrameHeader, len: usize, fill: impl FnOnce(&mut [u8])) -> bool {
        debug_assert!(len <= self.payload && header.kind != 0);
        let slot = self.slot(self.tail.get());
        // Acquire pairs with the consumer's Release store of 0 in `pop`:
        // once we see the slot empty, the consumer is done reading it.
        if Self::flag(slot).load(Ordering::Acquire) != 0 {
            return false;
        }
        // SAFETY: the slot is empty and only we write it until we publish
        // it; the bytes after the flag word are not read by the consumer
        // before it sees the flag.
        unsafe {
            let h = header as *const FrameHeader as *const u8;
            std::ptr::copy_nonoverlapping(h.add(4), slot.add(4), HEADER_BYTES - 4);
            fill(std::slice::from_raw_parts_mut(slot.add(HEADER_BYTES), len));
        }
        // Release publishes the header and payload with the flag.
        Self::flag(slot).store(header.kind, Ordering::Release);
        self.tail.set(self.tail.get() + 1);
        true
    }

    /// Consumer: the oldest frame, if any, without removing it.
    pub fn peek(&self) -> Option<(FrameHeader, &[u8])> {
        let slot = self.slot(self.head.get());
        // Acquire pairs with the producer's Release store of the flag.
        let kind = Self::flag(slot).load(Ordering::Acquire);
        if kind == 0 {
            return None;
        }
        // SAFETY: the slot was published by the producer, which will not
        // touch it again before we clear the flag in `pop`.
        unsafe {
            let mut h = std::ptr::read_unaligned(slot as *const FrameHeader);
            h.kind = kind;
            let n = (h.frag_len as usize).min(self.payload);
            Some((h, std::slice::from_raw_parts(slot.add(HEADER_BYTES), n)))
        }
    }

    /// Consumer: release the oldest frame's slot to the producer.
    pub fn pop(&self) {
        let slot = self.slot(self.head.get());
        // Release: our reads of the slot happen before the producer may
        // see it empty and overwrite it.
        Self::flag(slot).store(0, Ordering::Release);
        self.head.set(self.head.get() + 1);
    }

    /// Producer: whether the next slot to fill is still taken.
    pub fn is_full(&self) -> bool {
        Self::flag(self.slot(self.tail.get())).load(Ordering::Relaxed) != 0
    }

    pub fn is_empty(&self) -> bool {
        Self::flag(self.slot(self.head.get())).load(Ordering::Relaxed) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(mem: &mut Vec<u64>, nslots: usize, payload: usize) -> Ring {
        mem.resize(Ring::bytes_needed(nslots, payload) / 8 + 8, 0);
        let p = mem.as_mut_ptr() as usize;
        let aligned = (p + 63) & !63;
        // SAFETY: the vector is large enough, zeroed, and outlives the ring.
        unsafe { Ring::new(aligned as *mut u8, nslots, payload) }
    }

    #[test]
    fn frames_come_out_in_order_and_full_ring_refuses() {
        let mut mem = Vec::new();
        let r = ring(&mut mem, 4, 64);
        for i in 0..4u32 {
            let h = FrameHeader { kind: 1, tag: i as i32, frag_len: 4, ..Default::default() };
            assert!(r.try_push(&h, 4, |b| b.copy_from_slice(&i.to_le_bytes())));
        }
        assert!(!r.try_push(&FrameHeader { kind: 1, ..Default::default() }, 0, |_| {}));
        for i in 0..4u32 {
            let (h, p) = r.peek().unwrap();
            assert_eq!((h.kind, h.tag), (1, i as i32));
            assert_eq!(p, &i.to_le_bytes());
            r.pop();
        }
        assert!(r.peek().is_none() && r.is_empty());
        assert!(r.try_push(&FrameHeader { kind: 2, ..Default::default() }, 0, |_| {}), "slots are reused");
    }

    #[test]
    fn small_frames_fit_one_cache_line() {
        assert_eq!(Ring::stride(8), 64);
        assert_eq!(Ring::stride(16384) % 64, 0);
    }

    #[test]
    fn producer_and_consumer_threads_agree() {
        let mut mem = Vec::new();
        let base = {
            let r = ring(&mut mem, 8, 64);
            r.base as usize
        };
        const N: u32 = 100_000;
        std::thread::scope(|s| {
            s.spawn(move || {
                // SAFETY: the memory outlives the scope; this is the only producer.
                let r = unsafe { Ring::new(base as *mut u8, 8, 64) };
                for i in 0..N {
                    let h = FrameHeader { kind: 1, tag: i as i32, frag_len: 8, ..Default::default() };
                    while !r.try_push(&h, 8, |b| b.copy_from_slice(&(i as u64 * 3).to_le_bytes())) {
                        std::hint::spin_loop();
                    }
                }
            });
            // SAFETY: as above; the only consumer.
            let r = unsafe { Ring::new(base as *mut u8, 8, 64) };
            let mut next = 0;
            while next < N {
                if let Some((h, p)) = r.peek() {
                    assert_eq!(h.tag, next as i32);
                    assert_eq!(u64::from_le_bytes(p.try_into().unwrap()), next as u64 * 3);
                    r.pop();
                    next += 1;
                }
            }
        });
    }
}
