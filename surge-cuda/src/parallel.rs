//! Compiling independent programs on several threads at once (NVRTC programs, host C++).

use crate::CudaError;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` of every item, on up to `threads` threads; the results in item order.
pub(crate) fn map<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> Result<R, CudaError> + Sync,
) -> Result<Vec<R>, CudaError> {
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<Result<R, CudaError>>>> =
        items.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|sc| {
        for _ in 0..threads.min(items.len()).max(1) {
            sc.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = f(item);
                    if let Ok(mut slot) = results[i].lock() {
                        *slot = Some(r);
                    }
                }
            });
        }
    });
    results
        .into_iter()
        .map(|m| {
            m.into_inner()
                .ok()
                .flatten()
                .unwrap_or_else(|| Err(CudaError::Input("a compile thread panicked".into())))
        })
        .collect()
}
