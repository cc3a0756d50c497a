//! oxmpi: an implementation of MPI in Rust with MPICH's ABI.
//!
//! `abi` is the C boundary; everything below it is the core, which knows
//! nothing of C types or int handles. See DESIGN.md for the architecture.

#![deny(unsafe_op_in_unsafe_fn)]
#![allow(clippy::missing_safety_doc)]

pub mod abi;
pub mod coll;
pub mod comm;
pub mod datatype;
pub mod error;
pub mod op;
pub mod p2p;
pub mod runtime;
pub mod transport;
