//! Short collectives of the whole world on one host by arrival lines:
//! each rank has two lines of its own in the segment for its blocking
//! ones (`Segment::post_arrival`, `LineSet::Blocking`); for its n-th such
//! collective it writes its
//! part, the operation and the part's shape on line n % 2 and n last, and
//! every rank takes each other's part from there once that rank's line
//! shows n. A barrier is one with no part; an allreduce, allgather or
//! alltoall of a part up to a line's bytes (`ARRIVAL_BYTES`) the same
//! with one, and an alltoallv with its part or (empty) word that its part
//! is in its mailboxes (`coll::shm::alltoallv`): every rank reads every
//! other's part, so a rank that posts its n-th part knows every reader of
//! its (n-2)-th, which went on the same line, is done with it (each
//! posted its (n-1)-th after reading it, and this rank read that). No
//! slot, published count or read mark: a collective costs a rank one line
//! per peer, as the machine's floor (`c-tests/bench/floor.c`,
//! `core_barrier`) does, where a publication in the short mailboxes costs
//! a slot's header, a count of publications and a read mark.
//!
//! It serves the blocking collectives of every communicator whose group
//! is the whole world, in any order (MPI_COMM_WORLD, its duplicates, and
//! the splits, Cartesian communicators and creations that keep every
//! rank), with one count: each of these collectives needs every rank's
//! part before any rank's ends, so a program whose blocking collectives
//! on two of them do not come in one order on every rank deadlocks by the
//! standard, and in a correct one the
//! n-th of every rank is the same operation. A part is taken in the
//! communicator's rank order, whatever the world ranks behind it. A rank
//! that called another collective is noticed from either side: the
//! operation or the shape on its line differs, or its part of the
//! operation is in its mailboxes or comes as messages (and a rank waiting
//! in the mailboxes finds the operation on the arrival lines).
//!
//! The nonblocking ones of a whole-world communicator go on two lines
//! more, counted on their own, behind a request (`Arrival`,
//! `Engine::start_arrival`). A rank starts one without waiting for
//! anyone, so ranks may start it before or after a collective of another
//! communicator, in a correct program (MPI 4.0 §6.12 orders collectives
//! per communicator): one count for both would pair different
//! operations. So MPI_COMM_WORLD and up to `STARTED - 1` more such
//! communicators at a time have lines of their own (`LineSet::Started`,
//! `Comm::lines`); those of other communicators go as messages. A set is
//! agreed free on every rank when its communicator is made, beside the
//! context id (`comm::group::ContextIds`), so the lines have one holder
//! at a time everywhere, and each rank started every collective of the
//! holder before it, which it freed, before it took part in making the
//! next: the lines' count runs on across holders, alike on every rank. Ranks may
//! even start persistent ones in different orders (§6.13), but each one's
//! starts come one after another: the first `KEPT` persistent ones made
//! on the holders of each started set's lines get two lines each
//! (`LineSet::Kept`), on which its n-th start is the n-th part; a later
//! one gets the lines of one that every rank has freed, agreed at its
//! making (`Engine::agree_kept_lines`), or goes as messages. Each set's
//! open collectives move on in the order they started, the sets apart
//! (ranks may start collectives of two sets in different orders). A
//! part is posted as it starts, or, while this rank's collective on
//! those lines before it still lacks parts, by the progress that takes
//! them, and it completes once every part is there. A rank that took the operation as
//! messages (a nonblocking collective of another kind) is noticed now and
//! then while it waits; it gives the mailboxes up in the operation, which
//! that rank's schedule notices in turn (`Schedule::named`). A rank that
//! posted the operation on another set of its lines (a blocking
//! collective where the others started one, or the reverse) is noticed
//! too.

use super::Engine;
use crate::comm::Group;
use crate::error::{ErrorClass, MpiError, MpiResult};
pub use crate::transport::shm::{LineSet, ARRIVAL_BYTES, KEPT, STARTED};

