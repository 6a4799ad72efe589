//! The C ABI of a loaded kernel library (ABI 3): the slot type kernels read buffers through, the
//! signature of every exported function, and resolving the functions of each module's phases.

use super::compile::Loaded;
use crate::CpuError;
use surge_codegen::data::Buffer;
use surge_codegen::emit::cpu::CpuProgram;
use surge_codegen::policy::bcsr::BCSR_SHAPES;
use surge_codegen::policy::sell::SELL_CHUNKS;

/// One slot of the slot table: a buffer's data and length, as kernels read it.
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct Buf {
    pub(super) ptr: *const u8,
    pub(super) len: usize,
}
// SAFETY: slots point at buffers that outlive every kernel call made with them; kernels only read
// through them.
unsafe impl Send for Buf {}
unsafe impl Sync for Buf {}

impl Buf {
    /// The slot of a host array: offsets, a layout's columns, a table of slots (a deep phase's
    /// offsets, one slot per level); its length in elements.
    pub(super) fn of_slice<T>(s: &[T]) -> Buf {
        Buf {
            ptr: s.as_ptr() as *const u8,
            len: s.len(),
        }
    }

    /// The slot of `b`.
    pub(super) fn of(b: &Buffer) -> Buf {
        Buf {
            ptr: buffer_ptr(b),
            len: b.len(),
        }
    }
}

pub(super) type OuterFn = unsafe extern "C" fn(*const Buf, *mut usize) -> i32;
pub(super) type ElemsFn = unsafe extern "C" fn(*const Buf, usize, usize, *mut u8) -> i32;
pub(super) type LensFn = unsafe extern "C" fn(*const Buf, usize, usize, *mut u64) -> i32;
pub(super) type RowsFn = unsafe extern "C" fn(*const Buf, usize, usize, *mut u8, *const u64) -> i32;
pub(super) type SubLensFn =
    unsafe extern "C" fn(*const Buf, usize, usize, usize, *const Buf, *mut u64) -> i32;
pub(super) type DeepRowsFn =
    unsafe extern "C" fn(*const Buf, usize, usize, *mut u8, *const Buf) -> i32;
pub(super) type InnerLensFn = unsafe extern "C" fn(*const Buf, usize, usize, *mut u64) -> i32;
pub(super) type PartialFn = unsafe extern "C" fn(*const Buf, usize, usize, usize, *mut u8) -> i32;
pub(super) type CombineFn =
    unsafe extern "C" fn(*const Buf, usize, *const u8, *const u8, *mut u8) -> i32;
pub(super) type FinishFn = unsafe extern "C" fn(*const Buf, usize, *const u8, *mut u8) -> i32;
pub(super) type ChunkFn =
    unsafe extern "C" fn(*const Buf, usize, usize, usize, u8, *const u8, *mut u8) -> i32;
pub(super) type RunsFn =
    unsafe extern "C" fn(*const Buf, usize, usize, *mut u8, *mut usize, *mut u8) -> i32;
pub(super) type DiagFn = unsafe extern "C" fn(*const Buf, *const Buf, usize, usize, *mut u8) -> i32;
pub(super) type SellFn = unsafe extern "C" fn(*const Buf, *const Buf, usize, usize, *mut u8) -> i32;
pub(super) type BcsrFn = unsafe extern "C" fn(*const Buf, *const Buf, usize, usize, *mut u8) -> i32;
pub(super) type TakeErrorFn = unsafe extern "C" fn(*mut u8, usize) -> usize;

/// The resolved functions of one phase in one module.
#[derive(Clone, Copy)]
pub(super) struct PhaseFns {
    pub(super) outer: OuterFn,
    pub(super) elems: Option<ElemsFn>,
    pub(super) lens: Option<LensFn>,
    pub(super) rows: Option<RowsFn>,
    pub(super) sublens: Option<SubLensFn>,
    pub(super) deep_rows: Option<DeepRowsFn>,
    pub(super) inner_lens: Option<InnerLensFn>,
    pub(super) partial: Option<PartialFn>,
    pub(super) combine: Option<CombineFn>,
    pub(super) finish: Option<FinishFn>,
    pub(super) chunk: Option<ChunkFn>,
    pub(super) runs: Option<RunsFn>,
    pub(super) diag: Option<DiagFn>,
    /// `sell<C>` per chunk size of `policy::sell::SELL_CHUNKS`.
    pub(super) sell: [Option<SellFn>; SELL_CHUNKS.len()],
    /// `bcsr<r>x<c>` per block shape of `policy::bcsr::BCSR_SHAPES`.
    pub(super) bcsr: [Option<BcsrFn>; BCSR_SHAPES.len()],
    /// `lanes`: the rows in four partial sums (`layout1 = lanes`).
    pub(super) lanes: Option<SellFn>,
}
impl std::fmt::Debug for PhaseFns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PhaseFns")
    }
}

