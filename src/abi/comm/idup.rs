//! MPI_Comm_idup: a duplicate whose context-id agreement runs behind a
//! request, never blocking.

use super::*;

/// Context id placeholder of a communicator whose MPI_Comm_idup has not
/// completed: it matches no traffic.
const PENDING_CID: u32 = 0x7fff_fff0;

/// Tags of MPI_Comm_idup agreements on the parent's collective context:
/// one per outstanding idup of the same parent (the blocking collectives
/// use 1..5).
const TAG_IDUP: i32 = 100;
const IDUP_TAGS: u32 = 1 << 20;

/// The outcome of an agreement: the context id and the set of arrival
/// lines taken (`ContextIds::take_set`), or None if no id was found.
type Outcome = std::sync::Arc<std::sync::Mutex<Option<Option<(u32, Option<u8>)>>>>;

/// An MPI_Comm_idup's context-id agreement (MPI_Comm_idup never blocks, so
/// it cannot take a snapshot of the free ids and decide later as the
/// blocking calls do: agreements in flight would pick the same id). Each
/// round, every member sets aside the ids of one word of the id space
/// that are free for it (no other agreement can take them meanwhile), the
/// sets meet by AND at rank 0 and come back; a common id is taken, the
/// rest given back, and if there is none the next round tries the next
/// word. The words visited start at a place derived from the parent and
/// the idup's number, the same on every member. A duplicate of the
/// whole world also sets aside, in the first round, the sets of arrival
/// lines free for it, which meet the same way (a second word); once an id
/// is found it takes the lowest set common to all, if any, and gives the
/// rest back.
struct IdupPlan {
    cids: std::sync::Arc<std::sync::Mutex<ContextIds>>,
    /// World ranks of the parent's members; this process is `rank`.
    members: Vec<usize>,
    rank: usize,
    first_word: usize,
    outcome: Outcome,
    /// The word and the bits this member set aside in the current round.
    held: std::sync::Arc<std::sync::Mutex<(usize, u32)>>,
    /// Whether the duplicate is of the whole world (it may take a set of
    /// lines), and the sets this member set aside and those common to
    /// all, from the first round.
    whole: bool,
    sets: std::sync::Arc<std::sync::Mutex<(u32, u32)>>,
    /// For an intercommunicator: the other group's leader (world rank),
    /// whose group's sets our leader meets halfway.
    remote_leader: Option<usize>,
}

