//! Matching (DESIGN.md §3): posted receives and unexpected arrivals are two
//! FIFO queues; the first match in order wins; wildcards only on the
//! receive side. Messages between one pair in one context arrive in order
//! (one ring per pair), so FIFO queues keep MPI's non-overtaking rule.

use super::request::ReqId;
use std::collections::VecDeque;

/// What a receive asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Want {
    pub ctx: u32,
    pub src: Option<usize>,
    pub tag: Option<i32>,
}

/// The envelope of an arrived message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Envelope {
    pub ctx: u32,
    pub src: usize,
    pub tag: i32,
    /// The sender's (signature, type label), when types are checked.
    pub check: Option<(u32, u32)>,
}

impl Want {
    pub fn matches(&self, e: &Envelope) -> bool {
        self.ctx == e.ctx && self.src.is_none_or(|s| s == e.src) && self.tag.is_none_or(|t| t == e.tag)
    }
}

/// The body of an unexpected message.
pub enum Body {
    /// Eager data, copied out of the slot; `ack` is the sender's request
    /// when it waits for the match (synchronous mode).
    Eager { data: Vec<u8>, ack: Option<u64> },
    /// A long message still at the sender: its length, send request id,
    /// the address of its bytes in the sender, and whether the sender
    /// waits for it alone (`protocol::FLAG_HELPS`).
    Rts { len: usize, sreq: u64, addr: u64, helps: bool },
}

pub struct Unexpected {
    pub env: Envelope,
    pub body: Body,
}

#[derive(Default)]
pub struct Queues {
    posted: VecDeque<(Want, ReqId)>,
    unexpected: VecDeque<Unexpected>,
    /// Eager bytes held in `unexpected`.
    pub unexpected_bytes: usize,
}

impl Queues {
    /// An arrival: the first posted receive that matches, removed.
    pub fn take_posted(&mut self, e: &Envelope) -> Option<ReqId> {
        let i = self.posted.iter().position(|(w, _)| w.matches(e))?;
        // mostly the oldest: popped without the general removal's shifting
        let taken = if i == 0 { self.posted.pop_front() } else { self.posted.remove(i) };
        taken.map(|(_, id)| id)
    }

    /// Whether a posted receive matches an arrival.
    pub fn is_posted(&self, e: &Envelope) -> bool {
        self.posted.iter().any(|(w, _)| w.matches(e))
    }

    /// A new receive: the first unexpected message that matches, removed.
    pub fn take_unexpected(&mut self, w: &Want) -> Option<Unexpected> {
        let i = self.unexpected.iter().position(|u| w.matches(&u.env))?;
        let u = if i == 0 { self.unexpected.pop_front() } else { self.unexpected.remove(i) }?;
        if let Body::Eager { data, .. } = &u.body {
            self.unexpected_bytes -= data.len();
        }
        Some(u)
    }

    pub fn post(&mut self, w: Want, id: ReqId) {
        self.posted.push_back((w, id));
    }

    pub fn push_unexpected(&mut self, u: Unexpected) {
        if let Body::Eager { data, .. } = &u.body {
            self.unexpected_bytes += data.len();
        }
        self.unexpected.push_back(u);
    }

    /// The first unexpected message that matches, left in place.
    pub fn peek_unexpected(&self, w: &Want) -> Option<&Unexpected> {
        self.unexpected.iter().find(|u| w.matches(&u.env))
    }

    /// Take back the unexpected message of sender request `sreq` from
    /// `src` (MPI_Cancel of an unmatched send). True if it was there.
    pub fn cancel_unexpected(&mut self, src: usize, sreq: u64) -> bool {
        let pos = self.unexpected.iter().position(|u| {
            u.env.src == src
                && match u.body {
                    Body::Eager { ack, .. } => ack == Some(sreq),
                    Body::Rts { sreq: s, .. } => s == sreq,
                }
        });
        match pos.and_then(|i| self.unexpected.remove(i)) {
            Some(u) => {
                if let Body::Eager { data, .. } = &u.body {
                    self.unexpected_bytes -= data.len();
                }
                true
            }
            None => false,
        }
    }

