//! MPICH's handle values and their translation into core objects. This is
//! the only place that knows a handle is an int with MPICH's bit layout:
//! bits 30-31 the kind (builtin, direct), bits 26-29 the object type.

use crate::comm::Comm;
use crate::datatype::{Basic, PairKind, TypeInfo, TypeRef};
use crate::err;
use crate::error::MpiResult;
use crate::op::{Op, UserOp};
use crate::p2p::request::ReqId;
use crate::runtime::State;
use std::sync::{Arc, OnceLock, RwLock};

pub const COMM_WORLD: i32 = 0x44000000;
pub const COMM_SELF: i32 = 0x44000001;
pub const COMM_NULL: i32 = 0x04000000;
pub const DATATYPE_NULL: i32 = 0x0c000000;
/// MPI_PACKED, whose bytes match any receive signature.
pub const PACKED: i32 = 0x4c00010f;
pub const REQUEST_NULL: i32 = 0x2c000000;
const REQUEST_DIRECT: i32 = 0xac000000u32 as i32;
pub const OP_NULL: i32 = 0x18000000;
pub const ERRORS_ARE_FATAL: i32 = 0x54000000;
pub const ERRORS_RETURN: i32 = 0x54000001;
pub const ERRORS_ABORT: i32 = 0x54000003;
pub const ERRHANDLER_NULL: i32 = 0x14000000;

const COMM_DIRECT: u32 = 0x8400_0000;

/// The table index of a communicator handle.
#[inline]
fn comm_index(h: i32) -> MpiResult<usize> {
    match h {
        COMM_WORLD => Ok(0),
        COMM_SELF => Ok(1),
        COMM_NULL => err!(Comm, "the communicator is MPI_COMM_NULL"),
        _ if (h as u32) & 0xfc00_0000 == COMM_DIRECT => Ok((h as u32 & 0x03ff_ffff) as usize),
        _ => err!(Comm, "invalid communicator handle 0x{h:08x}"),
    }
}

pub fn comm_handle(index: usize) -> i32 {
    match index {
        0 => COMM_WORLD,
        1 => COMM_SELF,
        i => (COMM_DIRECT | i as u32) as i32,
    }
}

#[inline]
pub fn comm(st: &State, h: i32) -> MpiResult<&Comm> {
    match st.comms.get(comm_index(h)?) {
        Some(Some(c)) => Ok(c),
        Some(None) => err!(Comm, "communicator 0x{h:08x} was freed (MPI_Comm_free)"),
        None => err!(Comm, "invalid communicator handle 0x{h:08x}"),
    }
}

pub fn comm_mut(st: &mut State, h: i32) -> MpiResult<&mut Comm> {
    comm_in(&mut st.comms, h)
}

fn comm_in(comms: &mut [Option<Comm>], h: i32) -> MpiResult<&mut Comm> {
    match comms.get_mut(comm_index(h)?) {
        Some(Some(c)) => Ok(c),
        Some(None) => err!(Comm, "communicator 0x{h:08x} was freed (MPI_Comm_free)"),
        None => err!(Comm, "invalid communicator handle 0x{h:08x}"),
    }
}

/// `comm_mut` beside the engine, both borrowed at once (a collective
/// runs on the engine among the communicator's members).
pub fn comm_and_engine(st: &mut State, h: i32) -> MpiResult<(&mut Comm, &mut crate::p2p::Engine)> {
    Ok((comm_in(&mut st.comms, h)?, &mut st.engine))
}

/// Register a new communicator; its handle.
pub fn new_comm(st: &mut State, c: Comm) -> i32 {
    let i = match st.comms.iter().skip(2).position(|s| s.is_none()) {
        Some(p) => p + 2,
        None => {
            st.comms.push(None);
            st.comms.len() - 1
        }
    };
    st.comms[i] = Some(c);
    comm_handle(i)
}

