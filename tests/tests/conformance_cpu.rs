//! The backend conformance suite on the native CPU backend: every enumerated variant of reduce,
//! scan and spmv (and an integer computation) against the reference interpreter.

tests::backend_conformance!(cpu, tests::conformance::CpuBackend);
