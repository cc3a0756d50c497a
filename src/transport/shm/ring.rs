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
//!
//! A payload that does not fit the header's line starts on the slot's
//! second line (`payload_at`).
//!
//! A frame longer than a slot's payload takes several slots in a row (up
//! to half the ring, `max_frame`), its payload running on over the next
//! slots' headers: only its first slot's flag is a flag. The consumer
//! empties such a frame's slots last to first, so a producer that finds
//! a frame's first slot empty finds the rest empty too; and since its
//! own frames are written in order, every slot it checks is either an
//! old frame's first or one of a frame whose first it already found
//! empty. A frame never wraps around the end of the ring: when it would,
//! a pad frame (never seen outside this module) fills the ring's last
//! slots and the frame starts at the first.
//!
//! A short frame whose header says nothing but its kind, context,
//! source, tag, flags and length (a standard-mode eager message: `a`,
//! `b`, `sig` and `label` zero, the whole message in it) goes compact:
//! those in the slot's first `COMPACT_BYTES`, its kind's `COMPACT` bit
//! set, the payload right after, so one of up to 40 bytes still moves
//! one cache line (behind the full 56-byte header, 9 bytes and more took
//! two: a 16-byte ping-pong took twice the 8-byte one's time). `peek`
//! gives back the whole header; nothing outside this module sees the
//! difference.

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

/// The kind of a pad frame, which no `FrameKind` has.
const PAD: u32 = 0xffff_0000;

/// Set in a compact frame's kind (no `FrameKind` has it, nor `PAD`).
const COMPACT: u32 = 0x8000;

/// A compact frame's header: kind, ctx, src, tag, payload length, flags.
const COMPACT_BYTES: usize = 24;

/// The longest payload a compact frame carries: its slot's first line.
const COMPACT_MAX: usize = LINE - COMPACT_BYTES;

const _: () = assert!(PAD & COMPACT == 0 && HEADER_BYTES > COMPACT_BYTES);

impl Ring {
    pub fn stride(payload: usize) -> usize {
        (Self::payload_at(payload) + payload).div_ceil(LINE) * LINE
    }

