//! One launch in the emulator: the kernel's arguments as the C++ side reads them
//! (`surge_emu::Launch`, mirrored here with `repr(C)`), and the grid's blocks run in parallel on
//! rayon, each by the kernel's entry `<name>__surge_emu` on one host thread.

use super::buffer::HostBuf;
use crate::CudaError;
use crate::args::LitArg;
use crate::runtime::KArg;
use rayon::prelude::*;
use std::ffi::{CString, c_char, c_void};

/// `surge_emu::Arg`.
#[repr(C)]
struct Arg {
    ptr: *mut c_void,
    bytes: u64,
    value: u64,
    name: *const c_char,
}

/// `surge_emu::Launch`.
#[repr(C)]
struct Launch {
    kernel: *const c_char,
    grid: [u32; 3],
    block: [u32; 3],
    nargs: u32,
    args: *const Arg,
    shared_bytes: u64,
}

/// A launch shared by the threads that run its blocks.
struct Shared<'a>(&'a Launch);
// SAFETY: the launch and the argument array it points to are read-only while the blocks run;
// the buffers they point to are written by kernels only (the emulator's stream lock is held).
unsafe impl Sync for Shared<'_> {}

/// The entry of a kernel: runs block `b` of the launch; non-zero with a message on a fault.
pub(crate) type Entry = unsafe extern "C" fn(*const c_void, u64, *mut c_char, u64) -> i32;

const MESSAGE: usize = 1024;

fn by_value(l: &LitArg) -> u64 {
    match *l {
        LitArg::I32(v) => v as i64 as u64,
        LitArg::I64(v) => v as u64,
        LitArg::U32(v) => u64::from(v),
        LitArg::U64(v) => v,
    }
}

/// Runs `entry` on `grid` blocks of `block` threads, with `shared_bytes` of dynamic shared
/// memory per block, on `args`. A fault is [`CudaError::Fault`] with the message of the lowest
/// failing block.
pub(crate) fn run(
    entry: Entry,
    name: &str,
    (grid, block, shared_bytes): (u32, (u32, u32), u64),
    args: &[KArg<'_, super::Emulator>],
) -> Result<(), CudaError> {
    let names: Vec<CString> = args
        .iter()
        .map(|a| match a {
            KArg::Buf(_, n) | KArg::Words(_, n) => CString::new(*n).unwrap_or_default(),
            _ => CString::default(),
        })
        .collect();
    let buf = |b: &HostBuf, n: &CString| Arg {
        ptr: b.ptr().cast(),
        bytes: b.bytes(),
        value: 0,
        name: n.as_ptr(),
    };
    let val = |value: u64, n: &CString| Arg {
        ptr: std::ptr::null_mut(),
        bytes: 0,
        value,
        name: n.as_ptr(),
    };
    let c_args: Vec<Arg> = args
        .iter()
        .zip(&names)
        .map(|(a, n)| match a {
            KArg::Buf(b, _) | KArg::Words(b, _) => buf(b, n),
            KArg::U64(v) => val(*v, n),
            KArg::Lit(l) => val(by_value(l), n),
            KArg::Unused => val(0, n),
        })
        .collect();
    let kernel = CString::new(name).unwrap_or_default();
    let launch = Launch {
        kernel: kernel.as_ptr(),
        grid: [grid.max(1), 1, 1],
        block: [block.0, block.1, 1],
        nargs: c_args.len() as u32,
        args: c_args.as_ptr(),
        shared_bytes,
    };
    let shared = Shared(&launch);
    let fault = (0..u64::from(grid.max(1)))
        .into_par_iter()
        .filter_map(|b| {
            let l = &shared;
            let mut msg = vec![0u8; MESSAGE];
            // SAFETY: `entry` is a kernel entry of a loaded emulator library with the declared
            // signature; the launch describes `nargs` live arguments whose buffers hold `bytes`
            // bytes each, and `msg` holds MESSAGE bytes.
            let rc = unsafe {
                entry(
                    std::ptr::from_ref(l.0).cast(),
                    b,
                    msg.as_mut_ptr().cast(),
                    MESSAGE as u64,
                )
            };
            (rc != 0).then(|| {
                let end = msg.iter().position(|&c| c == 0).unwrap_or(msg.len());
                (b, String::from_utf8_lossy(&msg[..end]).into_owned())
            })
        })
        .min_by_key(|(b, _)| *b);
    match fault {
        None => Ok(()),
        Some((_, message)) => Err(CudaError::Fault {
            kernel: name.to_string(),
            variant: None,
            message,
        }),
    }
}