    /// Remove a posted receive (MPI_Cancel). True if it was still posted.
    pub fn cancel_posted(&mut self, id: ReqId) -> bool {
        match self.posted.iter().position(|&(_, r)| r == id) {
            Some(i) => {
                self.posted.remove(i);
                true
            }
            None => false,
        }
    }

    /// Whether some posted receive could take a message from `src`.
    pub fn wants_from(&self, src: usize) -> bool {
        self.posted.iter().any(|(w, _)| w.src.is_none_or(|s| s == src))
    }

    pub fn posted(&self) -> impl Iterator<Item = &(Want, ReqId)> {
        self.posted.iter()
    }

    pub fn unexpected(&self) -> impl Iterator<Item = &Unexpected> {
        self.unexpected.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(src: usize, tag: i32) -> Envelope {
        Envelope { ctx: 0, src, tag, check: None }
    }

    #[test]
    fn first_posted_match_wins_in_order() {
        let mut q = Queues::default();
        q.post(Want { ctx: 0, src: Some(1), tag: Some(5) }, 10);
        q.post(Want { ctx: 0, src: None, tag: None }, 11);
        q.post(Want { ctx: 0, src: Some(1), tag: None }, 12);
        assert_eq!(q.take_posted(&env(2, 5)), Some(11));
        assert_eq!(q.take_posted(&env(1, 7)), Some(12));
        assert_eq!(q.take_posted(&env(1, 5)), Some(10));
        assert_eq!(q.take_posted(&env(1, 5)), None);
    }

    #[test]
    fn contexts_never_match_each_other() {
        let mut q = Queues::default();
        q.post(Want { ctx: 1, src: None, tag: None }, 3);
        assert_eq!(q.take_posted(&env(0, 0)), None);
        assert_eq!(q.take_posted(&Envelope { ctx: 1, src: 0, tag: 0, check: None }), Some(3));
    }

    #[test]
    fn unexpected_messages_are_taken_oldest_first_with_wildcards() {
        let mut q = Queues::default();
        for (i, tag) in [(0u8, 4), (1, 5), (2, 4)] {
            q.push_unexpected(Unexpected {
                env: env(1, tag),
                body: Body::Eager { data: vec![i], ack: Some(i as u64) },
            });
        }
        assert_eq!(q.unexpected_bytes, 3);
        let any_tag = Want { ctx: 0, src: Some(1), tag: None };
        let tag4 = Want { ctx: 0, src: None, tag: Some(4) };
        let first = |u: Option<Unexpected>| match u.unwrap().body {
            Body::Eager { data, .. } => data[0],
            _ => panic!(),
        };
        assert_eq!(first(q.take_unexpected(&tag4)), 0);
        assert_eq!(first(q.take_unexpected(&tag4)), 2);
        assert_eq!(first(q.take_unexpected(&any_tag)), 1);
        assert!(q.take_unexpected(&any_tag).is_none());
        assert_eq!(q.unexpected_bytes, 0);
    }

    #[test]
    fn cancel_takes_back_only_the_named_message() {
        let mut q = Queues::default();
        q.push_unexpected(Unexpected { env: env(1, 0), body: Body::Eager { data: vec![1, 2], ack: Some(7) } });
        q.push_unexpected(Unexpected { env: env(1, 0), body: Body::Rts { len: 100, sreq: 8, addr: 0, helps: false } });
        assert!(!q.cancel_unexpected(2, 7), "another sender's id");
        assert!(q.cancel_unexpected(1, 8));
        assert!(q.cancel_unexpected(1, 7));
        assert_eq!(q.unexpected_bytes, 0);
        q.post(Want { ctx: 0, src: None, tag: None }, 4);
        assert!(q.cancel_posted(4) && !q.cancel_posted(4));
        assert_eq!(q.take_posted(&env(0, 0)), None);
    }

    #[test]
    fn wants_from_sees_wildcards() {
        let mut q = Queues::default();
        assert!(!q.wants_from(3));
        q.post(Want { ctx: 0, src: Some(2), tag: None }, 1);
        assert!(!q.wants_from(3) && q.wants_from(2));
        q.post(Want { ctx: 0, src: None, tag: None }, 2);
        assert!(q.wants_from(3));
    }
}
