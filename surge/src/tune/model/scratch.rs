//! Scratch space of allocation-free queries: per-class tallies and kernel values live on the
//! stack up to a bound, beyond it in one allocation.

/// Classes up to which [`Classifier::predict`] keeps its per-class tallies on the stack.
pub const STACK_CLASSES: usize = 64;

/// `n` zeros for a query's scratch: on the stack when they fit (queries must not allocate in
/// the common case), else in `heap`.
pub(super) fn zeroed_scratch<'a, const N: usize>(
    stack: &'a mut [f64; N],
    heap: &'a mut Vec<f64>,
    n: usize,
) -> &'a mut [f64] {
    if n <= N {
        &mut stack[..n]
    } else {
        heap.resize(n, 0.0);
        heap
    }
}
