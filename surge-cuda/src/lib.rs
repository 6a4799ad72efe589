//! Surge's CUDA backend. Today: finding the CUDA driver and NVRTC libraries at run time, so that
//! everything builds and runs on machines without a GPU and a missing GPU is an error value.
//! NVRTC compilation and launches through cudarc build on this.

use std::fmt;

/// The one public error type of `surge-cuda`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CudaError {
    /// A CUDA library could not be loaded (no driver, no GPU, no NVRTC).
    #[error("{library} is not available: {reason}")]
    Unavailable {
        library: &'static str,
        reason: String,
    },
}

/// A dynamically loadable CUDA library and the file names searched for it, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Library {
    /// The driver API (`libcuda`), present only where an NVIDIA driver is installed.
    Driver,
    /// The runtime compiler. Debian ships only the versioned `libnvrtc.so.11.2`.
    Nvrtc,
}

impl Library {
    pub fn candidates(self) -> &'static [&'static str] {
        match self {
            Library::Driver => &["libcuda.so.1", "libcuda.so"],
            Library::Nvrtc => &["libnvrtc.so", "libnvrtc.so.12", "libnvrtc.so.11.2"],
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Library::Driver => "the CUDA driver (libcuda)",
            Library::Nvrtc => "NVRTC (libnvrtc)",
        }
    }
}

impl fmt::Display for Library {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Loads the first loadable candidate of `lib` and returns its file name; the error lists what
/// was tried and why each failed.
pub fn probe(lib: Library) -> Result<&'static str, CudaError> {
    let mut reasons = Vec::new();
    for name in lib.candidates() {
        // SAFETY: loading a CUDA library runs its initializers, which have no preconditions on us;
        // the handle is dropped at once and no symbol is called.
        match unsafe { libloading::Library::new(*name) } {
            Ok(_) => return Ok(name),
            Err(e) => reasons.push(format!("{name}: {e}")),
        }
    }
    Err(CudaError::Unavailable {
        library: lib.name(),
        reason: reasons.join("; "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probing_never_panics_and_names_what_was_tried() {
        for lib in [Library::Driver, Library::Nvrtc] {
            match probe(lib) {
                Ok(name) => assert!(lib.candidates().contains(&name)),
                Err(CudaError::Unavailable { reason, .. }) => {
                    eprintln!("skipping GPU checks: {lib} not found ({reason})");
                    for c in lib.candidates() {
                        assert!(reason.contains(c), "{reason}");
                    }
                }
            }
        }
    }
}
