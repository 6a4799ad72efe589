//! The backend conformance suite on the CUDA backend: the same test bodies as the CPU backend,
//! every variant of each phase against the reference interpreter. Without a GPU every test prints
//! `skipping cuda conformance: no CUDA device (...)` and passes.

tests::backend_conformance!(cuda, tests::conformance::CudaBackend);