/// The `LineSet::Started` sets a communicator made after MPI_Init may
/// get, a bit each: all but MPI_COMM_WORLD's (0) (`comm::group::ContextIds`
/// agrees them).
pub const SPARE_LINE_SETS: u32 = ((1 << STARTED) - 1) & !1;

/// The most ranks whose collectives go on the arrival lines: each rank
/// reads every other's line (as the mailboxes' short allreduces and
/// barriers read every other's part up to as many ranks, beyond which they
/// meet at one rank, `coll::shm`).
const MOST_RANKS: usize = 8;

/// Which collective a part on an arrival line is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Barrier = 1,
    Allreduce = 2,
    Allgather = 3,
    Alltoall = 4,
    /// (and Alltoallw, which takes the same path)
    Alltoallv = 5,
    /// The agreement on lines for a persistent collective being made
    /// (`Engine::agree_kept_lines`): a part of one byte.
    Kept = 6,
}

impl Kind {
    fn of(shape: u64) -> Option<Kind> {
        [Kind::Barrier, Kind::Allreduce, Kind::Allgather, Kind::Alltoall, Kind::Alltoallv, Kind::Kept]
            .into_iter()
            .find(|&k| k as u64 == shape >> 32)
    }

    /// Every rank posts its part of it on its line, whatever the part's
    /// size (a barrier has none; an alltoallv's too long for a line is an
    /// empty one there, its blocks in its mailboxes): a rank found to
    /// have taken the mailboxes or messages instead is in another
    /// collective, not one of another size.
    fn posts_at_any_size(self) -> bool {
        matches!(self, Kind::Barrier | Kind::Alltoallv)
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Barrier => "MPI_Barrier",
            Kind::Allreduce => "MPI_Allreduce",
            Kind::Allgather => "MPI_Allgather",
            Kind::Alltoall => "MPI_Alltoall",
            Kind::Alltoallv => "MPI_Alltoallv (or MPI_Alltoallw)",
            Kind::Kept => "the initialization of a persistent collective (MPI_Allreduce_init, ...)",
        }
    }
}

/// What a line says of its part besides the operation: its collective and
/// its bytes.
fn shape(kind: Kind, bytes: usize) -> u64 {
    (kind as u64) << 32 | bytes as u64
}

/// MPI_ERR_OTHER: world rank `r` called the collective `theirs` where this
/// rank called `ours` (None: another one than the other's).
fn out_of_order(r: usize, theirs: Option<Kind>, ours: Option<Kind>) -> MpiError {
    let name = |k: Option<Kind>| k.map_or("another collective", Kind::name);
    MpiError::new(
        ErrorClass::Other,
        format!("world rank {r} called {} where this rank called {}: the ranks of a communicator must call the same collectives in the same order", name(theirs), name(ours)),
    )
}

/// The error of a rank that waits in the mailboxes for world rank
/// `world`'s part of an operation `world` posted on its arrival line
/// instead, as a collective of `shape`'s kind.
pub fn posted_instead(world: usize, shape: u64) -> MpiError {
    match Kind::of(shape) {
        Some(k) if !k.posts_at_any_size() => MpiError::new(
            ErrorClass::Count,
            format!("world rank {world} took part in this collective with a part short enough for its arrival line, where this rank's went through the mailboxes: the ranks passed counts or datatypes of different sizes"),
        ),
        k => out_of_order(world, k, None),
    }
}

/// The error of a rank whose part of a collective `kind` of `bytes` went on
/// its arrival line where world rank `r` of the world's `n` published its
/// part in its mailboxes, of `there` bytes, or (None) sent it as
/// messages: larger than a line takes, if it is the same collective;
/// else another collective.
fn went_elsewhere(r: usize, kind: Kind, bytes: usize, there: Option<usize>, n: usize) -> MpiError {
    // (an alltoall's publication leaves its writer's own block out)
    let line = |len: usize| if kind == Kind::Alltoall { len / n.saturating_sub(1).max(1) * n } else { len };
    if kind.posts_at_any_size() || there.is_some_and(|len| line(len) <= ARRIVAL_BYTES) {
        return out_of_order(r, None, Some(kind));
    }
    MpiError::new(
        ErrorClass::Truncate,
        format!("world rank {r} took part in this collective through the mailboxes or as messages, which it does when its part is too long for its arrival line, where this rank's part of {bytes} bytes went on its line: the ranks passed counts or datatypes of different sizes"),
    )
}

