//! Which protocol a send uses (DESIGN.md §4), decided by the sender from
//! the message length and the send mode alone:
//!
//! | protocol | when | data path | the send completes |
//! |---|---|---|---|
//! | T   | standard/buffered, len <= eager limit | inline with the envelope | at once |
//! | TA  | synchronous/ready, len <= eager limit | inline, receiver acks the match | on the ack |
//! | RTA | len > eager limit | envelope only; the matched receiver reads the sender's memory, then acks (Fin) | on Fin |
//! | RAT | RTA refused (no single copy) | the matched receiver answers Cts with its request; the sender pushes Data frames | when all data is pushed |
//!
//! RTA turns into RAT at the receiver's choice, so the sender starts every
//! long message the same way. Both long protocols complete only after the
//! match, which is what a synchronous send needs.

/// The four send modes of MPI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Standard,
    Buffered,
    Synchronous,
    Ready,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    T,
    TA,
    Rta,
}

pub fn choose(len: usize, mode: Mode, eager_limit: usize) -> Protocol {
    if len > eager_limit {
        Protocol::Rta
    } else if matches!(mode, Mode::Synchronous | Mode::Ready) {
        Protocol::TA
    } else {
        Protocol::T
    }
}

/// Frame flags (FrameHeader::flags).
pub const FLAG_SYNC: u32 = 1;
pub const FLAG_READY: u32 = 2;
/// The frame carries the sender's type signature (OXMPI_CHECK_TYPES=1).
pub const FLAG_SIG: u32 = 4;
/// An RTS whose sender waits for this send alone (a blocking send): it
/// answers a Put at once, so the receiver may have it copy half of the
/// message (`Engine::match_rts`).
pub const FLAG_HELPS: u32 = 8;

pub fn flags(mode: Mode) -> u32 {
    match mode {
        Mode::Synchronous => FLAG_SYNC,
        Mode::Ready => FLAG_READY,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_messages_go_eager_and_only_sync_and_ready_wait_for_an_ack() {
        assert_eq!(choose(0, Mode::Standard, 100), Protocol::T);
        assert_eq!(choose(100, Mode::Buffered, 100), Protocol::T);
        assert_eq!(choose(100, Mode::Synchronous, 100), Protocol::TA);
        assert_eq!(choose(1, Mode::Ready, 100), Protocol::TA);
    }

    #[test]
    fn long_messages_rendezvous_in_every_mode() {
        for m in [Mode::Standard, Mode::Buffered, Mode::Synchronous, Mode::Ready] {
            assert_eq!(choose(101, m, 100), Protocol::Rta);
        }
        assert_eq!(choose(1, Mode::Standard, 0), Protocol::Rta);
    }

    #[test]
    fn modes_set_their_flags() {
        assert_eq!(flags(Mode::Standard), 0);
        assert_eq!(flags(Mode::Synchronous), FLAG_SYNC);
        assert_eq!(flags(Mode::Ready), FLAG_READY);
    }
}
