//! A single-producer single-consumer ring of fixed-size slots in shared
//! memory: one per ordered pair of ranks, so no slot ever has two writers
//! and no lock is needed.
//!
//! Layout: a cache line with `head` (advanced by the consumer), a cache line
//! with `tail` (advanced by the producer), then `nslots` slots of
//! `HEADER_BYTES + payload` bytes each.

use crate::transport::{FrameHeader, HEADER_BYTES};
use std::sync::atomic::{AtomicU64, Ordering};

pub struct Ring {
    base: *mut u8,
    nslots: u64,
    slot_bytes: usize,
    payload: usize,
}

// SAFETY: a Ring is a view of shared memory whose synchronisation is done by
// the head/tail atomics; it holds no thread-affine state.
unsafe impl Send for Ring {}

const LINE: usize = 64;

impl Ring {
    pub fn bytes_needed(nslots: usize, payload: usize) -> usize {
        2 * LINE + nslots * (HEADER_BYTES + payload)
    }

    /// # Safety
    /// `base` must point to `bytes_needed(nslots, payload)` bytes, 64-byte
    /// aligned, zeroed before first use, that stay mapped while the Ring
    /// lives, with at most one producer and one consumer using them.
    pub unsafe fn new(base: *mut u8, nslots: usize, payload: usize) -> Ring {
        assert!(nslots.is_power_of_two() && payload % 8 == 0);
        Ring {
            base,
            nslots: nslots as u64,
            slot_bytes: HEADER_BYTES + payload,
            payload,
        }
    }

    pub fn payload(&self) -> usize {
        self.payload
    }

    fn head(&self) -> &AtomicU64 {
        // SAFETY: offset 0 is inside the ring and 8-aligned (see `new`).
        unsafe { &*(self.base as *const AtomicU64) }
    }

    fn tail(&self) -> &AtomicU64 {
        // SAFETY: offset LINE is inside the ring and 8-aligned.
        unsafe { &*(self.base.add(LINE) as *const AtomicU64) }
    }

    fn slot(&self, index: u64) -> *mut u8 {
        let i = (index & (self.nslots - 1)) as usize;
        // SAFETY: i < nslots, so the slot lies inside the ring.
        unsafe { self.base.add(2 * LINE + i * self.slot_bytes) }
    }

    /// Producer: write one frame whose payload (`len` bytes, at most
    /// `payload()`) is produced by `fill`. False if the ring is full.
    pub fn try_push(&self, header: &FrameHeader, len: usize, fill: impl FnOnce(&mut [u8])) -> bool {
        debug_assert!(len <= self.payload);
        // Only this producer writes `tail`, so Relaxed reads its own value.
        let tail = self.tail().load(Ordering::Relaxed);
        // Acquire pairs with the consumer's Release store of `head`: once we
        // see a slot as free, the consumer has finished reading it.
        let head = self.head().load(Ordering::Acquire);
        if tail - head >= self.nslots {
            return false;
        }
        let slot = self.slot(tail);
        // SAFETY: the slot is free (checked above) and only we write it
        // until we publish it by advancing `tail`.
        unsafe {
            std::ptr::write_unaligned(slot as *mut FrameHeader, *header);
            fill(std::slice::from_raw_parts_mut(slot.add(HEADER_BYTES), len));
        }
        // Release publishes the slot's contents before the new tail.
        self.tail().store(tail + 1, Ordering::Release);
        true
    }

    /// Consumer: the oldest frame, if any, without removing it.
    pub fn peek(&self) -> Option<(FrameHeader, &[u8])> {
        let head = self.head().load(Ordering::Relaxed);
        // Acquire pairs with the producer's Release store of `tail`.
        let tail = self.tail().load(Ordering::Acquire);
        if head == tail {
            return None;
        }
        let slot = self.slot(head);
        // SAFETY: the slot was published by the producer (tail > head) and it
        // will not reuse it before we advance `head` in `pop`.
        unsafe {
            let h = std::ptr::read_unaligned(slot as *const FrameHeader);
            let n = (h.frag_len as usize).min(self.payload);
            Some((h, std::slice::from_raw_parts(slot.add(HEADER_BYTES), n)))
        }
    }

    /// Consumer: release the oldest frame's slot to the producer.
    pub fn pop(&self) {
        let head = self.head().load(Ordering::Relaxed);
        // Release: our reads of the slot happen before the producer may
        // overwrite it.
        self.head().store(head + 1, Ordering::Release);
    }

    pub fn is_empty(&self) -> bool {
        self.head().load(Ordering::Relaxed) == self.tail().load(Ordering::Acquire)
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
            let h = FrameHeader {
                kind: 1,
                tag: i as i32,
                frag_len: 4,
                ..Default::default()
            };
            assert!(r.try_push(&h, 4, |b| b.copy_from_slice(&i.to_le_bytes())));
        }
        assert!(!r.try_push(&FrameHeader::default(), 0, |_| {}));
        for i in 0..4u32 {
            let (h, p) = r.peek().unwrap();
            assert_eq!(h.tag, i as i32);
            assert_eq!(p, &i.to_le_bytes());
            r.pop();
        }
        assert!(r.peek().is_none() && r.is_empty());
    }

    #[test]
    fn producer_and_consumer_threads_agree() {
        let mut mem = Vec::new();
        let r = ring(&mut mem, 8, 64);
        let addr = &r as *const Ring as usize;
        const N: u32 = 100_000;
        std::thread::scope(|s| {
            s.spawn(move || {
                // SAFETY: the ring outlives the scope; this is the only producer.
                let r = unsafe { &*(addr as *const Ring) };
                for i in 0..N {
                    let h = FrameHeader {
                        tag: i as i32,
                        frag_len: 8,
                        ..Default::default()
                    };
                    while !r.try_push(&h, 8, |b| b.copy_from_slice(&(i as u64 * 3).to_le_bytes())) {
                        std::hint::spin_loop();
                    }
                }
            });
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
