//! The GEMM shapes `surge bench gemm` measures: square, and the shapes of a blocked LU or
//! Cholesky factorization where libraries tuned for square matrices lose most.

use crate::{Result, SurgeError};
use serde::Serialize;

/// One problem: C (m×n) = A (m×k) · B (k×n).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Shape {
    /// `square`, `rank-k`, `panel` or `tall-skinny`.
    pub kind: String,
    pub m: usize,
    pub n: usize,
    pub k: usize,
}

/// The shape kinds, what each is, and its dimensions for size `s`.
pub const KINDS: [(&str, &str); 4] = [
    ("square", "s x s x s"),
    (
        "rank-k",
        "m = n = s, k = 128: the trailing update of a blocked factorization",
    ),
    (
        "panel",
        "m = s, n = k = 128: a tall panel times a diagonal block",
    ),
    (
        "tall-skinny",
        "m = 4s, n = 32, k = 256: many short rows against a narrow B",
    ),
];

impl Shape {
    /// The shape of kind `kind` for size `s`.
    pub fn of(kind: &str, s: usize) -> Result<Shape> {
        let (m, n, k) = match kind {
            "square" => (s, s, s),
            "rank-k" => (s, s, 128),
            "panel" => (s, 128, 128),
            "tall-skinny" => (4 * s, 32, 256),
            _ => {
                let known: Vec<&str> = KINDS.iter().map(|k| k.0).collect();
                return Err(SurgeError::Usage(format!(
                    "unknown GEMM shape `{kind}`; use {}",
                    known.join(", ")
                )));
            }
        };
        Ok(Shape {
            kind: kind.into(),
            m,
            n,
            k,
        })
    }

    /// 2·m·n·k.
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }

    /// `square 1024x1024x1024`.
    pub fn label(&self) -> String {
        format!("{} {}x{}x{}", self.kind, self.m, self.n, self.k)
    }

    /// This shape scaled down (each dimension by one factor, none below 64 or its own size)
    /// to at most `flops` flops: where the variant search runs.
    pub fn proxy(&self, flops: f64) -> Shape {
        let f = (flops / self.flops()).cbrt().min(1.0);
        let d = |x: usize| ((x as f64 * f).round() as usize).max(64.min(x));
        Shape {
            kind: self.kind.clone(),
            m: d(self.m),
            n: d(self.n),
            k: d(self.k),
        }
    }
}

/// The shapes of `kinds` × `sizes`.
pub fn shapes(kinds: &[String], sizes: &[usize]) -> Result<Vec<Shape>> {
    if sizes.contains(&0) {
        return Err(SurgeError::Usage("GEMM sizes must be positive".into()));
    }
    let mut out = Vec::new();
    for kind in kinds {
        for &s in sizes {
            out.push(Shape::of(kind, s)?);
        }
    }
    Ok(out)
}
