//! Byte movers between ranks. `shm` joins the ranks of one host through a
//! shared segment; every frame it carries starts with a `FrameHeader`.

pub mod shm;

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
    /// A piece of a long message pushed by its sender.
    Data = 4,
    /// The receiver has the whole long message: the send is complete.
    Fin = 5,
}

impl FrameKind {
    pub fn from_u32(v: u32) -> Option<FrameKind> {
        Some(match v {
            1 => FrameKind::Eager,
            2 => FrameKind::Rts,
            3 => FrameKind::Cts,
            4 => FrameKind::Data,
            5 => FrameKind::Fin,
            _ => return None,
        })
    }
}

/// The fixed 64-byte header before every frame's payload.
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
    pub _pad: u32,
    /// Sender's request id (Rts, Cts, Fin).
    pub sreq: u64,
    /// Receiver's request id (Cts, Data).
    pub rreq: u64,
    /// Rts: address of the sender's packed data; Data: offset of this piece.
    pub addr: u64,
    pub _reserved: u64,
}

pub const HEADER_BYTES: usize = std::mem::size_of::<FrameHeader>();
const _: () = assert!(HEADER_BYTES == 64);
