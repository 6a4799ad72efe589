//! Kernel arguments on the device: buffers of the IR's element types ([`DevBuf`]: uploaded
//! inputs, phase results) and integer literals passed by value ([`LitArg`]).

use crate::{CudaError, driver_err};
use cudarc::driver::{CudaSlice, CudaStream, LaunchArgs, PushKernelArg};
use std::sync::Arc;
use surge_codegen::data::Buffer;
use surge_codegen::ir::Literal;

/// A GPU buffer of one of the IR's element types.
#[derive(Debug)]
pub enum DevBuf {
    F32(CudaSlice<f32>),
    F64(CudaSlice<f64>),
    I32(CudaSlice<i32>),
    I64(CudaSlice<i64>),
    U32(CudaSlice<u32>),
    U64(CudaSlice<u64>),
}

macro_rules! dev_dispatch_impl {
    ($self:expr, $v:ident => $body:expr) => {
        match $self {
            DevBuf::F32($v) => $body,
            DevBuf::F64($v) => $body,
            DevBuf::I32($v) => $body,
            DevBuf::I64($v) => $body,
            DevBuf::U32($v) => $body,
            DevBuf::U64($v) => $body,
        }
    };
}

impl DevBuf {
    pub(crate) fn upload(s: &Arc<CudaStream>, b: &Buffer) -> Result<DevBuf, CudaError> {
        let e = driver_err("uploading an input");
        // Empty buffers are allocated with one element so every pointer is valid.
        macro_rules! up {
            ($V:ident, $v:expr) => {
                DevBuf::$V(if $v.is_empty() {
                    s.alloc_zeros(1).map_err(e)?
                } else {
                    s.clone_htod($v.as_slice()).map_err(e)?
                })
            };
        }
        Ok(match b {
            Buffer::F32(v) => up!(F32, v),
            Buffer::F64(v) => up!(F64, v),
            Buffer::I32(v) => up!(I32, v),
            Buffer::I64(v) => up!(I64, v),
            Buffer::U32(v) => up!(U32, v),
            Buffer::U64(v) => up!(U64, v),
        })
    }

    pub(crate) fn zeros(
        s: &Arc<CudaStream>,
        elem: surge_codegen::ir::Elem,
        n: usize,
    ) -> Result<DevBuf, CudaError> {
        use surge_codegen::ir::Elem;
        let e = driver_err("allocating a phase result");
        let n = n.max(1);
        Ok(match elem {
            Elem::F32 => DevBuf::F32(s.alloc_zeros(n).map_err(e)?),
            Elem::F64 => DevBuf::F64(s.alloc_zeros(n).map_err(e)?),
            Elem::I32 => DevBuf::I32(s.alloc_zeros(n).map_err(e)?),
            Elem::I64 => DevBuf::I64(s.alloc_zeros(n).map_err(e)?),
            Elem::U32 => DevBuf::U32(s.alloc_zeros(n).map_err(e)?),
            Elem::U64 => DevBuf::U64(s.alloc_zeros(n).map_err(e)?),
            Elem::Bool => return Err(CudaError::Input("a phase result of type bool".into())),
        })
    }

    pub(crate) fn download(&self, s: &Arc<CudaStream>, n: usize) -> Result<Buffer, CudaError> {
        let e = driver_err("downloading a result");
        Ok(match self {
            DevBuf::F32(d) => Buffer::F32(s.clone_dtoh(d).map_err(e)?[..n].to_vec()),
            DevBuf::F64(d) => Buffer::F64(s.clone_dtoh(d).map_err(e)?[..n].to_vec()),
            DevBuf::I32(d) => Buffer::I32(s.clone_dtoh(d).map_err(e)?[..n].to_vec()),
            DevBuf::I64(d) => Buffer::I64(s.clone_dtoh(d).map_err(e)?[..n].to_vec()),
            DevBuf::U32(d) => Buffer::U32(s.clone_dtoh(d).map_err(e)?[..n].to_vec()),
            DevBuf::U64(d) => Buffer::U64(s.clone_dtoh(d).map_err(e)?[..n].to_vec()),
        })
    }

    pub(crate) fn push<'a>(&'a self, b: &mut LaunchArgs<'a>) {
        dev_dispatch!(self, d => { b.arg(d); })
    }
}

/// An integer literal passed by value (`ArgSlot::Literal`), in its own type.
#[derive(Debug, Clone, Copy)]
pub enum LitArg {
    I32(i32),
    I64(i64),
    U32(u32),
    U64(u64),
}

impl LitArg {
    pub(crate) fn of(l: Literal) -> LitArg {
        match l {
            Literal::I32(v) => LitArg::I32(v),
            Literal::I64(v) => LitArg::I64(v),
            Literal::U32(v) => LitArg::U32(v),
            Literal::U64(v) => LitArg::U64(v),
            other => panic!("internal: {other} is not a run-time literal"),
        }
    }

    pub(crate) fn push<'a>(&'a self, b: &mut LaunchArgs<'a>) {
        match self {
            LitArg::I32(v) => b.arg(v),
            LitArg::I64(v) => b.arg(v),
            LitArg::U32(v) => b.arg(v),
            LitArg::U64(v) => b.arg(v),
        };
    }
}

pub(crate) use dev_dispatch_impl as dev_dispatch;
