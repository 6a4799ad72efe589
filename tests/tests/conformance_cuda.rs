//! The backend conformance suite on the CUDA backend: the same test bodies as the CPU backend,
//! every variant of each phase against the reference interpreter. They need a GPU, so they are
//! ignored unless asked for: `cargo test -p tests --test conformance_cuda -- --ignored` on a GPU
//! machine, where a missing GPU then fails them.

tests::backend_conformance!(
    cuda,
    tests::conformance::CudaBackend,
    #[ignore = "needs a CUDA GPU: run `cargo test -- --ignored` on a GPU machine"]
);