/// Forget a communicator (MPI_Comm_free); the predefined ones stay.
pub fn free_comm(st: &mut State, h: i32) -> MpiResult<Comm> {
    let i = comm_index(h)?;
    if i < 2 {
        return err!(Comm, "MPI_COMM_WORLD and MPI_COMM_SELF cannot be freed");
    }
    match st.comms.get_mut(i).and_then(|s| s.take()) {
        Some(c) => Ok(c),
        None => err!(Comm, "communicator 0x{h:08x} was already freed"),
    }
}

pub const GROUP_NULL: i32 = 0x08000000;
pub const GROUP_EMPTY: i32 = 0x48000000;
const GROUP_DIRECT: u32 = 0x8800_0000;

/// The members (world ranks) of a group handle.
pub fn group(st: &State, h: i32) -> MpiResult<std::sync::Arc<[usize]>> {
    match h {
        GROUP_EMPTY => return Ok(std::sync::Arc::from(Vec::new())),
        GROUP_NULL => return err!(Group, "the group is MPI_GROUP_NULL"),
        _ => {}
    }
    if (h as u32) & 0xfc00_0000 != GROUP_DIRECT {
        return err!(Group, "invalid group handle 0x{h:08x}");
    }
    match st.groups.get((h as u32 & 0x03ff_ffff) as usize) {
        Some(Some(g)) => Ok(g.clone()),
        Some(None) => err!(Group, "group 0x{h:08x} was freed (MPI_Group_free)"),
        None => err!(Group, "invalid group handle 0x{h:08x}"),
    }
}

/// Register a group; its handle (MPI_GROUP_EMPTY for no members).
pub fn new_group(st: &mut State, members: Vec<usize>) -> i32 {
    if members.is_empty() {
        return GROUP_EMPTY;
    }
    let g = Some(std::sync::Arc::from(members));
    let i = match st.groups.iter().position(|s| s.is_none()) {
        Some(i) => {
            st.groups[i] = g;
            i
        }
        None => {
            st.groups.push(g);
            st.groups.len() - 1
        }
    };
    (GROUP_DIRECT | i as u32) as i32
}

pub fn free_group(st: &mut State, h: i32) -> MpiResult<()> {
    if h == GROUP_EMPTY {
        return Ok(());
    }
    group(st, h)?;
    st.groups[(h as u32 & 0x03ff_ffff) as usize] = None;
    Ok(())
}

pub fn request_handle(id: ReqId) -> i32 {
    REQUEST_DIRECT | id as i32
}

/// A request handle's id, or an error naming the bad handle.
pub fn request_id(h: i32) -> MpiResult<ReqId> {
    if h & !0x03ff_ffff == REQUEST_DIRECT {
        Ok((h & 0x03ff_ffff) as ReqId)
    } else if h == REQUEST_NULL {
        err!(Request, "the request is MPI_REQUEST_NULL")
    } else {
        err!(Request, "invalid request handle 0x{h:08x}")
    }
}

pub fn op(h: i32) -> MpiResult<Op> {
    Ok(match h {
        0x58000001 => Op::Max,
        0x58000002 => Op::Min,
        0x58000003 => Op::Sum,
        0x58000004 => Op::Prod,
        0x58000005 => Op::Land,
        0x58000006 => Op::Band,
        0x58000007 => Op::Lor,
        0x58000008 => Op::Bor,
        0x58000009 => Op::Lxor,
        0x5800000a => Op::Bxor,
        0x5800000b => Op::Minloc,
        0x5800000c => Op::Maxloc,
        0x5800000d => Op::Replace,
        0x5800000e => Op::NoOp,
        OP_NULL => return err!(Op, "the operation is MPI_OP_NULL"),
        _ => match user_op(h) {
            Some(u) => Op::User(u),
            None => return err!(Op, "invalid operation handle 0x{h:08x}"),
        },
    })
}

