//! Requests: what an operation in flight remembers, kept in a slab so a
//! request id is a small index.

use super::matching::{Unexpected, Want};
use super::protocol::Mode;
use super::schedule::Schedule;
use crate::comm::Group;
use crate::datatype::TypeRef;

pub type ReqId = u32;

/// What a completed operation reports (MPI_Status, in core terms).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// Rank of the sender in the receiving communicator, or PROC_NULL.
    pub source: i32,
    pub tag: i32,
    /// Bytes received.
    pub bytes: usize,
    /// Bytes the sender sent (more than `bytes` when truncated).
    pub sent_bytes: usize,
    /// 0, or the error class of a failed operation.
    pub error: i32,
    pub cancelled: bool,
    /// On a type signature mismatch: the labels of the sender's and the
    /// receiver's datatypes.
    pub peer_type: u32,
    pub own_type: u32,
    /// A failed multi-step operation's error (see `schedule::failure`),
    /// or 0.
    pub failure: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendState {
    /// An eager message waits in the outbox for room in the ring (its data
    /// copied there): done once it goes out.
    Queued,
    /// An eager synchronous or ready message waits for the receiver's Ack.
    AwaitingAck,
    /// A long message waits for the receiver's Fin (it read our memory)
    /// or Cts (we push).
    AwaitingReceiver,
    /// Pushing data to receive request `rreq`; `sent` bytes so far.
    Pushing {
        rreq: u64,
        sent: usize,
    },
    Done,
}

impl SendReq {
    /// This send is done; a long one leaves `long_sends`
    /// (`Engine::long_sends`).
    pub fn finish(&mut self, long_sends: &mut usize) {
        if matches!(self.state, SendState::AwaitingReceiver | SendState::Pushing { .. }) {
            *long_sends -= 1;
        }
        self.state = SendState::Done;
    }
}

pub struct SendReq {
    pub dst: usize,
    pub tag: i32,
    pub ctx: u32,
    pub mode: Mode,
    /// The datatype, when the data is not one run of bytes at `addr`: it
    /// is then packed piece by piece as it is pushed.
    pub layout: Option<TypeRef>,
    pub addr: usize,
    pub len: usize,
    pub state: SendState,
    /// A cancel request is on its way to the receiver.
    pub cancel_pending: bool,
    pub status: Status,
    /// Space in the attached buffer (MPI_Bsend) to release on completion.
    pub bsend_block: Option<usize>,
    /// Bytes of a long message sent right behind its RTS (TCP).
    pub early: usize,
}

pub enum RecvState {
    Posted,
    /// Matched a long message whose data the sender pushes.
    Receiving {
        got: usize,
        len: usize,
    },
    /// Matched a long message; we read bytes `..split` ourselves and the
    /// sender writes `split..len` into our buffer (sender request `sreq`,
    /// data at `addr` in the sender). `read_first`: our read is done
    /// (else it is tried again once the sender has answered).
    Split {
        split: usize,
        len: usize,
        sreq: u64,
        addr: u64,
        read_first: bool,
    },
    Done,
}

pub struct RecvReq {
    pub buf: usize,
    pub count: usize,
    pub ty: TypeRef,
    /// Opaque label of the datatype, for type-mismatch reports.
    pub label: u32,
    pub ctx: u32,
    pub group: Group,
    pub state: RecvState,
    pub status: Status,
}

impl RecvReq {
    pub fn capacity(&self) -> usize {
        self.ty.size * self.count
    }
}

/// A receive to post: up to `count` items of `ty` into `buf`, from world
/// rank `src` (None: any) with tag `tag` (None: any) in context `ctx`.
#[derive(Clone)]
pub struct RecvArgs {
    pub buf: usize,
    pub count: usize,
    pub ty: TypeRef,
    pub src: Option<usize>,
    pub tag: Option<i32>,
    pub ctx: u32,
    /// The communicator's peers: statuses name the source's rank in it.
    pub group: Group,
    /// Opaque label of the datatype, for type-mismatch reports.
    pub label: u32,
}

