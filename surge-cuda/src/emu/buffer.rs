//! Emulated device memory: host allocations of 8-byte words that kernels write through raw
//! pointers. Every access goes through the [`Emulator`](super::Emulator)'s stream lock, so a
//! launch never overlaps a host read or write of the same memory.

use crate::CudaError;
use std::cell::UnsafeCell;
use surge_codegen::data::Buffer;
use surge_codegen::ir::Elem;

/// A buffer in emulated device memory: `len` elements of `elem` (at least one word allocated).
#[derive(Debug)]
pub struct HostBuf {
    elem: Elem,
    len: usize,
    words: Box<[UnsafeCell<u64>]>,
}

// SAFETY: the words are only read or written (by the host or by kernels) while the emulator's
// stream lock is held, which serializes every access.
unsafe impl Sync for HostBuf {}

fn size_of(elem: Elem) -> Result<usize, CudaError> {
    if elem == Elem::Bool {
        return Err(CudaError::Input("a device buffer of type bool".into()));
    }
    Ok(elem.size_bytes())
}

/// The bytes of a slice of plain numbers.
fn raw<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: the buffer element types are plain numbers: their bytes are initialized and the
    // slice covers exactly the elements.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// The bytes of a slice of plain numbers, writable.
fn raw_mut<T: Copy>(v: &mut [T]) -> &mut [u8] {
    // SAFETY: every bit pattern is a valid value of the buffer element types, and the slice
    // covers exactly the elements.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

impl HostBuf {
    /// `len` zeroed elements of `elem`.
    pub(crate) fn zeros(elem: Elem, len: usize) -> Result<HostBuf, CudaError> {
        let words = (len.max(1) * size_of(elem)?).div_ceil(8);
        Ok(HostBuf {
            elem,
            len,
            words: (0..words).map(|_| UnsafeCell::new(0)).collect(),
        })
    }

    /// A copy of `b`.
    pub(crate) fn upload(b: &Buffer) -> Result<HostBuf, CudaError> {
        let h = HostBuf::zeros(b.elem(), b.len())?;
        let src = surge_codegen::buffer_dispatch!(b, v => raw(v));
        // SAFETY: `h` is new and owned here; its allocation holds at least `src.len()` bytes.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), h.ptr(), src.len()) };
        Ok(h)
    }

    /// `u64` words with the values `v`.
    pub(crate) fn words(v: &[u64]) -> HostBuf {
        HostBuf {
            elem: Elem::U64,
            len: v.len(),
            words: if v.is_empty() {
                vec![UnsafeCell::new(0)].into()
            } else {
                v.iter().map(|&w| UnsafeCell::new(w)).collect()
            },
        }
    }

    /// The first byte of the allocation (kernels write through it).
    pub(crate) fn ptr(&self) -> *mut u8 {
        UnsafeCell::raw_get(self.words.as_ptr()).cast::<u8>()
    }

    /// The size kernels may access: the elements, not the padding of an empty buffer.
    pub(crate) fn bytes(&self) -> u64 {
        (self.len * self.elem.size_bytes()) as u64
    }

    /// Sets every byte of the allocation. The caller holds the stream lock.
    pub(crate) fn fill(&self, byte: u8) {
        // SAFETY: the allocation is `words.len() * 8` bytes; no kernel runs (stream lock).
        unsafe { std::ptr::write_bytes(self.ptr(), byte, self.words.len() * 8) };
    }

    /// The first `n` elements. The caller holds the stream lock.
    pub(crate) fn download(&self, n: usize) -> Result<Buffer, CudaError> {
        if n > self.len {
            return Err(CudaError::Input(format!(
                "internal: reading {n} elements of a buffer of {}",
                self.len
            )));
        }
        let mut b = Buffer::zeroed(self.elem, n);
        let dst = surge_codegen::buffer_dispatch!(&mut b, v => raw_mut(v));
        // SAFETY: `dst` is `n` elements, within this allocation; no kernel runs (stream lock).
        unsafe { std::ptr::copy_nonoverlapping(self.ptr(), dst.as_mut_ptr(), dst.len()) };
        Ok(b)
    }

    /// The words, as `u64`s. The caller holds the stream lock.
    pub(crate) fn read_words(&self) -> Vec<u64> {
        // SAFETY: no kernel runs while the stream lock is held.
        self.words
            .iter()
            .take(self.len.max(1))
            .map(|w| unsafe { *w.get() })
            .collect()
    }
}