impl Engine {
    /// Whether a short collective of `group`, whose ranks are all on this
    /// host, with parts of `bytes`, goes on the arrival lines: the group is
    /// the whole world (a communicator's members are distinct world ranks,
    /// so as many as the world are all of it, in some order), of at most
    /// `MOST_RANKS`, and the part fits a line.
    pub fn by_arrivals(&self, group: &Group, bytes: usize) -> bool {
        bytes <= ARRIVAL_BYTES && self.size <= MOST_RANKS && group.size() == self.size
    }

    /// Whether this rank's next collective on the arrival lines of set
    /// `set` is one in which a rank found another's part on its line to be
    /// of another collective (the mailboxes and lines given up since): it
    /// still goes on the lines, so that this rank too finds out, where as
    /// messages it would wait for parts that never come (when the ranks
    /// that found out were in another communicator's collective, whose
    /// operation the give-up lets through). (A started one is found to
    /// differ only once every part of it is there, this rank's too: no
    /// later one meets it.)
    pub fn meets_failed_arrival(&self, set: LineSet) -> bool {
        self.seg.failed_arrival() == Some((set, self.arrivals[set.index()] + 1))
    }

    /// This rank's part `mine` of blocking collective `kind`, operation
    /// `stamp` (as a short collective's, `coll::shm::stamp`) of a
    /// communicator of `group` (`by_arrivals`), posted on its arrival line
    /// (`LineSet::Blocking`); then every
    /// rank's part, in the communicator's rank order, to `take(rank in the
    /// communicator, part)` (this rank's is `mine`). The first error of
    /// `take` is the result, once every part is taken; a rank in another
    /// collective ends the wait at once (and gives the mailboxes up, so
    /// that no later collective uses them, nor the lines).
    pub fn arrive(
        &mut self,
        group: &Group,
        stamp: u64,
        kind: Kind,
        mine: &[u8],
        take: impl FnMut(usize, &[u8]) -> MpiResult<()>,
    ) -> MpiResult<()> {
        self.post_part(stamp, kind, mine);
        self.take_parts(group, stamp, kind, mine, take)
    }

    /// The first half of `arrive`: this rank's part `mine` posted on its
    /// arrival line. What this rank does before `take_parts` (an
    /// alltoallv's publications in its mailboxes) comes after the part
    /// for the others.
    pub fn post_part(&mut self, stamp: u64, kind: Kind, mine: &[u8]) {
        self.post_line(LineSet::Blocking, stamp, kind, mine);
    }

    /// This rank's next part of set `set`, its earlier parts there all
    /// taken.
    fn post_line(&mut self, set: LineSet, stamp: u64, kind: Kind, mine: &[u8]) {
        self.arrivals[set.index()] += 1;
        self.seg.post_arrival(set, self.arrivals[set.index()], stamp, shape(kind, mine.len()), mine);
        let local = self.seg.me;
        self.seg.ring_bells((0..self.seg.nranks).filter(|&q| q != local));
    }

