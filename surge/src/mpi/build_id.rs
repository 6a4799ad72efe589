//! Which Surge build a rank runs: its version and the structure of the programs the ranks run
//! together (SpMV, the k-means relabeling and recalculation). Ranks of one job must agree, or
//! their kernels and messages would not match; `World::init` compares them and refuses a job
//! whose ranks differ.

use crate::apps::kmeans::program;
use crate::{Computation, Result};

/// A 64-bit digest of the version and the programs' structure hashes (FNV-1a).
pub fn fingerprint() -> Result<u64> {
    let m = crate::apps::matgen::laplacian_2d(2);
    let programs = [
        Computation::new(&crate::apps::spmv_app(&m, &vec![0.0; m.cols])?)?,
        program::relabel(vec![0.0; 4], vec![0.0; 4], 2)?,
        program::recalculate(vec![0.0; 4], vec![0, 1], vec![0, 0], vec![2.0], 2)?,
    ];
    let mut bytes = env!("CARGO_PKG_VERSION").as_bytes().to_vec();
    for c in &programs {
        bytes.extend_from_slice(&c.ir().structure_hash().to_le_bytes());
    }
    Ok(bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    }))
}

/// The first rank whose fingerprint differs from rank 0's.
pub fn first_mismatch(fingerprints: &[u64]) -> Option<usize> {
    fingerprints.iter().position(|&f| f != fingerprints[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_is_stable_and_a_different_build_is_found() {
        let f = fingerprint().unwrap();
        assert_eq!(f, fingerprint().unwrap());
        assert_eq!(first_mismatch(&[f, f, f]), None);
        assert_eq!(first_mismatch(&[f, f, f ^ 1, f]), Some(2));
    }
}