/// What ranks passing one operator have alike (`OXMPI_CHECK_COLLECTIVES`):
/// a predefined operator's handle, or for any user-defined one the mark
/// of the kind, since each process numbers those it made (ScaLAPACK's
/// BLACS makes one for each reduction, on the ranks that take part).
pub fn op_alike(h: i32) -> i32 {
    if h as u32 & !0x03ff_ffff == OP_DIRECT {
        OP_DIRECT as i32
    } else {
        h
    }
}

/// User-defined operators (MPI_Op_create): 0x9800000N, N indexing this
/// table; freed slots are `None` and not reused.
static USER_OPS: RwLock<Vec<Option<UserOp>>> = RwLock::new(Vec::new());
const OP_DIRECT: u32 = 0x9800_0000;

fn user_op(h: i32) -> Option<UserOp> {
    let h = h as u32;
    if h & !0x03ff_ffff != OP_DIRECT {
        return None;
    }
    *USER_OPS.read().unwrap_or_else(|p| p.into_inner()).get((h & 0x03ff_ffff) as usize)?
}

pub fn new_op(u: UserOp) -> MpiResult<i32> {
    let mut t = USER_OPS.write().unwrap_or_else(|p| p.into_inner());
    if t.len() >= 0x03ff_ffff {
        return err!(Intern, "too many user-defined operations");
    }
    t.push(Some(u));
    Ok((OP_DIRECT | (t.len() - 1) as u32) as i32)
}

/// Free a user-defined operator; predefined ones cannot be freed.
pub fn free_op(h: i32) -> MpiResult<()> {
    op(h)?;
    if user_op(h).is_none() {
        return err!(Op, "0x{h:08x} is a predefined operation, which cannot be freed");
    }
    USER_OPS.write().unwrap_or_else(|p| p.into_inner())[(h as u32 & 0x03ff_ffff) as usize] = None;
    Ok(())
}

struct Builtins {
    /// 0x4c00SSII handles, indexed by II.
    direct: Vec<Option<TypeInfo>>,
    /// 0x8c00000N pair handles, indexed by N.
    pairs: Vec<TypeInfo>,
}