    /// The second half of `arrive`: every rank's part of the collective
    /// this rank posted `mine` of last (`post_part`), to `take`.
    pub fn take_parts(
        &mut self,
        group: &Group,
        stamp: u64,
        kind: Kind,
        mine: &[u8],
        mut take: impl FnMut(usize, &[u8]) -> MpiResult<()>,
    ) -> MpiResult<()> {
        let (set, n) = (LineSet::Blocking, self.arrivals[LineSet::Blocking.index()]);
        let mut first: MpiResult<()> = Ok(());
        let mut part = [0u8; ARRIVAL_BYTES];
        for (c, r) in (0..group.size()).map(|c| (c, group.world_rank(c))) {
            if r == self.rank {
                first = first.and(take(c, mine));
                continue;
            }
            let q = self.local_index(r);
            if self.seg.arrival_n(q, set, n) < n {
                let what = || format!("world rank {r} to post its part of collective {n} of the world ({stamp:#x})");
                let astray = |e: &Engine| e.went_astray((q, r), (set, n), stamp, kind, mine.len());
                let elsewhere = self.wait_parked(&what, |seg| seg.arrival_n(q, set, n) >= n, astray, q, stamp)?;
                if let Some(error) = elsewhere {
                    self.give_up_mailboxes(stamp);
                    return Err(error);
                }
            }
            let len = self.posted_part(r, (set, n), stamp, kind, &mut part)?;
            first = first.and(take(c, &part[..len]));
        }
        first
    }

    /// Whether local rank `q` (world rank `r`), whose `n`th part of set
    /// `set`, of operation `stamp`, is not on its line, took part in it
    /// another way (another collective than this rank's `kind` of
    /// `bytes`): in its mailboxes, as messages, or on its other set of
    /// lines; or will never post it, having called MPI_Finalize. Some(the
    /// error) then.
    fn went_astray(
        &self,
        (q, r): (usize, usize),
        (set, n): (LineSet, u64),
        stamp: u64,
        kind: Kind,
        bytes: usize,
    ) -> Option<MpiError> {
        let (ctx, tag) = ((stamp >> 32) as u32, super::mailbox::user_tag(stamp as u32));
        let there = self.published_operation(q, stamp).map(Some).or_else(|| self.messages_of(ctx, tag).map(|_| None));
        if let Some(there) = there {
            return Some(went_elsewhere(r, kind, bytes, there, self.size));
        }
        // (on this set, it would be there already)
        if let Some(shape) = self.seg.posted_arrival(q, stamp, &self.arrivals, set.others()) {
            return Some(out_of_order(r, Kind::of(shape), Some(kind)));
        }
        self.finalized_instead(q, |seg| seg.arrival_n(q, set, n) >= n, "taking part in this collective")
    }

    /// World rank `r`'s `n`th part of set `set`, on its line, into
    /// `part`: its bytes, or (the part of another operation or collective)
    /// the error, the lines and mailboxes given up.
    fn posted_part(
        &self,
        r: usize,
        (set, n): (LineSet, u64),
        stamp: u64,
        kind: Kind,
        part: &mut [u8; ARRIVAL_BYTES],
    ) -> MpiResult<usize> {
        let (op, theirs) = self.seg.arrival_part(self.local_index(r), set, n, part);
        if op != stamp || Kind::of(theirs) != Some(kind) {
            // (every rank that posted its nth part went this way; one
            // not yet there meets it, `meets_failed_arrival`)
            self.seg.fail_arrival(set, n);
            self.give_up_mailboxes(stamp);
            return Err(out_of_order(r, Kind::of(theirs).filter(|_| op == stamp), Some(kind)));
        }
        Ok((theirs as u32 as usize).min(ARRIVAL_BYTES))
    }
}

/// What takes a nonblocking collective's parts once all are there, as
/// `Engine::arrive`'s `take` does (rank in the communicator, part).
pub type Take = Box<dyn FnMut(usize, &[u8]) -> MpiResult<()> + Send>;

/// What starts a persistent collective on its arrival lines
/// (`LineSet::Kept`, `request::Template::Arrival`) at every start: this
/// rank's part as its buffer holds it then, and what takes the parts.
pub struct Lines {
    pub set: LineSet,
    pub group: Group,
    pub stamp: u64,
    pub kind: Kind,
    /// The part's bytes, and what writes them.
    pub bytes: usize,
    pub part: Part,
    pub take: Box<dyn Fn() -> Option<Take> + Send + Sync>,
}

