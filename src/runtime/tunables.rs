//! The one registry of `OXMPI_*` environment variables. Each tunable is
//! declared once here (name, default, meaning); the library reads them at
//! init, and `oxmpi-info` and docs/tunables.md print them from this table.

pub struct Tunable {
    pub name: &'static str,
    pub default: &'static str,
    pub meaning: &'static str,
}

pub const TUNABLES: &[Tunable] = &[
    Tunable {
        name: "OXMPI_EAGER_LIMIT",
        default: "16384",
        meaning: "a ring slot's payload (bytes): messages up to this size go eagerly with their envelope in one slot, longer ones in several (up to OXMPI_LONG_EAGER_LIMIT) or by rendezvous",
    },
    Tunable {
        name: "OXMPI_LONG_EAGER_LIMIT",
        default: "auto",
        meaning: "the largest contiguous message (bytes) sent eagerly to a rank of this host in several of the ring's slots in a row (at most OXMPI_SLOTS/2 slots of OXMPI_EAGER_LIMIT bytes; never below OXMPI_EAGER_LIMIT); auto: below 32 KiB, from where a rendezvous has sender and receiver copy half each, or 64 KiB on a host running more ranks than it has cores, where a rendezvous waits for its receiver to be running, which it often is not (a blocking send's below 32 KiB still while the ranks that want a core there have one each, the others in a long wait; there a collective's sends posted several at once beside receives, an Alltoall's or Allgather's, go by rendezvous from a quarter of OXMPI_SINGLE_COPY_MIN on: their receivers, in the collective too, read them by one cross-memory copy)",
    },
    Tunable {
        name: "OXMPI_UNEXPECTED_BYTES",
        default: "67108864",
        meaning: "eager bytes a rank buffers for unposted receives before it leaves new messages from senders it is not waiting on where they are (replies to its own sends still come through)",
    },
    Tunable {
        name: "OXMPI_TRANSPORT",
        default: "auto",
        meaning: "transport between ranks: auto (shared memory on one host, TCP between hosts), tcp (TCP everywhere, to test it on one host) or shm (refuse a job that spans hosts); alike on every rank (MPI_Init fails otherwise)",
    },
    Tunable {
        name: "OXMPI_TCP_EAGER_LIMIT",
        default: "65536",
        meaning: "largest message (bytes) sent eagerly to a rank reached over TCP (where the rendezvous handshake costs a network round trip)",
    },
    Tunable {
        name: "OXMPI_ADDR",
        default: "",
        meaning: "address (or host name) to listen on for TCP peers; default: the first address of an interface that is up and neither loopback nor a container bridge",
    },
    Tunable {
        name: "OXMPI_IFACE",
        default: "",
        meaning: "network interface whose IPv4 address TCP peers connect to (when OXMPI_ADDR is not set)",
    },
    Tunable {
        name: "OXMPI_SINGLE_COPY",
        default: "1",
        meaning: "1: long messages are copied once by cross-memory attach; 0: pipelined through the shared slots",
    },
    Tunable {
        name: "OXMPI_SINGLE_COPY_MIN",
        default: "128k",
        meaning: "contiguous messages between ranks of one host shorter than this are pipelined through the shared slots (two copies that overlap beat the kernel's cross-memory copy, whose set-up costs microseconds, up to about this size; more or less where the two cores share a cache or not); a receiver with a long send of its own under way (an exchange: both copies of a pipeline would fall to each core) reads from a quarter of this size; a contiguous message of 32 KiB or more below this size, or from a blocking send at any size, is instead split: the sender writes half by cross-memory copy while the receiver reads half (unless OXMPI_SINGLE_COPY=0; read whole by the receiver while more ranks want a core than the host has, ranks waiting in a short collective aside, and pipelined below this size when both last ran on one core); on a host with more ranks than cores at most OXMPI_SLOTS times the eager limit (a pipeline needs both ranks running)",
    },
    Tunable {
        name: "OXMPI_TWO_RANK_BLOCKS",
        default: "auto",
        meaning: "how a blocking Allgather's or Alltoall's blocks between two ranks of a host with a core each go, from a third of OXMPI_SINGLE_COPY_MIN: auto has the two ranks choose per call, alike, the way their calls took less time lately (pieces through the shared mailboxes win while the two CPUs pass cache lines quickly, the reader's cross-memory copy while they do not); pieces and read take that way always (read needs OXMPI_SINGLE_COPY=1). Ranks may differ",
    },
    Tunable {
        name: "OXMPI_CROWDED_BLOCKS",
        default: "auto",
        meaning: "how a blocking Alltoall's or Allgather's (and an Allgatherv's parts of one size, an Alltoallv's or Alltoallw's blocks) among 3 or more ranks of a host with more ranks than cores go where they go through the shared mailboxes in pieces (an Alltoall's longer than a long slot shares among the others, up to OXMPI_SINGLE_COPY_MIN, and an Alltoallv's likewise by its rank's longest, whose longer blocks, messages otherwise, are read in place unless pieces is set; an Allgather's longer than a short slot shares among all): auto has every rank take, alike, the way the communicator's last calls of that size took less processor time on all (pieces win while the CPUs pass cache lines quickly; each reader's cross-memory copy straight out of every writer's send buffer (an Allgather in place: its part of recvbuf) while they do not, as on a virtual machine whose host puts its CPUs on dies that share no cache); pieces and read take that way always (read needs OXMPI_SINGLE_COPY=1 and every rank able to read the others). All ranks must agree",
    },
    Tunable {
        name: "OXMPI_SHM_SCAN",
        default: "auto",
        meaning: "how a blocking Scan or Exscan among 3 or more ranks of one host goes through the short shared mailboxes (up to 4 KiB): chain has rank r read rank r - 1's prefix, fold its own part in and publish the result for rank r + 1 (one read a rank: a loop of them runs each rank ahead, on a host with more ranks than cores); every has each rank publish its part for all the ranks after it and read every earlier one's (the ranks' reads go at once: less time for one call where each rank has a core); auto takes chain on a host that runs the whole job with more ranks than cores, every elsewhere. All ranks must agree",
    },
    Tunable {
        name: "OXMPI_BIND",
        default: "spread",
        meaning: "where ranks run: spread leaves placement to the kernel, but on a host that runs more ranks than it has CPUs a rank that yields its core looks every millisecond where the host's ranks last ran and, if two more that want a core share its core than another at three looks in a row, moves itself to that one (then may run anywhere again; one move a host in 10 ms; none while a rank that wants a core has not waited in the last 0.2 ms, being at work between waits: the kernel balances ranks that compute by itself), which undoes the kernel's crowding of three ranks on one core while another has one (it does now and then, and a loop of short collectives then takes up to twice as long); none leaves placement to the kernel alone; auto binds each rank of such a host to one CPU for good (the host's i-th rank to the i-th CPU of the mask, round robin), which costs pipelines that lean on one rank (a 1 MiB Scan at 4 ranks on 2 cores: 344 us against 267) the freedom to spread; core binds so at any number of ranks. Ranks that the launcher or the user already bound (masks that differ, or a mask the program changed) are left as they are, and so is a host under a CPU quota",
    },
    Tunable {
        name: "OXMPI_CHECK_TYPES",
        default: "0",
        meaning: "1: every message carries its type signature and a send/receive type mismatch is MPI_ERR_TYPE naming both types",
    },
    Tunable {
        name: "OXMPI_CHECK_COLLECTIVES",
        default: "0",
        meaning: "1: every collective first checks that all ranks call the same operation with the same root and operator (any user-defined operator counts as one: each process numbers its own) and, where every rank's part must have one size, parts of that size (one small allreduce); a disagreement is an error on every rank instead of a hang or wrong data",
    },
    Tunable {
        name: "OXMPI_SLOTS",
        default: "auto",
        meaning: "message slots per ordered pair of ranks in the shared segment (a power of two, 2..1024), or auto: 8, and on a host running more ranks than cores as many as keep the host's rings within 16 MiB of payload, from 8 to 64 (64 up to 4 ranks at the default eager limit, 16 at 8), so that a sender of many messages runs ahead of receivers waiting for a core",
    },
    Tunable {
        name: "OXMPI_COLL_BARRIER",
        default: "auto",
        meaning: "MPI_Barrier algorithm (where it goes by messages: nonblocking, persistent, between hosts): dissemination (log2 n rounds), linear (every rank tells every other at once), or auto: linear on 3 to 8 ranks when the job shares one host with more ranks than cores, else dissemination",
    },
    Tunable {
        name: "OXMPI_COLL_BCAST",
        default: "auto",
        meaning: "MPI_Bcast algorithm: binomial, scatter_allgather (scatter the message in pieces, then ring allgather), or auto: scatter_allgather from OXMPI_BCAST_LONG bytes on 8 or more ranks",
    },
    Tunable {
        name: "OXMPI_BCAST_LONG",
        default: "256k",
        meaning: "auto MPI_Bcast: messages of at least this many bytes use scatter_allgather",
    },
    Tunable {
        name: "OXMPI_COLL_ALLREDUCE",
        default: "auto",
        meaning: "MPI_Allreduce algorithm: recursive_doubling, rabenseifner (reduce-scatter by recursive halving, then allgather), reduce_bcast, linear (reduce-scatter and allgather with every transfer at once; power-of-two sizes, rabenseifner otherwise), allgather (every rank's vector to every rank at once, each folding them in rank order), or auto: allgather below OXMPI_ALLREDUCE_LONG bytes on 3 to 8 ranks when the job shares one host with more ranks than cores, on 3 or more ranks rabenseifner from OXMPI_ALLREDUCE_LONG bytes (linear up to 256 KiB when the job shares one host with more ranks than cores), else recursive_doubling (always on 2 ranks)",
    },
    Tunable {
        name: "OXMPI_ALLREDUCE_LONG",
        default: "16k",
        meaning: "auto MPI_Allreduce on 3 or more ranks: vectors of at least this many bytes use rabenseifner",
    },
    Tunable {
        name: "OXMPI_COLL_ALLGATHER",
        default: "auto",
        meaning: "MPI_Allgather(v) algorithm: ring, recursive_doubling (power-of-two sizes; ring otherwise), linear (every part to every rank at once), or auto: recursive_doubling below OXMPI_ALLGATHER_SHORT bytes in all (linear on 3 to 8 ranks when the job shares one host with more ranks than cores), else ring (linear on 3 or more ranks when the job shares one host with more ranks than cores)",
    },
    Tunable {
        name: "OXMPI_ALLGATHER_SHORT",
        default: "64k",
        meaning: "auto MPI_Allgather: results smaller than this many bytes use recursive_doubling",
    },
    Tunable {
        name: "OXMPI_COLL_ALLTOALL",
        default: "auto",
        meaning: "MPI_Alltoall(v) algorithm: pairwise, bruck (log2 n steps, for equal blocks; the auto choice otherwise), linear (every transfer at once), or auto: bruck for blocks up to OXMPI_ALLTOALL_SHORT bytes on 3 or more ranks (linear on 3 to 8 ranks when the job shares one host with more ranks than cores), else pairwise (linear on 3 or more ranks when the job shares one host with more ranks than cores)",
    },
    Tunable {
        name: "OXMPI_ALLTOALL_SHORT",
        default: "256",
        meaning: "auto MPI_Alltoall: blocks of at most this many bytes use bruck",
    },
    Tunable {
        name: "OXMPI_SHM_COLL_MAX",
        default: "4096",
        meaning: "blocking Barrier, Bcast, Reduce, Allreduce, Reduce_scatter(_block), Scan, Exscan, Allgatherv, and Gather, Scatter, Allgather and Alltoall of equal blocks, of at most this many bytes in all go through per-rank shared-memory mailboxes instead of messages; Alltoallv and Alltoallw (up to 64 ranks) put the blocks that fit in one such publication per rank, and send the others beside it, in pieces (as OXMPI_SHM_COLL_LONG_MAX says for Alltoall) or as messages; the Barrier of a communicator of every rank of the world, in any order (MPI_COMM_WORLD, its duplicates, splits that keep every rank), and its Allreduce, Allgather(v) and Alltoall of parts up to 40 bytes, up to 8 ranks, go on per-rank arrival lines instead, as does an Alltoallv's or Alltoallw's rank whose blocks for the others come to 40 bytes with a byte a rank, and so do the nonblocking Barrier, Allgather and Alltoall, and Allreduce of a predefined type and operator, with parts up to 40 bytes, of MPI_COMM_WORLD and of three more whole-world communicators at a time (duplicates, idup's included, splits or intercommunicator merges that keep every rank, each taking lines that no living communicator holds on any rank, as long as some are left), on lines of their own, and the persistent ones made on the holders of each of these lines, each on lines of its own while six at a time are alive (a later one takes the lines of one freed on every rank), the others as messages (0: never, neither; at most 4096)",
    },
    Tunable {
        name: "OXMPI_SHM_COLL_LONG_MAX",
        default: "1073741824",
        meaning: "blocking Bcast, Gather, Scatter, Allgather, Allgatherv (parts of one size; among 3 or more ranks parts of sizes of their own too, while each fits 32 KiB, as one publication a rank), Alltoall and (on 3 or more ranks) Allreduce, Reduce and Reduce_scatter(_block) of more than 4096 and at most this many bytes in all (equal blocks, no OXMPI_COLL_* algorithm forced for the operation) go in 32 KiB pieces through per-rank shared-memory mailboxes (an Alltoall among 3 or more ranks whose blocks for the others fit 32 KiB as one publication a rank; an Alltoallv's blocks beyond its short publication too, whole, where each fits 32 KiB): while one rank's block (the whole message for Bcast, Allreduce, Reduce) is below OXMPI_SINGLE_COPY_MIN (an Allgather's or Alltoall's below a third of it: there every rank copies in and out; between two ranks a Bcast below 32 KiB, a Gather's or Scatter's block below 64 KiB: from there the one message goes by a blocking send, split between the two), and at any size when the host has more ranks than cores (an Alltoall or Scatter there only while its blocks are no longer than point-to-point's single-copy threshold); between two ranks of a host with a core each, an Allgather's, Allgatherv's (parts of one size) or Alltoall's longer blocks, and an Alltoallv's outside its tables, go there too, in pieces or read in place (OXMPI_TWO_RANK_BLOCKS); Scan and Exscan up to 64 KiB (0: never)",
    },
    Tunable {
        name: "OXMPI_ASYNC_PROGRESS",
        default: "0",
        meaning: "1: a progress thread per rank moves nonblocking operations (point-to-point and collective) on while the program computes outside MPI, waking as peers send it frames; 0: they move whenever the program is inside any MPI call",
    },
    Tunable {
        name: "OXMPI_DEBUG",
        default: "0",
        meaning: "1: print each rank's transport set-up (segment, TCP address, eager limit, single copy) at init, and TCP connections refused for lack of the job's key",
    },
];