#[inline]
fn builtins() -> &'static Builtins {
    static B: OnceLock<Builtins> = OnceLock::new();
    B.get_or_init(|| {
        use Basic::*;
        let int = |bytes, signed| Int { bytes, signed };
        let basics: &[(i32, &str, Basic)] = &[
            (0x4c000101, "MPI_CHAR", Char),
            (0x4c000102, "MPI_UNSIGNED_CHAR", int(1, false)),
            (0x4c000118, "MPI_SIGNED_CHAR", int(1, true)),
            (0x4c00040e, "MPI_WCHAR", Char),
            (0x4c000203, "MPI_SHORT", int(2, true)),
            (0x4c000204, "MPI_UNSIGNED_SHORT", int(2, false)),
            (0x4c000405, "MPI_INT", int(4, true)),
            (0x4c000406, "MPI_UNSIGNED", int(4, false)),
            (0x4c000807, "MPI_LONG", int(8, true)),
            (0x4c000808, "MPI_UNSIGNED_LONG", int(8, false)),
            (0x4c000809, "MPI_LONG_LONG_INT", int(8, true)),
            (0x4c000819, "MPI_UNSIGNED_LONG_LONG", int(8, false)),
            (0x4c000137, "MPI_INT8_T", int(1, true)),
            (0x4c000238, "MPI_INT16_T", int(2, true)),
            (0x4c000439, "MPI_INT32_T", int(4, true)),
            (0x4c00083a, "MPI_INT64_T", int(8, true)),
            (0x4c00013b, "MPI_UINT8_T", int(1, false)),
            (0x4c00023c, "MPI_UINT16_T", int(2, false)),
            (0x4c00043d, "MPI_UINT32_T", int(4, false)),
            (0x4c00083e, "MPI_UINT64_T", int(8, false)),
            (0x4c000843, "MPI_AINT", FortranInt { bytes: 8 }),
            (0x4c000844, "MPI_OFFSET", FortranInt { bytes: 8 }),
            (0x4c000845, "MPI_COUNT", FortranInt { bytes: 8 }),
            (0x4c00040a, "MPI_FLOAT", Float { bytes: 4 }),
            (0x4c00080b, "MPI_DOUBLE", Float { bytes: 8 }),
            (0x4c00100c, "MPI_LONG_DOUBLE", LongDouble),
            (0x4c000246, "MPIX_C_FLOAT16", Float { bytes: 2 }),
            // MPICH names it by its MPI 2.2 name; MPI_C_FLOAT_COMPLEX is the same handle
            (0x4c000840, "MPI_C_COMPLEX", Complex { bytes: 8 }),
            (0x4c001041, "MPI_C_DOUBLE_COMPLEX", Complex { bytes: 16 }),
            (0x4c002042, "MPI_C_LONG_DOUBLE_COMPLEX", LongDoubleComplex),
            (0x4c00013f, "MPI_C_BOOL", CBool),
            (0x4c000133, "MPI_CXX_BOOL", CBool),
            (0x4c000834, "MPI_CXX_FLOAT_COMPLEX", Complex { bytes: 8 }),
            (0x4c001035, "MPI_CXX_DOUBLE_COMPLEX", Complex { bytes: 16 }),
            (0x4c002036, "MPI_CXX_LONG_DOUBLE_COMPLEX", LongDoubleComplex),
            (0x4c00010d, "MPI_BYTE", Byte),
            (PACKED, "MPI_PACKED", Packed),
            (0x4c000010, "MPI_LB", Marker),
            (0x4c000011, "MPI_UB", Marker),
            (0x4c00011a, "MPI_CHARACTER", Char),
            (0x4c00041b, "MPI_INTEGER", FortranInt { bytes: 4 }),
            (0x4c00012d, "MPI_INTEGER1", FortranInt { bytes: 1 }),
            (0x4c00022f, "MPI_INTEGER2", FortranInt { bytes: 2 }),
            (0x4c000430, "MPI_INTEGER4", FortranInt { bytes: 4 }),
            (0x4c000831, "MPI_INTEGER8", FortranInt { bytes: 8 }),
            (0x4c00041c, "MPI_REAL", Float { bytes: 4 }),
            (0x4c000427, "MPI_REAL4", Float { bytes: 4 }),
            (0x4c000829, "MPI_REAL8", Float { bytes: 8 }),
            (0x4c00102b, "MPI_REAL16", Float { bytes: 16 }),
            (0x4c00081f, "MPI_DOUBLE_PRECISION", Float { bytes: 8 }),
            (0x4c00081e, "MPI_COMPLEX", Complex { bytes: 8 }),
            (0x4c000828, "MPI_COMPLEX8", Complex { bytes: 8 }),
            (0x4c001022, "MPI_DOUBLE_COMPLEX", Complex { bytes: 16 }),
            (0x4c00102a, "MPI_COMPLEX16", Complex { bytes: 16 }),
            (0x4c00202c, "MPI_COMPLEX32", Complex { bytes: 32 }),
            (0x4c00041d, "MPI_LOGICAL", FortranLogical { bytes: 4 }),
        ];
        let mut direct: Vec<Option<TypeInfo>> = (0..256).map(|_| None).collect();
        for &(h, name, basic) in basics {
            let size = ((h >> 8) & 0xff) as usize;
            let size = if basic == Marker { 0 } else { size };
            let mut t = TypeInfo::basic(name, basic, size);
            // external32 sizes that differ from the native ones (MPI 4.0 §14.5.2)
            match name {
                "MPI_LONG" | "MPI_UNSIGNED_LONG" => t = t.with_external_size(4),
                "MPI_WCHAR" => t = t.with_external_size(2),
                _ => {}
            }
            direct[(h & 0xff) as usize] = Some(t);
        }
        let fortran_pairs: &[(i32, &str, PairKind, usize)] = &[
            (0x4c000816, "MPI_2INT", PairKind::TwoInt, 4),
            (0x4c000820, "MPI_2INTEGER", PairKind::TwoFortranInt, 4),
            (0x4c000821, "MPI_2REAL", PairKind::TwoFloat, 4),
            (0x4c001023, "MPI_2DOUBLE_PRECISION", PairKind::TwoDouble, 8),
        ];
        for &(h, name, kind, w) in fortran_pairs {
            direct[(h & 0xff) as usize] = Some(TypeInfo::pair(name, kind, w, w, w));
        }
        let pairs = vec![
            TypeInfo::pair("MPI_FLOAT_INT", PairKind::FloatInt, 4, 4, 4),
            TypeInfo::pair("MPI_DOUBLE_INT", PairKind::DoubleInt, 8, 8, 4),
            TypeInfo::pair("MPI_LONG_INT", PairKind::LongInt, 8, 8, 4),
            TypeInfo::pair("MPI_SHORT_INT", PairKind::ShortInt, 2, 2, 4),
            TypeInfo::pair("MPI_LONG_DOUBLE_INT", PairKind::LongDoubleInt, 16, 16, 4),
        ];
        Builtins { direct, pairs }
    })
}