/// What writes a rank's part of a collective on the arrival lines from
/// its buffer (`Lines`).
pub type Part = Box<dyn Fn(&mut [u8]) + Send + Sync>;

impl Engine {
    /// Start what `lines` describes (`start_arrival`): its request.
    pub fn start_lines(&mut self, lines: &Lines) -> super::request::ReqId {
        let (group, part) = (lines.group.clone(), |to: &mut [u8]| (lines.part)(to));
        self.start_arrival((lines.set, group), lines.stamp, (lines.kind, lines.bytes), part, (lines.take)())
    }

    /// Lines of its own for a persistent collective made now on a
    /// whole-world communicator whose nonblocking ones go on `started`
    /// (`LineSet::Started`), if any are left (every rank makes a
    /// communicator's persistent ones in one order, and the holders of
    /// those lines come one after another alike everywhere, so all give a
    /// collective the same lines).
    pub fn kept_lines(&mut self, started: LineSet) -> Option<LineSet> {
        let LineSet::Started(s) = started else { return None };
        let k = self.kept_lines[s as usize];
        (k < KEPT).then(|| {
            self.kept_lines[s as usize] += 1;
            LineSet::Kept(s, k as u8)
        })
    }

    /// Lines for a persistent collective made now on a whole-world
    /// communicator of `group` whose nonblocking ones go on `started`, once
    /// `kept_lines` has none left: a set every rank freed the persistent
    /// collective of (`free_kept_lines`), agreed by operation `stamp`, a
    /// blocking collective on the arrival lines in which each rank ANDs
    /// the others' freed sets with its own (None: no set is free on every
    /// rank). Initializing a persistent collective is nonlocal and follows
    /// the ordering rules of the blocking collectives (MPI 4.0 §6.13), so
    /// every rank comes here for the same one in the same place, and all
    /// take the same set. Each rank started the freed one as often as
    /// every other and read every part of every start before freeing it:
    /// its lines are read by no one, and their count runs on alike on
    /// every rank.
    pub fn agree_kept_lines(&mut self, group: &Group, stamp: u64, started: LineSet) -> MpiResult<Option<LineSet>> {
        let LineSet::Started(s) = started else { return Ok(None) };
        let mine = self.kept_freed[s as usize];
        let mut agreed = mine;
        self.arrive(group, stamp, Kind::Kept, &[mine], |_, part| {
            agreed &= part.first().copied().unwrap_or(0);
            Ok(())
        })?;
        let k = agreed.trailing_zeros();
        if k >= u8::BITS {
            return Ok(None);
        }
        self.kept_freed[s as usize] &= !(1 << k);
        Ok(Some(LineSet::Kept(s, k as u8)))
    }

    /// This rank freed the persistent collective that had lines `set`,
    /// inactive (`agree_kept_lines` may give them to another; one freed
    /// while active keeps them, its last start still under way).
    pub fn free_kept_lines(&mut self, set: LineSet) {
        if let LineSet::Kept(s, k) = set {
            self.kept_freed[s as usize] |= 1 << k;
        }
    }
}

/// A nonblocking collective of a whole-world communicator on its
/// arrival lines (`LineSet::Started`), or a start of a persistent one on
/// its own lines (`LineSet::Kept`) (`Engine::start_arrival`). Its part
/// goes on this rank's line once every part of this rank's collective
/// before it on those lines is taken (the line it goes on held the one
/// before that, which every reader is then done with, as for `arrive`; a
/// persistent one's start before it is complete, so it goes at once);
/// the request completes once every part is there and taken.
pub struct Arrival {
    /// Its lines.
    set: LineSet,
    /// Its number among this rank's collectives on them (0: not posted
    /// yet).
    n: u64,
    stamp: u64,
    kind: Kind,
    group: Group,
    mine: [u8; ARRIVAL_BYTES],
    len: usize,
    take: Option<Take>,
    /// The members whose parts were seen there, in the communicator's
    /// rank order (they are taken once all are).
    seen: usize,
    /// Looks at a missing part; a look for its rank in another
    /// collective once in `waits::ASTRAY_EVERY`.
    looks: u32,
    error: Option<MpiError>,
    failure: u32,
    done: bool,
}