/// `surge_take_error`, the library's reader of the calling thread's last error.
#[derive(Clone, Copy)]
pub(super) struct TakeError(pub(super) TakeErrorFn);
impl std::fmt::Debug for TakeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("surge_take_error")
    }
}

impl TakeError {
    /// The calling thread's last error message (at most 4096 bytes).
    pub(super) fn message(self) -> String {
        let mut buf = vec![0u8; 4096];
        // SAFETY: the buffer holds `cap` bytes.
        let n = unsafe { (self.0)(buf.as_mut_ptr(), buf.len()) };
        buf.truncate(n.min(4096));
        String::from_utf8_lossy(&buf).into_owned()
    }
}

/// The functions of one library: per module, per phase, and the error reader.
#[derive(Debug)]
pub(super) struct LibraryFns {
    pub(super) phases: Vec<Vec<PhaseFns>>,
    pub(super) take_error: TakeError,
}

fn sym<T: Copy>(lib: &libloading::Library, name: &str) -> Option<T> {
    // SAFETY: the generated runtime exports these names with these signatures (ABI 3).
    unsafe { lib.get::<T>(name.as_bytes()).ok().map(|s| *s) }
}

impl LibraryFns {
    /// Resolves the functions of every module's phases in `lib`, the library of `program`.
    pub(super) fn load(program: &CpuProgram, lib: &Loaded) -> Result<LibraryFns, CpuError> {
        let mut phases = Vec::new();
        for m in &program.modules {
            let mut per_phase = Vec::new();
            for (pi, _) in program.phases.iter().enumerate() {
                let p = format!("m{}_p{pi}_", m.index);
                let outer = sym::<OuterFn>(&lib.lib, &format!("{p}outer")).ok_or_else(|| {
                    CpuError::Compile {
                        variants: m.variants.clone(),
                        message: format!("the kernel library lacks {p}outer"),
                        source_path: Some(lib.source_path.clone()),
                    }
                })?;
                per_phase.push(PhaseFns {
                    outer,
                    elems: sym(&lib.lib, &format!("{p}elems")),
                    lens: sym(&lib.lib, &format!("{p}lens")),
                    rows: sym(&lib.lib, &format!("{p}rows")),
                    sublens: sym(&lib.lib, &format!("{p}sublens")),
                    deep_rows: sym(&lib.lib, &format!("{p}deep_rows")),
                    inner_lens: sym(&lib.lib, &format!("{p}inner_lens")),
                    partial: sym(&lib.lib, &format!("{p}partial")),
                    combine: sym(&lib.lib, &format!("{p}combine")),
                    finish: sym(&lib.lib, &format!("{p}finish")),
                    chunk: sym(&lib.lib, &format!("{p}chunk")),
                    runs: sym(&lib.lib, &format!("{p}runs")),
                    diag: sym(&lib.lib, &format!("{p}diag")),
                    sell: SELL_CHUNKS.map(|c| sym(&lib.lib, &format!("{p}sell{c}"))),
                    bcsr: BCSR_SHAPES.map(|(r, c)| sym(&lib.lib, &format!("{p}bcsr{r}x{c}"))),
                    lanes: sym(&lib.lib, &format!("{p}lanes")),
                });
            }
            phases.push(per_phase);
        }
        let take_error = sym::<TakeErrorFn>(&lib.lib, "surge_take_error")
            .expect("surge_take_error in a checked library");
        Ok(LibraryFns {
            phases,
            take_error: TakeError(take_error),
        })
    }
}

/// The address of `b`'s data.
pub(super) fn buffer_ptr(b: &Buffer) -> *const u8 {
    match b {
        Buffer::F32(v) => v.as_ptr() as *const u8,
        Buffer::F64(v) => v.as_ptr() as *const u8,
        Buffer::I32(v) => v.as_ptr() as *const u8,
        Buffer::I64(v) => v.as_ptr() as *const u8,
        Buffer::U32(v) => v.as_ptr() as *const u8,
        Buffer::U64(v) => v.as_ptr() as *const u8,
    }
}
