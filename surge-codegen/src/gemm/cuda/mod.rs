//! DGEMM on CUDA as the one-sided-factorizations paper writes it (its Figure 6), for current
//! CUDA: one kernel per point of the paper's nine-parameter space (`BLK_M/N/K`, `DIM_X/Y`,
//! `DIM_XA/YA`, `DIM_XB/YB`), texture fetches replaced by `__ldg` loads with edge guards, so any
//! `m, n, k` are correct. `space.rs` lists the survivors of the paper's nine checks for a device
//! (`spaces/osf_dgemm_k40c.toml` is the paper's own space); `emit.rs` writes them as a few CUDA
//! programs of many kernels each; `surge_cuda::gemm` compiles, launches and times them. See
//! `README.md`.

mod emit;
mod space;
#[cfg(test)]
mod tests;

pub use emit::{OsfProgram, emit, programs};
pub use space::{K40C_SPACE, best_of_paper, sample, space_toml, survivors, survivors_of};

use serde::{Deserialize, Serialize};
use std::fmt;

/// One kernel of the paper's space: the tile of C a block computes (`BLK_M x BLK_N`, stepping
/// `BLK_K` through k), the block's shape over C (`DIM_X x DIM_Y` threads, each computing a
/// `BLK_M/DIM_X x BLK_N/DIM_Y` register tile), and its shapes reading A (`DIM_XA x DIM_YA`) and
/// B (`DIM_XB x DIM_YB`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct OsfKernel {
    pub blk_m: u32,
    pub blk_n: u32,
    pub blk_k: u32,
    pub dim_x: u32,
    pub dim_y: u32,
    pub dim_xa: u32,
    pub dim_ya: u32,
    pub dim_xb: u32,
    pub dim_yb: u32,
}

impl OsfKernel {
    /// The paper's fastest kernel on a K40c: 96 x 64 x 12, 16 x 8 threads for C, 32 x 4 to read
    /// A, 4 x 32 to read B.
    pub const PAPER_BEST: OsfKernel = OsfKernel {
        blk_m: 96,
        blk_n: 64,
        blk_k: 12,
        dim_x: 16,
        dim_y: 8,
        dim_xa: 32,
        dim_ya: 4,
        dim_xb: 4,
        dim_yb: 32,
    };

    /// Threads per block.
    pub fn threads(&self) -> u32 {
        self.dim_x * self.dim_y
    }

    /// The kernel's symbol: `surge_osf_dgemm_96x64x12_16x8_32x4_4x32` (the id's numbers).
    pub fn name(&self) -> String {
        let id = self.id();
        let numbers = id["osf:".len()..]
            .replace(".a", "_")
            .replace(".b", "_")
            .replace('.', "_");
        format!("surge_osf_dgemm_{numbers}")
    }

    /// The nine parameters in the paper's (and the template's) order: BLK_M, BLK_N, BLK_K,
    /// DIM_X, DIM_Y, DIM_XA, DIM_YA, DIM_XB, DIM_YB.
    pub fn params(&self) -> [u32; 9] {
        [
            self.blk_m,
            self.blk_n,
            self.blk_k,
            self.dim_x,
            self.dim_y,
            self.dim_xa,
            self.dim_ya,
            self.dim_xb,
            self.dim_yb,
        ]
    }

    /// `osf:96x64x12.16x8.a32x4.b4x32` (what reports and errors show).
    pub fn id(&self) -> String {
        let [bm, bn, bk, dx, dy, xa, ya, xb, yb] = self.params();
        format!("osf:{bm}x{bn}x{bk}.{dx}x{dy}.a{xa}x{ya}.b{xb}x{yb}")
    }

    /// The kernel an id names ([`OsfKernel::id`]'s form).
    pub fn parse(id: &str) -> Option<OsfKernel> {
        let rest = id.strip_prefix("osf:")?;
        let mut parts = rest.split('.');
        let dims = |s: &str, n: usize| -> Option<Vec<u32>> {
            let v: Vec<u32> = s
                .split('x')
                .map(|d| d.parse().ok())
                .collect::<Option<_>>()?;
            (v.len() == n).then_some(v)
        };
        let blk = dims(parts.next()?, 3)?;
        let c = dims(parts.next()?, 2)?;
        let a = dims(parts.next()?.strip_prefix('a')?, 2)?;
        let b = dims(parts.next()?.strip_prefix('b')?, 2)?;
        if parts.next().is_some() {
            return None;
        }
        let k = OsfKernel {
            blk_m: blk[0],
            blk_n: blk[1],
            blk_k: blk[2],
            dim_x: c[0],
            dim_y: c[1],
            dim_xa: a[0],
            dim_ya: a[1],
            dim_xb: b[0],
            dim_yb: b[1],
        };
        k.check().is_ok().then_some(k)
    }

    /// Whether the kernel can be emitted: non-zero sizes, the block tiles C
    /// (`BLK_M % DIM_X == 0`, `BLK_N % DIM_Y == 0`), and the paper's check 6 (the block reads the
    /// A and B stripes without cleanup code). The emitted template asserts the same at compile
    /// time. Resource limits (checks 2-5) are the space's business, not this one's.
    pub fn check(&self) -> Result<(), String> {
        let all = self.params();
        if all.contains(&0) {
            return Err(format!("{}: a size is zero", self.id()));
        }
        let t = self.threads();
        if !self.blk_m.is_multiple_of(self.dim_x) || !self.blk_n.is_multiple_of(self.dim_y) {
            return Err(format!(
                "{}: the {}x{} block does not tile the {}x{} tile of C",
                self.id(),
                self.dim_x,
                self.dim_y,
                self.blk_m,
                self.blk_n
            ));
        }
        let a_ok = self.dim_xa * self.dim_ya == t
            && self.blk_m.is_multiple_of(self.dim_xa)
            && self.blk_k.is_multiple_of(self.dim_ya);
        let b_ok = self.dim_xb * self.dim_yb == t
            && self.blk_k.is_multiple_of(self.dim_xb)
            && self.blk_n.is_multiple_of(self.dim_yb);
        if !a_ok || !b_ok {
            return Err(format!(
                "{}: check 6: the block cannot read the stripes of {} without cleanup code",
                self.id(),
                if a_ok { "B" } else { "A" }
            ));
        }
        Ok(())
    }

    /// Shared memory of the two stripes, padding included (check 5's quantity), in bytes.
    pub fn shared_bytes(&self) -> u32 {
        8 * (self.blk_k * (self.blk_m + 1) + self.blk_n * (self.blk_k + 1))
    }

    /// Floating-point operations of `C = A·B` (2 m n k).
    pub fn flops(m: usize, n: usize, k: usize) -> f64 {
        2.0 * m as f64 * n as f64 * k as f64
    }

    /// Blocks of tiles of an `m x n` C: `ceil(m / BLK_M) * ceil(n / BLK_N)`.
    pub fn tiles(&self, m: usize, n: usize) -> u64 {
        (m.div_ceil(self.blk_m as usize) * n.div_ceil(self.blk_n as usize)) as u64
    }
}

impl fmt::Display for OsfKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.id())
    }
}