impl Arrival {
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// What it waits for, for the SIGUSR2 dump.
    pub fn describe(&self) -> String {
        let posted = match self.n {
            0 => "not posted yet: this rank's collective on the lines before it lacks parts".to_string(),
            n => format!(
                "posted as this rank's collective {n} on the lines, {} of {} parts there",
                self.seen,
                self.group.size()
            ),
        };
        format!(
            "{} of operation {:#x} on the arrival lines, nonblocking or persistent: {posted}",
            self.kind.name(),
            self.stamp
        )
    }

    pub fn status(&self) -> super::request::Status {
        super::request::Status {
            source: super::PROC_NULL,
            tag: super::ANY_TAG,
            error: self.error.as_ref().map_or(0, |e| e.class.code()),
            failure: self.failure,
            ..Default::default()
        }
    }
}

impl Engine {
    /// Start collective `kind` of a whole-world communicator (`group`,
    /// `by_arrivals`), operation `stamp`, with this rank's part of `bytes`
    /// (at most a line's) as `part` writes it, on the arrival lines of
    /// `set` (the communicator's `LineSet::Started`, or a persistent one's
    /// `LineSet::Kept`) without waiting: its request, complete once every
    /// rank's part is there and `take` has taken them all. Its part is posted now if this rank's
    /// earlier collectives on those lines are all taken, else by the
    /// progress that takes them (in the order they were started).
    pub fn start_arrival(
        &mut self,
        (set, group): (LineSet, Group),
        stamp: u64,
        (kind, bytes): (Kind, usize),
        part: impl FnOnce(&mut [u8]),
        take: Option<Take>,
    ) -> super::request::ReqId {
        let mut mine = [0u8; ARRIVAL_BYTES];
        part(&mut mine[..bytes]);
        let a = Arrival {
            set,
            n: 0,
            stamp,
            kind,
            group,
            mine,
            len: bytes,
            take,
            seen: 0,
            looks: 0,
            error: None,
            failure: 0,
            done: false,
        };
        let id = self.requests.insert(super::request::Request::Arrival(Some(Box::new(a))));
        self.open_arrivals.push_back((set, id));
        self.advance_arrivals();
        id
    }

    /// Move the open collectives on the arrival lines on, each set's in
    /// the order they were started (post the first one's part if not yet,
    /// take its parts once all are there, then the next one's), the sets
    /// apart: ranks may start collectives of two sets in different orders.
    pub(super) fn advance_arrivals(&mut self) {
        // the sets whose first open collective still lacks parts, a bit each
        const _: () = assert!(crate::transport::shm::SETS <= 32);
        let mut waiting = 0u32;
        let mut i = 0;
        while let Some(&(set, id)) = self.open_arrivals.get(i) {
            let bit = 1 << set.index();
            if waiting & bit == 0 && self.advance_request(id) != Some(false) {
                self.open_arrivals.remove(i);
                continue;
            }
            waiting |= bit;
            i += 1;
        }
    }

    /// One look at the open collective on the lines of request `id`:
    /// whether it is complete (None: the request is gone).
    fn advance_request(&mut self, id: super::request::ReqId) -> Option<bool> {
        let mut a = match self.requests.get_mut(id) {
            Some(super::request::Request::Arrival(a)) => a.take()?,
            _ => return None,
        };
        let done = self.advance_arrival(&mut a);
        if let Some(super::request::Request::Arrival(slot)) = self.requests.get_mut(id) {
            *slot = Some(a);
        }
        Some(done)
    }