impl IdupPlan {
    fn round(self: &std::sync::Arc<Self>, k: usize) -> Vec<crate::p2p::schedule::Step> {
        use crate::p2p::schedule::{Buf, Step, Transfer};
        let n = self.members.len();
        let word = (self.first_word + k) % ContextIds::WORDS;
        let me = self.clone();
        let reserve: crate::p2p::schedule::Compute = Box::new(move |b: &mut [Vec<u8>]| {
            let mut ids = me.cids.lock().unwrap_or_else(|p| p.into_inner());
            let bits = ids.reserve_word(word);
            *me.held.lock().unwrap_or_else(|p| p.into_inner()) = (word, bits);
            let sets = if k == 0 && me.whole { ids.reserve_sets() } else { 0 };
            if k == 0 {
                me.sets.lock().unwrap_or_else(|p| p.into_inner()).0 = sets;
            }
            b[0][..4].copy_from_slice(&bits.to_ne_bytes());
            b[0][4..].copy_from_slice(&sets.to_ne_bytes());
            Ok(vec![])
        });
        let me = self.clone();
        let at = usize::from(self.rank != 0);
        let decide: crate::p2p::schedule::Compute = Box::new(move |b: &mut [Vec<u8>]| {
            let common = u32::from_ne_bytes(b[at][..4].try_into().unwrap());
            let (w, mine) = *me.held.lock().unwrap_or_else(|p| p.into_inner());
            // (the ids, then the sets: the order `reserve` locks them in)
            let mut ids = me.cids.lock().unwrap_or_else(|p| p.into_inner());
            let mut sets = me.sets.lock().unwrap_or_else(|p| p.into_inner());
            if k == 0 {
                sets.1 = u32::from_ne_bytes(b[at][4..8].try_into().unwrap());
            }
            ids.unreserve(w, mine);
            if common != 0 {
                let id = w as u32 * 32 + common.trailing_zeros();
                ids.take(id);
                let set = ids.take_set(sets.1);
                ids.unreserve_sets(sets.0);
                *me.outcome.lock().unwrap_or_else(|p| p.into_inner()) = Some(Some((id, set)));
                return Ok(vec![]);
            }
            if k + 1 >= 2 * ContextIds::WORDS {
                ids.unreserve_sets(sets.0);
                *me.outcome.lock().unwrap_or_else(|p| p.into_inner()) = Some(None);
                return Ok(vec![]);
            }
            drop((sets, ids));
            Ok(me.round(k + 1))
        });
        if self.rank == 0 {
            // AND buffers 1..=last into buffer 0
            let and = |last: usize| -> crate::p2p::schedule::Compute {
                Box::new(move |b: &mut [Vec<u8>]| {
                    let (first, others) = b.split_at_mut(1);
                    others[..last].iter().for_each(|other| and_words(&mut first[0], other));
                    Ok(vec![])
                })
            };
            let mut steps = vec![
                Step::Compute(reserve),
                Step::Transfers((1..n).map(|r| Transfer::Recv { buf: Buf::Own(r), from: self.members[r] }).collect()),
                Step::Compute(and(n - 1)),
            ];
            if let Some(peer) = self.remote_leader {
                // the two leaders swap their group's sets (buffer n holds the other's)
                steps.push(Step::Transfers(vec![
                    Transfer::Send { buf: Buf::Own(0), to: peer },
                    Transfer::Recv { buf: Buf::Own(n), from: peer },
                ]));
                steps.push(Step::Compute(Box::new(move |b: &mut [Vec<u8>]| {
                    let (first, others) = b.split_at_mut(1);
                    and_words(&mut first[0], &others[n - 1]);
                    Ok(vec![])
                })));
            }
            steps.push(Step::Transfers(
                (1..n).map(|r| Transfer::Send { buf: Buf::Own(0), to: self.members[r] }).collect(),
            ));
            steps.push(Step::Compute(decide));
            steps
        } else {
            vec![
                Step::Compute(reserve),
                Step::Transfers(vec![
                    Transfer::Send { buf: Buf::Own(0), to: self.members[0] },
                    Transfer::Recv { buf: Buf::Own(1), from: self.members[0] },
                ]),
                Step::Compute(decide),
            ]
        }
    }
}

/// The bytes of a round's message: the id word's bits, then the sets'.
const ROUND_BYTES: usize = 8;

/// `acc` ANDed with `other`, byte by byte (a round's messages).
fn and_words(acc: &mut [u8], other: &[u8]) {
    acc.iter_mut().zip(other).for_each(|(a, o)| *a &= o);
}

/// Outstanding MPI_Comm_idup requests: (request id, new handle, outcome).
static PENDING: std::sync::Mutex<Vec<(u32, c_int, Outcome)>> = std::sync::Mutex::new(Vec::new());
/// How many MPI_Comm_idup are pending: every completing request asks, and
/// almost always none is (no lock taken then). Changed only under the
/// state lock, as `PENDING` is, so a Relaxed read there is exact.
static PENDING_IDUPS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Called when request `id` completes: if it is an MPI_Comm_idup, the new
/// communicator gets its agreed context id.
#[inline]
pub fn idup_complete(st: &mut State, id: u32) {
    if PENDING_IDUPS.load(std::sync::atomic::Ordering::Relaxed) != 0 {
        idup_completes(st, id);
    }
}

