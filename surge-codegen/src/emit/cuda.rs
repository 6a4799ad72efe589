//! The CUDA emitter: CUDA C++ for the variants of a computation (compiled by NVRTC in `surge-cuda`).
