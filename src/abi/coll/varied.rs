//! Alltoallv, Alltoallw and Allgatherv through the mailboxes: the blocks
//! that fit in each rank's publication go there, the others in pieces or
//! as messages beside it (`shm::alltoallv`); contiguous ones without
//! per-rank parts built (`flat_short`, `flat_gatherv`).

use super::*;
use crate::coll::shm::Varied;

/// Alltoallv or Alltoallw through the mailboxes (`shm::alltoallv`): the
/// blocks that fit in each rank's publication go there, the others in
/// pieces or as messages of packed bytes, as the algorithms over
/// point-to-point send them. `send`: the parts, their buffer, and
/// whether it is the receive buffer (in place: every block is packed
/// first); `recv`: the parts and their buffer.
pub(super) fn varied_short(
    e: &mut crate::p2p::Engine,
    m: &shm::Members,
    stamp: u64,
    send: (&[Part], usize, bool),
    recv: (&[Part], usize),
) -> MpiResult<()> {
    let ((sends, sbuf, in_place), (recvs, rbuf)) = (send, recv);
    let me = m.me;
    // the blocks in a row: packed first when in place (the receives
    // overwrite them) or not contiguous, else the user's own
    let pack = |l: &Part| in_place || !l.ty.is_contiguous();
    let mut packed = Vec::new();
    if sends.iter().any(pack) {
        packed = sends.iter().map(|l| pack(l).then(|| l.pack(sbuf))).collect();
    }
    // a non-contiguous block that comes outside the publication lands
    // staged
    let mut staged: Vec<Option<Scratch>> = Vec::new();
    if recvs.iter().any(|l| !l.ty.is_contiguous()) {
        staged = recvs.iter().map(|l| (!l.ty.is_contiguous()).then(|| Scratch::zeroed(l.bytes()))).collect();
    }
    let mut v = VariedParts { m, stamp, sends, sbuf, packed, recvs, rbuf, staged, outside: 0 };
    // this rank's own block (at most its room, checked)
    unpacked(recvs[me].at(rbuf), &recvs[me].ty, v.block(me));
    let (posted, sizes_ok) = shm::alltoallv(e, m, stamp, &mut v)?;
    let first = waited(e, posted, sizes_ok);
    // what came outside the publications to a staged landing
    for (q, s) in v.staged.iter().enumerate().filter(|&(q, _)| v.outside & 1 << q != 0) {
        if let Some(s) = s {
            unpacked(recvs[q].at(rbuf), &recvs[q].ty, s);
        }
    }
    first
}

/// An alltoallv's or alltoallw's parts as `shm::alltoallv` moves them
/// (`varied_short`).
struct VariedParts<'a> {
    m: &'a shm::Members<'a>,
    stamp: u64,
    sends: &'a [Part],
    sbuf: usize,
    /// Per rank, its block packed (None: as it is in `sbuf`); empty when
    /// none is packed.
    packed: Vec<Option<Scratch>>,
    recvs: &'a [Part],
    rbuf: usize,
    /// Per rank, where its block lands staged when it comes outside the
    /// publication (None: in `rbuf`); empty when none is staged.
    staged: Vec<Option<Scratch>>,
    /// Bit q: rank q's block comes outside the publication (`landing`).
    outside: u64,
}