/// Current value of a registered tunable: the environment, else the default.
pub fn value(name: &str) -> String {
    let t = TUNABLES.iter().find(|t| t.name == name).expect("tunable not registered");
    std::env::var(name).unwrap_or_else(|_| t.default.to_string())
}

/// Parse a size tunable ("65536", "64k", "16M"); an unreadable value is
/// reported once and replaced by the default.
pub fn size(name: &str) -> usize {
    let v = value(name);
    parse_size(&v).unwrap_or_else(|| {
        let d = TUNABLES.iter().find(|t| t.name == name).map(|t| t.default).unwrap_or("0");
        eprintln!("oxmpi: {name}={v} is not a size; using {d}");
        parse_size(d).unwrap_or(0)
    })
}

pub fn flag(name: &str) -> bool {
    !matches!(value(name).trim(), "0" | "" | "no" | "false" | "off")
}

pub fn parse_size(s: &str) -> Option<usize> {
    let s = s.trim();
    let (num, mult) = match s.char_indices().last()? {
        (i, 'k' | 'K') => (&s[..i], 1024),
        (i, 'm' | 'M') => (&s[..i], 1024 * 1024),
        (i, 'g' | 'G') => (&s[..i], 1024 * 1024 * 1024),
        _ => (s, 1),
    };
    num.parse::<usize>().ok()?.checked_mul(mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_suffixes() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("64k"), Some(65536));
        assert_eq!(parse_size("2M"), Some(2 << 20));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size(""), None);
    }

    #[test]
    fn every_default_is_readable() {
        for t in TUNABLES {
            assert!(!t.meaning.is_empty(), "{}", t.name);
        }
        assert_eq!(parse_size(TUNABLES[0].default), Some(16384));
    }
}
