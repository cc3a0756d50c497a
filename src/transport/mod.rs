//! Byte movers between ranks. `shm` joins the ranks of one host through a
//! shared segment, `tcp` ranks on different hosts; every frame either
//! carries starts with a `FrameHeader`.

pub mod shm;
pub mod tcp;

/// What a frame asks of its receiver (DESIGN.md §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum FrameKind {
    /// A whole message, data inline (protocol T).
    Eager = 1,
    /// Envelope of a long message; the data stays with the sender (RTA).
    Rts = 2,
    /// The receiver matched an RTS and cannot read the sender's memory:
    /// the sender must push the data in `Data` frames.
    Cts = 3,
    /// A piece of a long message pushed by its sender, for receive
    /// request `a`.
    Data = 4,
    /// The receiver has the whole long message: the send is complete.
    Fin = 5,
    /// A synchronous or ready eager message was matched.
    Ack = 6,
    /// A ready-mode message found no posted receive and was dropped.
    Nack = 7,
    /// The sender asks to take back an unmatched message (MPI_Cancel).
    CancelReq = 8,
    /// Answer to CancelReq: `addr` is 1 if the message was removed.
    CancelReply = 9,
    /// The receiver reads the first part of a long message and asks the
    /// sender to write the rest into its buffer, so both copy at once.
    Put = 10,
    /// The sender wrote its part (`b` = 1) or could not (`b` = 0).
    PutDone = 11,
    /// The sender is finalizing: its TCP connection closes next (taken by
    /// the TCP transport itself).
    Bye = 12,
    /// Over TCP, the first part of a long message, sent right behind its
    /// RTS before the receiver matched: `a` is the sender's request.
    Early = 13,
}

impl FrameKind {
    pub fn from_u32(v: u32) -> Option<FrameKind> {
        Some(match v {
            1 => FrameKind::Eager,
            2 => FrameKind::Rts,
            3 => FrameKind::Cts,
            4 => FrameKind::Data,
            5 => FrameKind::Fin,
            6 => FrameKind::Ack,
            7 => FrameKind::Nack,
            8 => FrameKind::CancelReq,
            9 => FrameKind::CancelReply,
            10 => FrameKind::Put,
            11 => FrameKind::PutDone,
            12 => FrameKind::Bye,
            13 => FrameKind::Early,
            _ => return None,
        })
    }
}

/// The fixed 56-byte header before every frame's payload. `a` and `b`
/// carry what each kind needs:
///
/// | kind | a | b |
/// |---|---|---|
/// | Eager | sender request (sync/ready modes) | - |
/// | Rts | sender request | address of the packed data in the sender |
/// | Cts | sender request | receiver request |
/// | Data | receiver request | offset of this piece |
/// | Fin, Ack, Nack, CancelReq | sender request | - |
/// | CancelReply | sender request | 1 if the message was removed |
/// | Put | sender request | receiver's buffer address (`len`: where the sender's part starts, `ctx`: receiver request) |
/// | PutDone | receiver request | 1 if the sender wrote its part |
///
/// In a ring slot, `kind` doubles as the slot's full flag (0: empty);
/// a ring stores a short standard-mode message's header in 24 bytes
/// (`shm::ring`'s compact frames), which its `peek` gives back whole.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct FrameHeader {
    pub kind: u32,
    /// Context id of the communicator (point-to-point or collective).
    pub ctx: u32,
    /// Sender's rank in the world.
    pub src: u32,
    pub tag: i32,
    /// Length of the whole message in bytes.
    pub len: u64,
    /// Payload bytes carried by this frame.
    pub frag_len: u32,
    /// Protocol flags (p2p::protocol::FLAG_*).
    pub flags: u32,
    pub a: u64,
    pub b: u64,
    /// With OXMPI_CHECK_TYPES: the sender's type signature hash and an
    /// opaque label of its datatype (for the error message).
    pub sig: u32,
    pub label: u32,
}

pub const HEADER_BYTES: usize = std::mem::size_of::<FrameHeader>();
const _: () = assert!(HEADER_BYTES == 56);