    /// One look at `a`, the first open collective on its lines: whether
    /// it is complete.
    fn advance_arrival(&mut self, a: &mut Arrival) -> bool {
        let set = a.set;
        if a.n == 0 {
            self.post_line(set, a.stamp, a.kind, &a.mine[..a.len]);
            a.n = self.arrivals[set.index()];
        }
        let n = a.n;
        while a.seen < a.group.size() {
            let r = a.group.world_rank(a.seen);
            if r != self.rank {
                let q = self.local_index(r);
                if self.seg.arrival_n(q, set, n) < n {
                    a.looks = a.looks.wrapping_add(1);
                    if a.looks.is_multiple_of(super::waits::ASTRAY_EVERY) {
                        if let Some(e) = self.arrival_astray(a, q, r) {
                            self.fail_arrival_request(a, e);
                            return true;
                        }
                    }
                    return false;
                }
            }
            a.seen += 1;
        }
        // every part is there: take them in the communicator's order
        let mut part = [0u8; ARRIVAL_BYTES];
        let mut first: MpiResult<()> = Ok(());
        for c in 0..a.group.size() {
            let r = a.group.world_rank(c);
            let got = if r == self.rank {
                &a.mine[..a.len]
            } else {
                match self.posted_part(r, (set, n), a.stamp, a.kind, &mut part) {
                    Ok(len) => &part[..len],
                    Err(e) => {
                        self.fail_arrival_request(a, e);
                        return true;
                    }
                }
            };
            if let Some(take) = a.take.as_mut() {
                first = first.and(take(c, got));
            }
        }
        if let Err(e) = first {
            self.fail_arrival_request(a, e);
        }
        a.done = true;
        true
    }

    /// World rank `r` (local `q`), whose part of `a` is not on its line,
    /// took part in its operation another way (the mailboxes, messages or
    /// the other lines: another collective), or a member gave the
    /// mailboxes up in it: the error, and the mailboxes given up.
    fn arrival_astray(&mut self, a: &Arrival, q: usize, r: usize) -> Option<MpiError> {
        if let Some(error) = self.went_astray((q, r), (a.set, a.n), a.stamp, a.kind, a.len) {
            self.give_up_mailboxes(a.stamp);
            return Some(error);
        }
        self.given_up_in(a.stamp)
    }

    fn fail_arrival_request(&mut self, a: &mut Arrival, e: MpiError) {
        if a.error.is_none() {
            a.failure = super::schedule::remember(e.clone());
            a.error = Some(e);
        }
        a.done = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::p2p::waits::tests::engine;

    /// The first `KEPT` persistent collectives of a set's holders get
    /// fresh lines; after that only lines every rank freed (here the one
    /// rank), the lowest first, each once, and none once all are taken
    /// again. A set started elsewhere has nothing to give.
    #[test]
    fn kept_lines_come_fresh_then_freed_ones_lowest_first() {
        let mut e = engine();
        let (world, started) = (Group::World(1), LineSet::Started(0));
        let fresh: Vec<_> = std::iter::from_fn(|| e.kept_lines(started)).collect();
        assert_eq!(fresh, (0..KEPT as u8).map(|k| LineSet::Kept(0, k)).collect::<Vec<_>>());
        let mut op = 0;
        let mut agree = |e: &mut Engine| {
            op += 1;
            e.agree_kept_lines(&world, crate::coll::shm::stamp(5, op), started).unwrap()
        };
        assert_eq!(agree(&mut e), None, "none freed yet");
        e.free_kept_lines(LineSet::Kept(0, 4));
        e.free_kept_lines(LineSet::Kept(0, 1));
        e.free_kept_lines(LineSet::Kept(1, 2));
        assert_eq!(agree(&mut e), Some(LineSet::Kept(0, 1)));
        assert_eq!(agree(&mut e), Some(LineSet::Kept(0, 4)));
        assert_eq!(agree(&mut e), None, "each given once; another set's stays its own");
        assert_eq!(e.kept_lines(LineSet::Started(1)), Some(LineSet::Kept(1, 0)));
        assert_eq!(e.agree_kept_lines(&world, crate::coll::shm::stamp(5, 9), LineSet::Blocking).unwrap(), None);
    }
}