    /// Where a full-header frame's payload of `len` bytes starts in its
    /// first slot: right behind the header when both fit one line, else
    /// on the second line, so that the producer writes the payload's
    /// lines first and the header's line once, last. The consumer polls
    /// that line: written first, as before, it was taken back by the
    /// consumer's polls while the payload's lines came, and then had to
    /// be fetched again for the flag. 2-rank ping-pong round trips, two
    /// runs: 41 B 0.92 -> 0.57 us, 72 B 0.96 -> 0.72, 104 B 1.02 -> 0.77,
    /// 136-264 B and 4 KiB unchanged (0.96, 2.5).
    fn payload_at(len: usize) -> usize {
        if HEADER_BYTES + len <= LINE {
            HEADER_BYTES
        } else {
            LINE
        }
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

    pub fn slots(&self) -> usize {
        self.nslots as usize
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

    /// The largest payload of one frame: half the ring's slots in a row
    /// (with two slots, one).
    pub fn max_frame(&self) -> usize {
        (self.nslots as usize / 2).max(1) * self.stride - LINE
    }

    /// Slots a frame of `len` payload bytes takes.
    fn span(&self, len: usize) -> u64 {
        if Self::payload_at(len) + len <= self.stride {
            // most frames: no division on the message path
            return 1;
        }
        (LINE + len).div_ceil(self.stride) as u64
    }

    /// Slots the producer's next frame of `len` bytes needs: a pad to the
    /// ring's end first where the frame would wrap, then its own.
    fn needs(&self, len: usize) -> (u64, u64) {
        let (k, at) = (self.span(len), self.tail.get() & (self.nslots - 1));
        let pad = if at + k > self.nslots { self.nslots - at } else { 0 };
        (pad, k)
    }

    /// Producer: whether a frame of `len` bytes would go in now.
    pub fn has_room(&self, len: usize) -> bool {
        let (pad, k) = self.needs(len);
        self.free(pad + k)
    }

    /// Producer: whether the next `n` slots are empty.
    fn free(&self, n: u64) -> bool {
        // Acquire pairs with the consumer's Release stores of 0 in `pop`:
        // once we see a slot empty, the consumer is done reading it (and,
        // emptying a frame's slots last to first, the rest of its slots).
        (0..n).all(|j| Self::flag(self.slot(self.tail.get() + j)).load(Ordering::Acquire) == 0)
    }

    /// Producer: write `h` but its kind (the flag, stored last) at `slot`.
    ///
    /// # Safety
    /// `slot` is an empty slot of this ring, ours until we publish it.
    unsafe fn write_header(slot: *mut u8, h: &FrameHeader) {
        let h = h as *const FrameHeader as *const u8;
        // SAFETY: both sides hold HEADER_BYTES; the slot is ours (caller).
        unsafe { std::ptr::copy_nonoverlapping(h.add(4), slot.add(4), HEADER_BYTES - 4) };
    }

    /// Producer: write one frame whose payload (`len` bytes, at most
    /// `max_frame()`) is produced by `fill`. False if the ring has no
    /// room for it.
    pub fn try_push(&self, header: &FrameHeader, len: usize, fill: impl FnOnce(&mut [u8])) -> bool {
        assert!(len <= self.max_frame(), "a frame of {len} bytes in slots of {}", self.payload);
        debug_assert!(header.kind != 0 && header.kind != PAD && header.kind & COMPACT == 0);
        // (a compact frame, at most a line, takes one slot, unpadded)
        let (pad, k) = self.needs(len);
        if !self.free(pad + k) {
            return false;
        }
        let slot = self.slot(self.tail.get() + pad);
        let compact = Self::compacts(header, len);
        // SAFETY: the frame's slots are empty and lie in a row inside the
        // ring (it does not wrap); only we write them until we publish
        // the first; the bytes after its flag word are not read by the
        // consumer before it sees the flag. Its consumer takes the
        // frame's length from frag_len. (The payload first: see
        // `payload_at`.)
        unsafe {
            if compact {
                let words = [header.ctx, header.src, header.tag as u32, len as u32, header.flags];
                std::ptr::copy_nonoverlapping(words.as_ptr() as *const u8, slot.add(4), COMPACT_BYTES - 4);
                fill(std::slice::from_raw_parts_mut(slot.add(COMPACT_BYTES), len));
            } else {
                fill(std::slice::from_raw_parts_mut(slot.add(Self::payload_at(len)), len));
                Self::write_header(slot, &FrameHeader { frag_len: len as u32, ..*header });
            }
        }
        // Release publishes the header and payload with the flag.
        let flag = if compact { header.kind | COMPACT } else { header.kind };
        Self::flag(slot).store(flag, Ordering::Release);
        if pad > 0 {
            // the pad is published after the frame behind it: a consumer
            // that sees the pad finds the frame there
            let at = self.slot(self.tail.get());
            let pad_len = pad as usize * self.stride - LINE;
            // SAFETY: the pad's first slot is empty and ours (checked).
            unsafe { Self::write_header(at, &FrameHeader { frag_len: pad_len as u32, ..Default::default() }) };
            Self::flag(at).store(PAD, Ordering::Release);
        }
        self.tail.set(self.tail.get() + pad + k);
        true
    }

    /// Whether a frame goes compact: a short one whose header holds
    /// nothing `COMPACT_BYTES` cannot.
    fn compacts(h: &FrameHeader, len: usize) -> bool {
        len <= COMPACT_MAX && h.len == len as u64 && (h.a | h.b | h.sig as u64 | h.label as u64) == 0
    }

    /// Consumer: the oldest frame, if any, without removing it.
    pub fn peek(&self) -> Option<(FrameHeader, &[u8])> {
        loop {
            let slot = self.slot(self.head.get());
            // Acquire pairs with the producer's Release store of the flag.
            let kind = Self::flag(slot).load(Ordering::Acquire);
            if kind == 0 {
                return None;
            }
            if kind == PAD {
                // the frame it stands before is published
                self.pop();
                continue;
            }
            if kind & COMPACT != 0 {
                // SAFETY: a published compact frame: its header words
                // and payload lie in its slot's first line.
                unsafe {
                    let w = std::ptr::read_unaligned(slot.add(4) as *const [u32; 5]);
                    let len = (w[3] as usize).min(COMPACT_MAX);
                    let h = FrameHeader {
                        kind: kind & !COMPACT,
                        ctx: w[0],
                        src: w[1],
                        tag: w[2] as i32,
                        len: len as u64,
                        frag_len: len as u32,
                        flags: w[4],
                        ..Default::default()
                    };
                    return Some((h, std::slice::from_raw_parts(slot.add(COMPACT_BYTES), len)));
                }
            }
            // SAFETY: the slot was published by the producer, which will
            // not touch it again before we clear the flag in `pop`; the
            // payload lies within the frame's slots in a row.
            unsafe {
                let mut h = std::ptr::read_unaligned(slot as *const FrameHeader);
                h.kind = kind;
                let n = (h.frag_len as usize).min(self.max_frame());
                return Some((h, std::slice::from_raw_parts(slot.add(Self::payload_at(n)), n)));
            }
        }
    }

    /// Consumer: release the oldest frame's slots to the producer.
    pub fn pop(&self) {
        let head = self.head.get();
        let k = if Self::flag(self.slot(head)).load(Ordering::Relaxed) & COMPACT != 0 {
            1
        } else {
            // SAFETY: the slot holds a published header (the caller peeked it).
            let len = unsafe { std::ptr::read_unaligned(self.slot(head) as *const FrameHeader) }.frag_len as usize;
            self.span(len.min(self.max_frame()))
        };
        // Release: our reads of the slots happen before the producer may
        // see them empty and overwrite them; last to first, so that the
        // first empty means all are.
        for j in (0..k).rev() {
            Self::flag(self.slot(head + j)).store(0, Ordering::Release);
        }
        self.head.set(head + k);
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
    fn long_frames_take_slots_in_a_row_and_never_wrap() {
        let mut mem = Vec::new();
        let r = ring(&mut mem, 8, 64);
        let stride = Ring::stride(64);
        assert_eq!(r.max_frame(), 4 * stride - LINE);
        let bytes = |n: usize, seed: u8| (0..n).map(|i| (i as u8).wrapping_mul(31) ^ seed).collect::<Vec<u8>>();
        // 1, 2 and 3 slots, then one of 3 that would wrap at slot 6: a pad
        // takes slots 6 and 7, the frame slots 0 to 2
        let lens = [10, stride, 2 * stride, 3 * stride - LINE];
        for (i, &n) in lens.iter().enumerate().take(3) {
            let h = FrameHeader { kind: 1, tag: i as i32, ..Default::default() };
            assert!(r.try_push(&h, n, |b| b.copy_from_slice(&bytes(n, i as u8))));
        }
        let last = FrameHeader { kind: 1, tag: 3, ..Default::default() };
        assert!(!r.try_push(&last, lens[3], |_| unreachable!()), "no room before the first frames go");
        for i in 0..2 {
            let (h, p) = r.peek().unwrap();
            assert_eq!((h.tag, h.frag_len as usize), (i, lens[i as usize]));
            assert_eq!(p, bytes(lens[i as usize], i as u8));
            r.pop();
        }
        assert!(r.try_push(&last, lens[3], |b| b.copy_from_slice(&bytes(lens[3], 3))));
        for i in 2..4 {
            let (h, p) = r.peek().unwrap();
            assert_eq!(h.tag, i);
            assert_eq!(p, bytes(lens[i as usize], i as u8));
            r.pop();
        }
        assert!(r.is_empty() && r.peek().is_none());
        assert!(r.has_room(r.max_frame()));
    }

    #[test]
    fn producer_and_consumer_threads_agree_on_frames_of_every_length() {
        let mut mem = Vec::new();
        let (base, max) = {
            let r = ring(&mut mem, 8, 64);
            (r.base as usize, r.max_frame())
        };
        const N: u32 = 50_000;
        // lengths from 0 to the longest, in an order that wraps everywhere
        let len = move |i: u32| (i as usize * 37) % (max + 1);
        let byte = |i: u32, j: usize| (i as usize ^ j.wrapping_mul(7)) as u8;
        std::thread::scope(|s| {
            s.spawn(move || {
                // SAFETY: the memory outlives the scope; this is the only producer.
                let r = unsafe { Ring::new(base as *mut u8, 8, 64) };
                for i in 0..N {
                    // (whole messages, so the short ones of every third go compact)
                    let whole = if i % 3 == 0 { len(i) as u64 } else { 0 };
                    let h = FrameHeader { kind: 1, tag: i as i32, len: whole, ..Default::default() };
                    let fill = |b: &mut [u8]| b.iter_mut().enumerate().for_each(|(j, x)| *x = byte(i, j));
                    while !r.try_push(&h, len(i), fill) {
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
                    assert_eq!(p.len(), len(next));
                    assert!(p.iter().enumerate().all(|(j, &x)| x == byte(next, j)), "frame {next}");
                    r.pop();
                    next += 1;
                }
            }
        });
    }

    #[test]
    fn short_whole_frames_go_compact_in_their_first_line() {
        let mut mem = Vec::new();
        let r = ring(&mut mem, 4, 256);
        // every slot's bytes past its flag word marked, to see what is written
        let stride = Ring::stride(256);
        for slot in 0..4 {
            // SAFETY: inside the ring's memory; no frame is published yet.
            unsafe { std::ptr::write_bytes(r.base.add(slot * stride + 4), 0xee, stride - 4) };
        }
        let full = |len: usize, a: u64| FrameHeader {
            kind: 1,
            ctx: 7,
            src: 3,
            tag: -5,
            len: len as u64,
            frag_len: len as u32,
            flags: 2,
            a,
            ..Default::default()
        };
        for len in [0, 8, 9, 16, 40, 41] {
            for a in [0, 9] {
                let data: Vec<u8> = (0..len as u8).collect();
                assert!(r.try_push(&full(len, a), len, |b| b.copy_from_slice(&data)));
                let slot = r.slot(r.head.get());
                let (h, p) = r.peek().unwrap();
                let want = full(len, a);
                assert_eq!(
                    (h.kind, h.ctx, h.src, h.tag, h.len, h.frag_len, h.flags, h.a, h.b, h.sig, h.label),
                    (want.kind, 7, 3, -5, len as u64, len as u32, 2, a, 0, 0, 0)
                );
                assert_eq!(p, &data[..]);
                // SAFETY: the slot's bytes, inside the ring.
                let line2 = unsafe { std::slice::from_raw_parts(slot.add(LINE), stride - LINE) };
                let compact = a == 0 && len <= COMPACT_MAX;
                assert_eq!(Ring::flag(slot).load(Ordering::Relaxed) & COMPACT != 0, compact, "{len} bytes, a = {a}");
                let one_line = compact || HEADER_BYTES + len <= LINE;
                assert_eq!(line2.iter().all(|&x| x == 0xee), one_line, "{len} bytes, a = {a}: the first line only");
                r.pop();
                // SAFETY: as above; the slot is empty again.
                unsafe { std::ptr::write_bytes(slot.add(4), 0xee, stride - 4) };
            }
        }
        assert!(r.is_empty() && r.has_room(r.max_frame()));
        // a frame that is not the whole message, or that carries a
        // request or a signature, keeps the full header
        for h in [FrameHeader { len: 100, ..full(16, 0) }, FrameHeader { sig: 1, label: 4, ..full(16, 0) }] {
            assert!(r.try_push(&h, 16, |b| b.fill(1)));
            let (got, _) = r.peek().unwrap();
            assert_eq!((got.len, got.sig, got.label), (h.len, h.sig, h.label));
            r.pop();
        }
    }

    #[test]
    fn small_frames_fit_one_cache_line() {
        assert_eq!(Ring::stride(8), 64);
        assert_eq!(Ring::stride(16384) % 64, 0);
    }
}