/// `idup_complete` while some MPI_Comm_idup is pending (apart, so that
/// every other completion pays one load, not this function's frame).
#[inline(never)]
fn idup_completes(st: &mut State, id: u32) {
    let found = {
        let mut p = PENDING.lock().unwrap_or_else(|e| e.into_inner());
        p.iter().position(|(r, _, _)| *r == id).map(|i| p.remove(i))
    };
    let Some((_, h, outcome)) = found else { return };
    PENDING_IDUPS.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    let agreed = outcome.lock().unwrap_or_else(|e| e.into_inner()).take().flatten();
    if let (Some((cid, set)), Ok(c)) = (agreed, handles::comm_mut(st, h)) {
        c.ctx_p2p = 2 * cid;
        c.ctx_coll = 2 * cid + 1;
        c.lines = set;
    }
}

mpi_fn! {
    /// MPI_COMM_NULL: oxmpi starts every process with mpiexec (or a
    /// batch system's launcher), none by MPI_Comm_spawn, so none has a
    /// parent (MPI 4.0 §11.8.2).
    Initialized fn MPI_Comm_get_parent / PMPI_Comm_get_parent(parent: *mut c_int) errors(None) {
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(parent, "parent", COMM_NULL) }
    }
}

mpi_fn! {
    Initialized fn MPI_Comm_idup / PMPI_Comm_idup(comm: c_int, newcomm: *mut c_int, request: *mut c_int) errors(Some(comm)) {
        idup(comm, newcomm, request, None)
    }
}

mpi_fn! {
    Initialized fn MPI_Comm_idup_with_info / PMPI_Comm_idup_with_info(comm: c_int, info: c_int, newcomm: *mut c_int, request: *mut c_int) errors(Some(comm)) {
        idup(comm, newcomm, request, Some(crate::abi::info::pairs(info)?))
    }
}

/// MPI_Comm_idup(_with_info): the new communicator's handle at once, its
/// context agreed by a schedule behind `request`; its hints `hints`, or
/// (None) the parent's.
fn idup(comm: c_int, newcomm: *mut c_int, request: *mut c_int, hints: Option<Vec<(String, String)>>) -> MpiResult<()> {
    if newcomm.is_null() || request.is_null() {
        return err!(Arg, "newcomm and request must not be null pointers");
    }
    let (h, req) = with_state(|st| {
        let parent = handles::comm(st, comm)?.clone();
        let count = {
            let p = handles::comm_mut(st, comm)?;
            p.idups = p.idups.wrapping_add(1);
            p.idups
        };
        let me = st.world().rank;
        // The handle exists at once; its context comes at completion.
        let mut c =
            Comm::new(parent.group.members(), me, PENDING_CID, parent.errors).expect("a member of its own group");
        c.hints = hints.unwrap_or(parent.hints.clone());
        c.topo = parent.topo.clone();
        c.remote = parent.remote.clone();
        let h = handles::new_comm(st, c);
        let outcome: Outcome = Default::default();
        let first_word =
            (parent.cid() as usize).wrapping_mul(7919).wrapping_add(count as usize * 104_729) % ContextIds::WORDS;
        let plan = std::sync::Arc::new(IdupPlan {
            cids: st.cids.clone(),
            members: parent.group.members(),
            rank: parent.rank,
            first_word,
            outcome: outcome.clone(),
            held: Default::default(),
            whole: parent.remote.is_none() && parent.size() == st.world().size(),
            sets: Default::default(),
            remote_leader: parent.remote.as_ref().map(|g| g.world_rank(0)),
        });
        let bufs = vec![vec![0u8; ROUND_BYTES]; if parent.rank == 0 { parent.size() + 1 } else { 2 }];
        let tag = TAG_IDUP + (count % IDUP_TAGS) as i32;
        let sched =
            crate::p2p::schedule::Schedule::new(bufs, plan.round(0), parent.ctx_coll, tag, parent.group.clone());
        let req = st.engine.start_schedule(sched)?;
        PENDING.lock().unwrap_or_else(|e| e.into_inner()).push((req, h, outcome));
        PENDING_IDUPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok((h, req))
    })?;
    crate::abi::attr::copy_all(crate::abi::attr::Kind::Comm, comm, h)?;
    // SAFETY: checked non-null.
    unsafe {
        *newcomm = h;
        *request = handles::request_handle(req);
    }
    Ok(())
}