/// First index of user-defined datatypes among the 0x8c000000 handles
/// (MPICH's pair types take the first five).
const FIRST_DERIVED: usize = 16;
const DERIVED_KIND: u32 = 0x8c00_0000;

/// Derived datatypes, by handle index. A slot is None once freed; its
/// index is reused by later types.
static DERIVED: RwLock<Vec<Option<Arc<TypeInfo>>>> = RwLock::new(Vec::new());

/// A predefined datatype whose handle holds its size and index (most of
/// them; not the pair types): no lock, no reference count.
#[inline]
pub fn predefined(h: i32) -> Option<&'static TypeInfo> {
    if (h as u32) >> 24 != 0x4c {
        return None;
    }
    builtins().direct[(h & 0xff) as usize]
        .as_ref()
        .filter(|t| ((t.size as i32) << 8 | (h & 0xff)) == h & 0xffff || t.basic == Basic::Marker)
}

/// The type behind a datatype handle.
#[inline]
pub fn datatype(h: i32) -> MpiResult<TypeRef> {
    let b = builtins();
    let idx = (h & 0x00ff_ffff) as usize;
    let found = match (h as u32) >> 24 {
        0x4c => predefined(h).map(TypeRef::Builtin),
        0x8c if idx < FIRST_DERIVED => b.pairs.get(idx).map(TypeRef::Builtin),
        0x8c => match DERIVED.read().unwrap_or_else(|p| p.into_inner()).get(idx - FIRST_DERIVED) {
            Some(Some(t)) => Some(TypeRef::Derived(t.clone())),
            Some(None) => return err!(Type, "datatype handle 0x{h:08x} was freed (MPI_Type_free)"),
            None => None,
        },
        _ => None,
    };
    match found {
        Some(t) => Ok(t),
        None if h == DATATYPE_NULL => err!(Type, "the datatype is MPI_DATATYPE_NULL"),
        None => err!(Type, "invalid datatype handle 0x{h:08x}"),
    }
}

/// A committed (or, for communication, any) datatype check.
#[inline]
pub fn committed(h: i32) -> MpiResult<TypeRef> {
    if let Some(t) = predefined(h) {
        return Ok(TypeRef::Builtin(t));
    }
    let t = datatype(h)?;
    if !t.committed {
        return err!(Type, "datatype 0x{h:08x} is not committed: call MPI_Type_commit before using it to communicate");
    }
    Ok(t)
}

