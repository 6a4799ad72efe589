//! The backend conformance suite on the CUDA emulator: every CUDA variant, compiled for the
//! host from the exact source NVRTC compiles and run with CUDA's execution model, against the
//! reference interpreter. Runs on every machine (it needs a C++20 compiler, not a GPU). On the
//! shared matrices of over `EMU_EVERY_VARIANT_ROWS` (1000) rows it runs every 16th SpMV variant;
//! the ignored `spmv_shared_matrices_every_variant_full` runs all of them (about 10 ms per row:
//! 1016 s measured on 2 cores): `cargo test -p tests --test conformance_cuda_emu -- --ignored`.

use tests::conformance::{CudaEmuBackend, spmv_matches_interpreter_on_shared_matrices};

tests::backend_conformance!(cuda_emu, tests::conformance::CudaEmuBackend { full: false });

#[test]
#[ignore = "every SpMV variant on every shared matrix in the emulator: about 17 minutes"]
fn spmv_shared_matrices_every_variant_full() {
    spmv_matches_interpreter_on_shared_matrices(&CudaEmuBackend { full: true });
}
