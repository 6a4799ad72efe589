//! Straightforward single-threaded enumerator of the paper's GEMM space for a Tesla K40c
//! (Figures 8-15: double real, no transposes). This is the benchmark baseline: the 15 loops in
//! the paper's order (Figure 11), every derived value and constraint evaluated at the loop where
//! its last input becomes bound, no solving, no counting shortcuts -- the shape of the C the
//! paper's generator emits. Python 2 `/` on ints is floor division; all operands are positive.
//!
//! Used by `src/bin/beast_bench.rs` and runnable on its own as a test
//! vector: `baseline_count()` returns the survivor count.

/// Survivor count of the K40c GEMM space, computed by plain nested loops.
pub fn baseline_count() -> u64 {
    // Figure 8 / 9 (cc 3.5) / 10 / 14.
    let max_threads_per_block: i64 = 1024;
    let max_threads_dim_x: i64 = 1024;
    let max_threads_dim_y: i64 = 1024;
    let max_shared_mem_per_block: i64 = 49152;
    let warp_size: i64 = 32;
    let max_regs_per_block: i64 = 65536;
    let max_registers_per_multi_processor: i64 = 65536;
    let max_shmem_per_multi_processor: i64 = 49152;
    let float_size: i64 = 4;
    let max_blocks_per_multi_processor: i64 = 16;
    let max_registers_per_thread: i64 = 255;
    let min_threads_per_multi_processor: i64 = 256;
    let min_fmas_per_load: i64 = 2;
    // precision = "double", arithmetic = "real", trans_a = trans_b = 0
    let prec_mul: i64 = 2; // precision == "double"
    let blk_k_max = max_threads_dim_x.min(max_threads_dim_y);

    let mut survivors: u64 = 0;
    for dim_m in 1..=max_threads_dim_x {
        for dim_n in 1..=max_threads_dim_y {
            let threads_per_block = dim_m * dim_n;
            if threads_per_block > max_threads_per_block {
                continue; // over_max_threads
            }
            if threads_per_block % warp_size != 0 {
                continue; // partial_warps
            }
            let mut blk_m = dim_m;
            while blk_m <= max_threads_dim_x {
                let thr_m = blk_m / dim_m;
                let mut blk_n = dim_n;
                while blk_n <= max_threads_dim_y {
                    let thr_n = blk_n / dim_n;
                    let regs_per_thread = thr_m * thr_n * prec_mul;
                    let regs_per_block = regs_per_thread * threads_per_block;
                    let max_blocks_by_regs = (max_registers_per_multi_processor / regs_per_block)
                        .min(max_blocks_per_multi_processor);
                    let max_threads_by_regs = max_blocks_by_regs * threads_per_block;
                    let reject = regs_per_thread > max_registers_per_thread
                        || regs_per_block > max_regs_per_block
                        || max_threads_by_regs < min_threads_per_multi_processor;
                    if !reject {
                        for blk_k in 1..=blk_k_max {
                            let shmem_per_block = blk_k * (blk_m + blk_n) * float_size * prec_mul;
                            if shmem_per_block > max_shared_mem_per_block {
                                continue; // over_max_shmem
                            }
                            let max_blocks_by_shmem = (max_shmem_per_multi_processor
                                / shmem_per_block)
                                .min(max_blocks_per_multi_processor);
                            if max_blocks_by_shmem * threads_per_block
                                < min_threads_per_multi_processor
                            {
                                continue; // low_occupancy_shmem
                            }
                            let fmas_per_block = thr_m * thr_n * blk_k * threads_per_block;
                            for dim_vec in 1..3 {
                                let loads_per_thread = (thr_m + thr_n) * blk_k / dim_vec;
                                let loads_per_block = loads_per_thread * threads_per_block;
                                if fmas_per_block / loads_per_block < min_fmas_per_load {
                                    continue; // low_fmas
                                }
                                let vec_mul_hi = if dim_vec == 1 { 0 } else { 1 };
                                for _vec_mul in 0..=vec_mul_hi {
                                    for dim_m_a in 1..=blk_m / dim_vec {
                                        for dim_n_a in 1..=blk_k {
                                            if dim_m_a * dim_n_a != threads_per_block {
                                                continue; // cant_reshape_a1
                                            }
                                            if blk_m % (dim_m_a * dim_vec) != 0
                                                || blk_k % dim_n_a != 0
                                            {
                                                continue; // cant_reshape_a2
                                            }
                                            for dim_m_b in 1..=blk_k / dim_vec {
                                                for dim_n_b in 1..=blk_n {
                                                    if dim_m_b * dim_n_b != threads_per_block {
                                                        continue; // cant_reshape_b1
                                                    }
                                                    if blk_k % (dim_m_b * dim_vec) != 0
                                                        || blk_n % dim_n_b != 0
                                                    {
                                                        continue; // cant_reshape_b2
                                                    }
                                                    for _tex_a in 0..2 {
                                                        for _tex_b in 0..2 {
                                                            for _shmem_l1 in 0..2 {
                                                                for _shmem_banks in 0..2 {
                                                                    survivors += 1;
                                                                }
                                                            }
                                                        }
                                                    }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                    blk_n += dim_n;
                }
                blk_m += dim_m;
            }
        }
    }
    survivors
}