impl Varied for VariedParts<'_> {
    fn size(&self, r: usize) -> usize {
        self.sends[r].bytes()
    }

    fn block(&self, r: usize) -> &[u8] {
        match self.packed.get(r) {
            Some(Some(p)) => p,
            _ => as_is(&self.sends[r], self.sbuf),
        }
    }

    fn expect(&self, q: usize) -> usize {
        self.recvs[q].bytes()
    }

    fn land(&mut self, q: usize, data: &[u8]) {
        unpacked(self.recvs[q].at(self.rbuf), &self.recvs[q].ty, data);
    }

    fn landing(&mut self, q: usize) -> &mut [u8] {
        self.outside |= 1 << q;
        if let Some(Some(s)) = self.staged.get_mut(q) {
            return s;
        }
        // SAFETY: a contiguous part the receive buffer was checked to hold.
        unsafe { Block { addr: self.recvs[q].at(self.rbuf), len: self.recvs[q].bytes() }.bytes_mut() }
    }

    fn send(&mut self, e: &mut crate::p2p::Engine, r: usize) -> MpiResult<crate::p2p::request::ReqId> {
        send_aside(e, self.m, self.stamp, r, self.block(r))
    }

    fn recv(&mut self, e: &mut crate::p2p::Engine, q: usize) -> crate::p2p::request::ReqId {
        let (m, stamp) = (self.m, self.stamp);
        recv_aside(e, m, stamp, q, self.landing(q))
    }
}

/// The context and tag of an alltoallv's messages beside the
/// publications of operation `stamp`.
fn aside(stamp: u64) -> (u32, i32) {
    ((stamp >> 32) as u32, crate::p2p::mailbox::aside_tag(stamp as u32))
}

/// Post the message of `block` to rank r beside the publications of an
/// alltoallv (`Varied::send`).
fn send_aside(
    e: &mut crate::p2p::Engine,
    m: &shm::Members,
    stamp: u64,
    r: usize,
    block: &[u8],
) -> MpiResult<crate::p2p::request::ReqId> {
    let (ctx, tag) = aside(stamp);
    let a = crate::p2p::SendArgs {
        buf: block.as_ptr(),
        count: block.len(),
        ty: crate::datatype::byte(),
        dst: Some(m.group.world_rank(r)),
        tag,
        ctx,
        mode: crate::p2p::protocol::Mode::Standard,
        label: 0,
        sig: None,
    };
    // SAFETY: the block stays until the requests are waited for.
    unsafe { e.isend(a) }
}

/// Post the receive of rank q's block beside the publications of an
/// alltoallv into `landing` (`Varied::recv`).
fn recv_aside(
    e: &mut crate::p2p::Engine,
    m: &shm::Members,
    stamp: u64,
    q: usize,
    landing: &mut [u8],
) -> crate::p2p::request::ReqId {
    let (ctx, tag) = aside(stamp);
    let a = crate::p2p::request::RecvArgs {
        buf: landing.as_mut_ptr() as usize,
        count: landing.len(),
        ty: crate::datatype::byte(),
        src: Some(m.group.world_rank(q)),
        tag: Some(tag),
        ctx,
        group: m.group.clone(),
        label: 0,
    };
    // SAFETY: the landing stays until the request is waited for.
    unsafe { e.irecv(a) }
}

/// Wait for an alltoallv's messages beside the publications (`posted`):
/// `first`, the error of sizes that differ, or else the first a message
/// met.
fn waited(e: &mut crate::p2p::Engine, posted: Vec<crate::p2p::request::ReqId>, first: MpiResult<()>) -> MpiResult<()> {
    let mut first = first;
    for id in posted {
        let status = e.wait(id);
        if first.is_ok() {
            first = crate::abi::pt2pt::status_error(&status);
        }
    }
    first
}

/// One side of an Alltoallv, or the receive side of an Allgatherv, whose
/// datatype is contiguous (`flat_short`, `flat_gatherv`): rank r's block
/// is `counts[r]` items at `displs[r]` extents from `buf`, in a row; read
/// from the caller's arrays as needed, every rank's part checked first.
#[derive(Clone, Copy)]
struct FlatSide {
    buf: usize,
    counts: Arr,
    displs: Arr,
    size: usize,
    extent: isize,
}

