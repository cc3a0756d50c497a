//! Byte buffers for collectives, kept between calls. A fresh megabyte
//! from the allocator is often fresh pages from the kernel (glibc trims
//! and unmaps large blocks on free), 256 page faults each: at 1 MiB they
//! cost a collective more than moving the data does. Buffers return here
//! when dropped and are handed out again.

use std::ops::{Deref, DerefMut};
use std::sync::Mutex;

/// Buffers kept at most, and the largest one kept.
const KEEP: usize = 16;
const KEEP_BYTES: usize = 64 << 20;

static POOL: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// A zero-filled byte buffer that goes back to the pool when dropped.
pub struct Scratch(Vec<u8>);

impl Scratch {
    #[inline]
    pub fn zeroed(len: usize) -> Scratch {
        let mut v = take(len);
        v.clear();
        v.resize(len, 0);
        Scratch(v)
    }

    pub fn from_slice(data: &[u8]) -> Scratch {
        let mut v = take(data.len());
        v.clear();
        v.extend_from_slice(data);
        Scratch(v)
    }

    /// `len` bytes holding whatever their last user left, for a buffer
    /// that is written before it is read (zeroing a megabyte costs as
    /// much as receiving it).
    pub fn for_overwrite(len: usize) -> Scratch {
        let mut v = take(len);
        if v.len() >= len {
            v.truncate(len);
        } else {
            v.resize(len, 0);
        }
        Scratch(v)
    }
}

/// A vector with room for `len` bytes, holding its last contents: the
/// smallest kept one that fits, or a new (empty) one.
#[inline]
fn take(len: usize) -> Vec<u8> {
    // (no lock for nothing: reductions of commuting ops ask for an empty
    // spare on every call)
    if len == 0 {
        return Vec::new();
    }
    take_kept(len)
}

fn take_kept(len: usize) -> Vec<u8> {
    let mut pool = POOL.lock().unwrap_or_else(|p| p.into_inner());
    let best = pool.iter().enumerate().filter(|(_, v)| v.capacity() >= len).min_by_key(|(_, v)| v.capacity());
    match best.map(|(i, _)| i) {
        Some(i) => pool.swap_remove(i),
        None => Vec::with_capacity(len),
    }
}

impl Drop for Scratch {
    #[inline]
    fn drop(&mut self) {
        if self.0.capacity() != 0 {
            keep(std::mem::take(&mut self.0));
        }
    }
}

/// Return `v` to the pool (the larger buffers win when it is full).
fn keep(v: Vec<u8>) {
    if v.capacity() > KEEP_BYTES {
        return;
    }
    let mut pool = POOL.lock().unwrap_or_else(|p| p.into_inner());
    if pool.len() < KEEP {
        pool.push(v);
    } else if let Some(i) = (0..pool.len()).min_by_key(|&i| pool[i].capacity()) {
        // keep the larger buffers: they are the ones worth keeping
        if pool[i].capacity() < v.capacity() {
            pool[i] = v;
        }
    }
}

impl Deref for Scratch {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl DerefMut for Scratch {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reused_buffers_come_back_zeroed_or_copied() {
        let mut a = Scratch::zeroed(1000);
        a.fill(7);
        drop(a);
        let b = Scratch::zeroed(900);
        assert!(b.iter().all(|&x| x == 0) && b.len() == 900);
        let c = Scratch::from_slice(&[1, 2, 3]);
        assert_eq!(&*c, &[1, 2, 3]);
        assert_eq!(Scratch::zeroed(0).len(), 0);
        let d = Scratch::for_overwrite(700);
        assert_eq!(d.len(), 700);
    }
}
