//! Communicators: a group of world ranks, this rank's place in it, and two
//! context ids (point-to-point and collective) so the two traffics never
//! match each other.

pub mod group;
pub mod topo;

use std::sync::Arc;

/// The world ranks of a communicator's members, in communicator order.
#[derive(Clone, Debug)]
pub enum Group {
    /// Ranks 0..n of the world, in order.
    World(usize),
    List(Arc<[usize]>),
}

impl Group {
    pub fn size(&self) -> usize {
        match self {
            Group::World(n) => *n,
            Group::List(l) => l.len(),
        }
    }

    pub fn world_rank(&self, r: usize) -> usize {
        match self {
            Group::World(_) => r,
            Group::List(l) => l[r],
        }
    }

    pub fn rank_of(&self, world: usize) -> Option<usize> {
        match self {
            Group::World(n) => (world < *n).then_some(world),
            Group::List(l) => l.iter().position(|&w| w == world),
        }
    }
}

/// How errors raised on a communicator are handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorMode {
    /// MPI_ERRORS_ARE_FATAL: print one line and end the whole job.
    Fatal,
    /// MPI_ERRORS_ABORT: like Fatal, scoped to the communicator (here: the job).
    Abort,
    /// MPI_ERRORS_RETURN: return the error code.
    Return,
    /// A user handler (MPI_Comm_create_errhandler), by the boundary's index.
    User(u32),
}

#[derive(Clone, Debug)]
pub struct Comm {
    pub name: String,
    pub group: Group,
    pub rank: usize,
    pub ctx_p2p: u32,
    pub ctx_coll: u32,
    pub errors: ErrorMode,
    /// Info hints set on the communicator (MPI_Comm_set_info).
    pub hints: Vec<(String, String)>,
    pub topo: Option<topo::Topology>,
    /// For an intercommunicator: the remote group, which point-to-point
    /// ranks name.
    pub remote: Option<Group>,
    /// MPI_Comm_idup calls made on this communicator (they are ordered
    /// alike on every member, so the count names each one everywhere).
    pub idups: u32,
    /// Collective operations started on this communicator (ordered alike
    /// on every member; the count gives each its own tag).
    pub colls: u32,
    /// For a communicator of the whole world: the set of arrival lines
    /// its short nonblocking collectives take, if it got one
    /// (`transport::shm::LineSet::Started`, agreed at its making;
    /// MPI_COMM_WORLD's is 0).
    pub lines: Option<u8>,
}

impl Group {
    /// The members as a list of world ranks.
    pub fn members(&self) -> Vec<usize> {
        match self {
            Group::World(n) => (0..*n).collect(),
            Group::List(l) => l.to_vec(),
        }
    }
}

impl Comm {
    pub fn size(&self) -> usize {
        self.group.size()
    }

    /// The group point-to-point ranks refer to: the remote group of an
    /// intercommunicator, else the communicator's own.
    pub fn peers(&self) -> &Group {
        self.remote.as_ref().unwrap_or(&self.group)
    }

    /// The context id (see `group::ContextIds`).
    pub fn cid(&self) -> u32 {
        self.ctx_p2p / 2
    }

    /// A communicator over `members` (world ranks, in rank order) using
    /// context id `cid`; `me` is this process's world rank.
    pub fn new(members: Vec<usize>, me: usize, cid: u32, errors: ErrorMode) -> Option<Comm> {
        let rank = members.iter().position(|&w| w == me)?;
        Some(Comm {
            name: String::new(),
            group: Group::List(Arc::from(members)),
            rank,
            ctx_p2p: 2 * cid,
            ctx_coll: 2 * cid + 1,
            errors,
            hints: Vec::new(),
            topo: None,
            remote: None,
            idups: 0,
            colls: 0,
            lines: None,
        })
    }

    pub fn world(rank: usize, size: usize) -> Comm {
        Comm {
            name: "MPI_COMM_WORLD".into(),
            group: Group::World(size),
            rank,
            ctx_p2p: 0,
            ctx_coll: 1,
            errors: ErrorMode::Fatal,
            hints: Vec::new(),
            topo: None,
            remote: None,
            idups: 0,
            colls: 0,
            lines: Some(0),
        }
    }

    pub fn self_(world_rank: usize) -> Comm {
        Comm {
            name: "MPI_COMM_SELF".into(),
            group: Group::List(Arc::from(vec![world_rank])),
            rank: 0,
            ctx_p2p: 2,
            ctx_coll: 3,
            errors: ErrorMode::Fatal,
            hints: Vec::new(),
            topo: None,
            remote: None,
            idups: 0,
            colls: 0,
            lines: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_translate_both_ways() {
        let w = Group::World(4);
        assert_eq!((w.world_rank(3), w.rank_of(3), w.rank_of(4)), (3, Some(3), None));
        let s = Comm::self_(2);
        assert_eq!((s.size(), s.group.world_rank(0), s.group.rank_of(2), s.group.rank_of(0)), (1, 2, Some(0), None));
    }
}