impl RecvArgs {
    pub fn want(&self) -> Want {
        Want { ctx: self.ctx, src: self.src, tag: self.tag }
    }

    /// The request of this receive, not yet matched.
    pub fn into_request(self) -> RecvReq {
        RecvReq {
            buf: self.buf,
            count: self.count,
            ty: self.ty,
            label: self.label,
            ctx: self.ctx,
            group: self.group,
            state: RecvState::Posted,
            status: Status::default(),
        }
    }
}

/// What a persistent request starts each time (MPI_Send_init, ...).
#[derive(Clone)]
pub enum Template {
    Send {
        buf: usize,
        count: usize,
        ty: TypeRef,
        dst: Option<usize>,
        tag: i32,
        ctx: u32,
        mode: Mode,
        label: u32,
    },
    Recv(RecvArgs),
    /// A receive from MPI_PROC_NULL.
    NullRecv,
    /// A persistent collective (see `Starter`).
    Coll(std::sync::Arc<std::sync::Mutex<Starter>>),
    /// A persistent collective on arrival lines of its own: each start
    /// posts the part it makes then (`arrival::Lines`).
    Arrival(std::sync::Arc<super::arrival::Lines>),
}

impl From<super::SendArgs> for Template {
    fn from(a: super::SendArgs) -> Template {
        let super::SendArgs { buf, count, ty, dst, tag, ctx, mode, label, .. } = a;
        Template::Send { buf: buf as usize, count, ty, dst, tag, ctx, mode, label }
    }
}

/// What builds a persistent collective's schedule for an activation
/// that cannot run the one before again (none waits at its request's
/// `Persistent::place`): afresh, packing the send buffers as they are
/// then.
pub struct Starter {
    build: Box<dyn FnMut() -> crate::error::MpiResult<Schedule> + Send>,
}

impl Starter {
    pub fn new(build: impl FnMut() -> crate::error::MpiResult<Schedule> + Send + 'static) -> Starter {
        Starter { build: Box::new(build) }
    }

    /// A new schedule for the next activation.
    pub fn activation(&mut self) -> crate::error::MpiResult<Box<Schedule>> {
        Ok(Box::new((self.build)()?))
    }
}

pub struct Persistent {
    pub template: Template,
    /// The operation of the current activation, if started.
    pub active: Option<ReqId>,
    /// Where a persistent collective's schedule waits between its
    /// activations, if it can run again (`Schedule::can_restart`: it
    /// packed no send buffer when built): the next start runs it, with
    /// no lock taken and nothing built or shared (through the `Starter`'s
    /// lock and a shared slot, three locks and four more atomic
    /// operations a start and wait took most of a leaf's time in a
    /// 2-rank `MPI_Bcast_init` loop of 8 bytes).
    pub place: Option<super::schedule::Place>,
}

pub enum Request {
    Send(SendReq),
    Recv(RecvReq),
    /// Complete from the start (MPI_PROC_NULL peers, eager standard sends).
    Done(Status),
    Persistent(Persistent),
    /// A message taken by MPI_Mprobe, waiting for MPI_Mrecv; `group` maps
    /// its source to the communicator's ranks.
    Message(Unexpected, Group),
    /// A nonblocking multi-step operation (see `schedule`); None only
    /// while the engine advances it.
    Schedule(Option<Box<Schedule>>),
    /// MPI_Isendrecv(_replace): two requests of their own, done together
    /// (`Engine::peek_done`).
    Pair(Pair),
    /// MPI_Grequest_start: the program's own operation.
    General(General),
    /// A nonblocking collective on the arrival lines (`arrival`); None
    /// only while the engine advances it.
    Arrival(Option<Box<super::arrival::Arrival>>),
}

/// A generalized request's cancel function, told whether the operation
/// is complete: (error code, failure number), or zeros.
pub type CancelFn = std::sync::Arc<dyn Fn(bool) -> (i32, u32) + Send + Sync>;