impl FlatSide {
    /// The side, when `ty` is contiguous and every rank's part passes
    /// `parts`' checks (None: the general path reports what fails).
    fn new(n: usize, ty: c_int, counts: Arr, displs: Arr, buf: *const c_void) -> Option<FlatSide> {
        let ty = handles::committed(ty).ok().filter(|t| t.is_contiguous())?;
        let (counts, displs) = (counts.checked("", "").ok()?, displs.checked("", "").ok()?);
        if !parts_pass(n, &ty, counts, buf) {
            return None;
        }
        Some(FlatSide { buf: buf as usize, counts, displs, size: ty.size, extent: ty.extent })
    }

    fn bytes(&self, r: usize) -> usize {
        self.counts.get(r) as usize * self.size
    }

    /// Where rank r's block starts, in bytes from `buf`.
    fn offset(&self, r: usize) -> isize {
        self.displs.get(r) as isize * self.extent
    }

    /// Where rank r's block lies.
    fn at(&self, r: usize) -> Block {
        Block { addr: self.buf.wrapping_add_signed(self.offset(r)), len: self.bytes(r) }
    }

    /// Rank r's block of the send side.
    fn block<'a>(&self, r: usize) -> &'a [u8] {
        // SAFETY: checked (`new`) to be the caller's buffer over the part,
        // contiguous, apart from the receive buffer.
        unsafe { self.at(r).bytes() }
    }

    /// Rank r's block of the receive side.
    fn landing<'a>(&self, r: usize) -> &'a mut [u8] {
        // SAFETY: as `block`; the standard has the receive buffer's parts
        // written only once each.
        unsafe { self.at(r).bytes_mut() }
    }
}

/// An Alltoallv's blocks of contiguous datatypes as `shm::alltoallv`
/// moves them (`flat_short`): straight from and to the user's buffers.
struct FlatParts<'a> {
    m: &'a shm::Members<'a>,
    stamp: u64,
    send: FlatSide,
    recv: FlatSide,
}

impl Varied for FlatParts<'_> {
    fn size(&self, r: usize) -> usize {
        self.send.bytes(r)
    }

    fn block(&self, r: usize) -> &[u8] {
        self.send.block(r)
    }

    fn expect(&self, q: usize) -> usize {
        self.recv.bytes(q)
    }

    fn land(&mut self, q: usize, data: &[u8]) {
        // (a block of another size is never landed: `check_size`)
        let to = self.recv.landing(q);
        let k = data.len().min(to.len());
        to[..k].copy_from_slice(&data[..k]);
    }

    fn landing(&mut self, q: usize) -> &mut [u8] {
        self.recv.landing(q)
    }

    fn send(&mut self, e: &mut crate::p2p::Engine, r: usize) -> MpiResult<crate::p2p::request::ReqId> {
        send_aside(e, self.m, self.stamp, r, self.send.block(r))
    }

    fn recv(&mut self, e: &mut crate::p2p::Engine, q: usize) -> crate::p2p::request::ReqId {
        recv_aside(e, self.m, self.stamp, q, self.recv.landing(q))
    }
}

