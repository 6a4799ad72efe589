//! GEMM tuned through the open tuning API (issue 23): the DSEL's mat-mat ([`super::mat_mat`])
//! on the shapes of `surge bench gemm` (square, the rank-k updates, panels and tall-skinny
//! products of a blocked factorization), over the generated GEMM family's variants (one per
//! BEAST survivor: micro-kernel, KC/MC/NC blocking, the threaded loop), the model choosing one
//! per shape from the features m, n and k. Work: 2·m·n·k flops (GFLOP/s).

use super::mat_mat;
use crate::bench::gemm::Shape;
use crate::tune::features::FeatureSet;
use crate::tune::{TuneInput, Workload};
use crate::{Result, SurgeError};

/// The tuned workload's name (and the store's).
pub const WORKLOAD: &str = "gemm";

/// Whether variant id `id` is one of the generated GEMM family's (the tuned set).
pub fn is_family(id: &str) -> bool {
    id.contains("gemm=")
}

fn shape(input: &TuneInput) -> Result<&Shape> {
    input.data::<Shape>().ok_or_else(|| {
        SurgeError::Tune(format!(
            "input `{}` is not a GEMM shape (surge::apps::gemm_tuning::input)",
            input.name
        ))
    })
}

/// The workload: GFLOP/s; features m, n and k (log scale).
pub fn workload() -> Workload {
    let features = FeatureSet::default()
        .with_feature("m", true, |i| Ok(shape(i)?.m as f64))
        .with_feature("n", true, |i| Ok(shape(i)?.n as f64))
        .with_feature("k", true, |i| Ok(shape(i)?.k as f64));
    Workload::new(WORKLOAD)
        .with_unit("GFLOP/s", 1e-9)
        .with_features(features)
}

/// The tuned input of `shape`: `C = A·B` on seeded values in [-1, 1).
pub fn input(shape: &Shape) -> Result<TuneInput> {
    let (m, n, k) = (shape.m, shape.n, shape.k);
    let values = surge_codegen::data::uniform_values;
    let c = mat_mat(values(m * k, 1), values(k * n, 2), k as u64, n as u64)?;
    let name = format!("{} {m}x{n}x{k}", shape.kind);
    let work = 2.0 * m as f64 * n as f64 * k as f64;
    Ok(workload()
        .input_with_work(name, c, work)
        .with_data(shape.clone()))
}

/// Training (`test == false`) or held-out shapes: every kind at sizes between the training
/// sizes for the test set. `small`: 8 training and 4 test shapes of sizes 96–256; the campaign
/// is bound by the 1,112 variants' samples (at least 1 ms each), not the sizes: 9 min 39 s on
/// this 2-core machine while another build ran (steal up to 60 %, those inputs re-measured).
pub fn shapes(small: bool, test: bool) -> Result<Vec<Shape>> {
    let sizes: &[usize] = match (small, test) {
        (true, false) => &[96, 256],
        (true, true) => &[160],
        (false, false) => &[128, 256, 512, 1024],
        (false, true) => &[192, 384, 768],
    };
    let kinds: Vec<String> = crate::bench::gemm::KINDS
        .iter()
        .map(|(k, _)| k.to_string())
        .collect();
    crate::bench::gemm::shapes(&kinds, sizes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_carry_their_shape_and_flops() -> Result<()> {
        let s = Shape::of("panel", 40)?;
        let i = input(&s)?;
        let w = workload();
        assert_eq!(shape(&i)?.m, 40);
        assert_eq!(i.work, 2.0 * 40.0 * 128.0 * 128.0);
        let f = w.features().evaluate(&i)?;
        assert_eq!(f.values, vec![40.0, 128.0, 128.0]);
        Ok(())
    }

    #[test]
    fn shapes_are_disjoint_and_named() -> Result<()> {
        let (train, test) = (shapes(true, false)?, shapes(true, true)?);
        assert_eq!(train.len(), 8);
        assert!(test.iter().all(|t| !train.contains(t)));
        assert!(is_family("cpu:gemm=k4x8u4,kc=256,mc=64,nc=1024,gpar=ic"));
        assert!(!is_family("cpu:host/independent.sequential/threads=2"));
        Ok(())
    }
}