/// Register a new derived type; its handle.
pub fn new_datatype(t: TypeInfo) -> i32 {
    let mut d = DERIVED.write().unwrap_or_else(|p| p.into_inner());
    let t = Some(Arc::new(t));
    let idx = match d.iter().position(|s| s.is_none()) {
        Some(i) => {
            d[i] = t;
            i
        }
        None => {
            d.push(t);
            d.len() - 1
        }
    };
    (DERIVED_KIND | (idx + FIRST_DERIVED) as u32) as i32
}

fn derived_slot(h: i32) -> MpiResult<usize> {
    let idx = (h & 0x00ff_ffff) as usize;
    if (h as u32) & 0xff00_0000 != DERIVED_KIND || idx < FIRST_DERIVED {
        datatype(h)?;
        return err!(Type, "datatype 0x{h:08x} is predefined and cannot be changed or freed");
    }
    Ok(idx - FIRST_DERIVED)
}

/// Change a derived type (commit, set_name): in-flight users keep the
/// version they hold.
pub fn update_datatype(h: i32, f: impl FnOnce(&mut TypeInfo)) -> MpiResult<()> {
    let i = derived_slot(h)?;
    let mut d = DERIVED.write().unwrap_or_else(|p| p.into_inner());
    match d.get_mut(i) {
        Some(Some(t)) => {
            f(Arc::make_mut(t));
            Ok(())
        }
        Some(None) => err!(Type, "datatype handle 0x{h:08x} was freed (MPI_Type_free)"),
        None => err!(Type, "invalid datatype handle 0x{h:08x}"),
    }
}

/// MPI_Type_free: the handle dies; operations using the type finish.
pub fn free_datatype(h: i32) -> MpiResult<()> {
    let i = derived_slot(h)?;
    let mut d = DERIVED.write().unwrap_or_else(|p| p.into_inner());
    match d.get_mut(i) {
        Some(slot @ Some(_)) => {
            *slot = None;
            Ok(())
        }
        Some(None) => err!(Type, "datatype handle 0x{h:08x} was already freed"),
        None => err!(Type, "invalid datatype handle 0x{h:08x}"),
    }
}

/// The handle of a predefined type, from its name (for get_contents of
/// named types inside derived ones we keep TypeRefs; this maps back).
pub fn handle_of(t: &TypeRef) -> i32 {
    if let TypeRef::Derived(a) = t {
        // A derived type inside another: give the caller a new handle to
        // it, as MPI_Type_get_contents does.
        return new_datatype((**a).clone());
    }
    let b = builtins();
    for (i, d) in b.direct.iter().enumerate() {
        if let Some(d) = d {
            if std::ptr::eq(d, &**t) {
                return (0x4c00_0000u32 | ((d.size as u32) << 8) | i as u32) as i32;
            }
        }
    }
    for (i, p) in b.pairs.iter().enumerate() {
        if std::ptr::eq(p, &**t) {
            return (DERIVED_KIND | i as u32) as i32;
        }
    }
    DATATYPE_NULL
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_handles_name_their_types() {
        assert_eq!(datatype(0x4c000405).unwrap().name, "MPI_INT");
        assert_eq!(datatype(0x4c000405).unwrap().size, 4);
        assert_eq!(datatype(0x8c000001u32 as i32).unwrap().extent, 16);
        assert_eq!(datatype(0x8c000004u32 as i32).unwrap().extent, 32);
        assert_eq!(datatype(0x4c001023).unwrap().size, 16);
        assert!(datatype(0x4c000406 + 0x100).is_err(), "size bits must agree");
        assert!(datatype(DATATYPE_NULL).unwrap_err().msg.contains("MPI_DATATYPE_NULL"));
        assert!(datatype(12345).is_err());
    }

    #[test]
    fn request_handles_round_trip() {
        assert_eq!(request_id(request_handle(77)).unwrap(), 77);
        assert!(request_id(REQUEST_NULL).is_err());
        assert!(request_id(5).is_err());
    }
}