/// An Allgatherv whose receive datatype is contiguous, on an
/// intracommunicator of one host, through the mailboxes straight into
/// recvbuf, with no parts built (8 B at 2 ranks 0.23 -> 0.20 us); None
/// where it does not apply, or where an argument fails a check, which
/// the general path then reports.
pub(super) fn flat_gatherv(
    st: &mut State,
    comm: c_int,
    how: How,
    c: &Local,
    (sendbuf, sendcount, sendtype): (*const c_void, i64, c_int),
    (recvbuf, counts, displs, recvtype): (*mut c_void, Arr, Arr, c_int),
) -> Option<MpiResult<()>> {
    let (n, me) = (c.n, c.rank);
    if c.remote.is_some() || !matches!(how, How::Now) {
        return None;
    }
    let recv = FlatSide::new(n, recvtype, counts, displs, recvbuf)?;
    let b = recv.bytes(me);
    // this rank's part when not in place, of any datatype (packed into
    // its place)
    let send = if is_in_place(sendbuf) {
        None
    } else {
        let (count, ty) = check_count(sendcount, sendtype).ok()?;
        check_buf(sendbuf, count, &ty, "sendbuf").ok()?;
        if count * ty.size != b {
            return None;
        }
        Some((count, (!ty.is_contiguous()).then_some(ty)))
    };
    // each part's place: where it lies in recvbuf, from the lowest on
    let lo = (0..n).map(|r| recv.offset(r)).min().unwrap_or(0);
    let at = |r: usize| {
        let start = (recv.offset(r) - lo) as usize;
        start..start + recv.bytes(r)
    };
    let span = (0..n).map(|r| at(r).end).max().unwrap_or(0);
    // parts of one size may also go in pieces when they are long
    let equal = (0..n).all(|r| recv.bytes(r) == b).then_some(b);
    let total = (0..n).map(|r| recv.bytes(r)).sum::<usize>();
    let short = |e: &mut crate::p2p::Engine, m: &shm::Members, stamp| {
        // SAFETY: the parts lie in recvbuf (checked), apart from each
        // other and from sendbuf (the standard's rules).
        let all = unsafe { Block { addr: recv.buf.wrapping_add_signed(lo), len: span }.bytes_mut() };
        // a contiguous send buffer is handed on as this rank's part too:
        // its lines were not just written by this rank's core, so a reader
        // in place reads it there (`shm::allgatherv`)
        let mut own = None;
        match &send {
            // SAFETY: sendbuf holds `count` items (checked), `b` bytes.
            Some((count, Some(ty))) => unsafe { pack::pack(ty, *count, sendbuf as *const u8, &mut all[at(me)]) },
            Some((_, None)) => {
                // SAFETY: as above, contiguous.
                let part = unsafe { Block { addr: sendbuf as usize, len: b }.bytes() };
                all[at(me)].copy_from_slice(part);
                own = Some(part);
            }
            None => {}
        }
        shm::allgatherv(e, m, stamp, all, at, equal, own)
    };
    let longest = (0..n).map(|r| recv.bytes(r)).max().unwrap_or(0);
    mailbox_path(st, comm, how, shm::fits(total, shm::allgatherv_form(n, equal, longest)), short)
}

/// An Alltoallv of contiguous datatypes on an intracommunicator of one
/// host through the mailboxes, as `varied_short` does it but with no
/// parts built (their datatype references and vectors took a third of an
/// 8-byte call's time at 2 ranks); None where it does not apply, or where
/// an argument fails a check, which the general path then reports.
pub(super) fn flat_short(
    st: &mut State,
    comm: c_int,
    how: How,
    c: &Local,
    (sendbuf, sendcounts, sdispls, sendtype): (*const c_void, Arr, Arr, c_int),
    (recvbuf, recvcounts, rdispls, recvtype): (*mut c_void, Arr, Arr, c_int),
) -> Option<MpiResult<()>> {
    let (n, me) = (c.n, c.rank);
    let applies = matches!(how, How::Now) && c.remote.is_none() && n <= shm::VARIED_MAX_RANKS;
    if !applies || !coll::tuning::alltoall_auto() || is_in_place(sendbuf) {
        return None;
    }
    let recv = FlatSide::new(n, recvtype, recvcounts, rdispls, recvbuf)?;
    let send = FlatSide::new(n, sendtype, sendcounts, sdispls, sendbuf)?;
    if send.bytes(me) > recv.bytes(me) {
        return None;
    }
    let short = |e: &mut crate::p2p::Engine, m: &shm::Members, stamp| {
        // this rank's own block (at most its room, checked)
        let own = send.block(me);
        recv.landing(me)[..own.len()].copy_from_slice(own);
        let mut v = FlatParts { m, stamp, send, recv };
        let (posted, sizes_ok) = shm::alltoallv(e, m, stamp, &mut v)?;
        waited(e, posted, sizes_ok)
    };
    mailbox_path(st, comm, how, coll::tuning::shm_max() > 0, short)
}
