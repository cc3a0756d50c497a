//! Collective operations: argument checks and buffer staging around the
//! algorithms in `coll`. Reductions work on packed data: the buffer is
//! packed into its reduction unit (a predefined type, pairs without their
//! holes), reduced, and unpacked into the receive buffer.

use super::handles;
use super::{mpi_fn, with_state};
use crate::coll;
use crate::datatype::{pack, TypeInfo, TypeRef};
use crate::err;
use crate::error::MpiResult;
use std::os::raw::{c_int, c_void};

/// MPI_IN_PLACE
const IN_PLACE: usize = usize::MAX;

/// The communicator of a collective: an intracommunicator.
fn intra(st: &crate::runtime::State, comm: c_int) -> MpiResult<crate::comm::Comm> {
    let c = handles::comm(st, comm)?;
    if c.remote.is_some() {
        return err!(
            Comm,
            "collectives on intercommunicators are not implemented yet; merge it first (MPI_Intercomm_merge)"
        );
    }
    Ok(c.clone())
}

fn check_root(size: usize, root: c_int) -> MpiResult<usize> {
    if root < 0 || root as usize >= size {
        return err!(Root, "root {root} is out of range: the communicator has {size} ranks (0..{})", size - 1);
    }
    Ok(root as usize)
}

fn check_count(count: c_int, datatype: c_int) -> MpiResult<(usize, TypeRef)> {
    if count < 0 {
        return err!(Count, "count {count} is negative");
    }
    Ok((count as usize, handles::committed(datatype)?))
}

fn check_buf(buf: *const c_void, count: usize, ty: &TypeInfo, name: &str) -> MpiResult<()> {
    if buf.is_null() && count > 0 && ty.size > 0 && ty.contents.is_none() {
        return err!(Buffer, "{name} is a null pointer but count is {count}");
    }
    Ok(())
}

/// Pack `count` items at `buf`.
fn packed(buf: *const c_void, ty: &TypeInfo, count: usize) -> Vec<u8> {
    let mut v = vec![0u8; ty.size * count];
    // SAFETY: the caller checked the buffer holds `count` items.
    unsafe { pack::pack(ty, count, buf as *const u8, &mut v) };
    v
}

fn unpacked(buf: *mut c_void, ty: &TypeInfo, data: &[u8]) {
    // SAFETY: the caller checked the buffer holds the items.
    unsafe { pack::unpack(ty, data, buf as *mut u8) };
}

mpi_fn! {
    Initialized fn MPI_Barrier / PMPI_Barrier(comm: c_int) errors(Some(comm)) {
        with_state(|st| {
            let c = intra(st, comm)?;
            coll::barrier(&mut st.engine, &c)
        })
    }
}

mpi_fn! {
    Initialized fn MPI_Bcast / PMPI_Bcast(buffer: *mut c_void, count: c_int, datatype: c_int, root: c_int, comm: c_int) errors(Some(comm)) {
        with_state(|st| {
            let c = intra(st, comm)?;
            let (count, ty) = check_count(count, datatype)?;
            let root = check_root(c.size(), root)?;
            check_buf(buffer, count, &ty, "buffer")?;
            if ty.is_contiguous() {
                // SAFETY: the user buffer holds `count` contiguous items.
                let b = unsafe { std::slice::from_raw_parts_mut(buffer as *mut u8, ty.size * count) };
                return coll::bcast(&mut st.engine, &c, b, root);
            }
            let mut data = if c.rank == root { packed(buffer, &ty, count) } else { vec![0u8; ty.size * count] };
            coll::bcast(&mut st.engine, &c, &mut data, root)?;
            if c.rank != root {
                unpacked(buffer, &ty, &data);
            }
            Ok(())
        })
    }
}

/// The predefined type a reduction of `ty` works on, checked against `op`.
fn unit(ty: &TypeInfo, op: crate::op::Op) -> MpiResult<TypeInfo> {
    let u = match ty.reduction_unit() {
        Some(u) => u,
        None if ty.size == 0 => return Ok(TypeInfo::basic(&ty.name, crate::datatype::Basic::Byte, 1)),
        None => return err!(Op, "{} needs a datatype made of one predefined type; this one mixes several", op.name()),
    };
    op.check(&u).map_err(|mut e| {
        if u.name != ty.name {
            e.msg = format!(
                "{} (the elements of datatype {})",
                e.msg,
                if ty.name.is_empty() { "<derived>" } else { &ty.name }
            );
        }
        e
    })?;
    Ok(u)
}

mpi_fn! {
    Initialized fn MPI_Reduce / PMPI_Reduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: c_int, op: c_int, root: c_int, comm: c_int) errors(Some(comm)) {
        with_state(|st| {
            let c = intra(st, comm)?;
            let (count, ty) = check_count(count, datatype)?;
            let op = handles::op(op)?;
            let u = unit(&ty, op)?;
            let root = check_root(c.size(), root)?;
            let in_place = sendbuf as usize == IN_PLACE;
            if in_place && c.rank != root {
                return err!(Buffer, "MPI_IN_PLACE is only allowed as sendbuf at the root of MPI_Reduce");
            }
            if !in_place {
                check_buf(sendbuf, count, &ty, "sendbuf")?;
            }
            if c.rank == root {
                check_buf(recvbuf, count, &ty, "recvbuf")?;
            }
            let src = if in_place { recvbuf as *const c_void } else { sendbuf };
            let mut data = packed(src, &ty, count);
            coll::reduce(&mut st.engine, &c, &mut data, &u, op, root)?;
            if c.rank == root {
                unpacked(recvbuf, &ty, &data);
            }
            Ok(())
        })
    }
}

mpi_fn! {
    Initialized fn MPI_Allreduce / PMPI_Allreduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: c_int, op: c_int, comm: c_int) errors(Some(comm)) {
        with_state(|st| {
            let c = intra(st, comm)?;
            let (count, ty) = check_count(count, datatype)?;
            let op = handles::op(op)?;
            let u = unit(&ty, op)?;
            let in_place = sendbuf as usize == IN_PLACE;
            if !in_place {
                check_buf(sendbuf, count, &ty, "sendbuf")?;
            }
            check_buf(recvbuf, count, &ty, "recvbuf")?;
            let src = if in_place { recvbuf as *const c_void } else { sendbuf };
            let mut data = packed(src, &ty, count);
            coll::allreduce(&mut st.engine, &c, &mut data, &u, op)?;
            unpacked(recvbuf, &ty, &data);
            Ok(())
        })
    }
}