/// A generalized request: done when the program calls
/// MPI_Grequest_complete; its status is what the program's query
/// function says, and its free function runs when it is freed. The
/// functions come as closures, and an error code of the program's as a
/// status's `error` and `failure` (`schedule::remember`).
pub struct General {
    pub query: std::sync::Arc<dyn Fn() -> Status + Send + Sync>,
    /// The free function: (error code, failure number), or zeros.
    pub free: std::sync::Arc<dyn Fn() -> (i32, u32) + Send + Sync>,
    pub cancel: CancelFn,
    pub complete: bool,
    /// MPI_Request_free came before MPI_Grequest_complete, which then
    /// frees it.
    pub freed: bool,
}

/// A receive and a send started together, done when both are; what it
/// reports is the receive's status. `hold`: the packed copy an
/// MPI_Isendrecv_replace sends from, kept until then.
pub struct Pair {
    pub recv: ReqId,
    pub send: ReqId,
    pub hold: Option<Vec<u8>>,
}

impl Request {
    pub fn is_done(&self) -> bool {
        match self {
            Request::Send(s) => s.state == SendState::Done && !s.cancel_pending,
            Request::Recv(r) => matches!(r.state, RecvState::Done),
            Request::Done(_) => true,
            Request::Persistent(_) | Request::Message(..) => false,
            Request::Schedule(s) => s.as_ref().is_none_or(|s| s.is_done()),
            // its parts are requests of their own: the engine looks at them
            Request::Pair(_) => false,
            Request::General(g) => g.complete,
            Request::Arrival(a) => a.as_ref().is_none_or(|a| a.is_done()),
        }
    }

    pub fn status(&self) -> Status {
        match self {
            Request::Send(s) => s.status,
            Request::Recv(r) => r.status,
            Request::Done(s) => *s,
            Request::Persistent(_) | Request::Message(..) | Request::Pair(_) => Status::default(),
            Request::General(g) => (g.query)(),
            Request::Schedule(s) => s.as_ref().map_or_else(Status::default, |s| s.status()),
            Request::Arrival(a) => a.as_ref().map_or_else(Status::default, |a| a.status()),
        }
    }
}

/// A slab: ids are reused after removal, lookups are an index.
#[derive(Default)]
pub struct Slab {
    items: Vec<Option<Request>>,
    free: Vec<ReqId>,
}

impl Slab {
    pub fn insert(&mut self, r: Request) -> ReqId {
        crate::runtime::helper::request_made();
        match self.free.pop() {
            Some(id) => {
                self.items[id as usize] = Some(r);
                id
            }
            None => {
                self.items.push(Some(r));
                (self.items.len() - 1) as ReqId
            }
        }
    }

    pub fn get(&self, id: ReqId) -> Option<&Request> {
        self.items.get(id as usize).and_then(|r| r.as_ref())
    }

    pub fn get_mut(&mut self, id: ReqId) -> Option<&mut Request> {
        self.items.get_mut(id as usize).and_then(|r| r.as_mut())
    }

    pub fn remove(&mut self, id: ReqId) -> Option<Request> {
        let r = self.items.get_mut(id as usize)?.take();
        if r.is_some() {
            self.free.push(id);
        }
        r
    }

    /// Remove a request, dropping it in place.
    pub fn discard(&mut self, id: ReqId) {
        if let Some(slot @ Some(_)) = self.items.get_mut(id as usize) {
            *slot = None;
            self.free.push(id);
        }
    }

    /// Whether any request is live.
    pub fn any_live(&self) -> bool {
        self.free.len() < self.items.len()
    }

    pub fn live(&self) -> impl Iterator<Item = (ReqId, &Request)> {
        self.items.iter().enumerate().filter_map(|(i, r)| r.as_ref().map(|r| (i as ReqId, r)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slab_reuses_ids() {
        let mut s = Slab::default();
        let a = s.insert(Request::Done(Status::default()));
        let b = s.insert(Request::Done(Status::default()));
        assert_ne!(a, b);
        assert!(s.remove(a).is_some());
        assert!(s.remove(a).is_none());
        assert!(s.get(a).is_none());
        assert_eq!(s.insert(Request::Done(Status::default())), a);
    }
}
