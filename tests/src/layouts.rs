//! Helpers of the SpMV storage-layout tests (`sell_layout.rs`, `bcsr_layout.rs`,
//! `lanes_layout.rs`): the reference row variant every layout must equal bit for bit, a result's
//! bits, a matrix from explicit rows and the tests' `x`.

use surge::codegen::variant::Variant;
use surge::mtx::CsrMatrix;
use surge::{Buffer, Kernels, Output};

/// A matrix from explicit rows of (column, value).
pub fn from_rows(cols: usize, rows: &[Vec<(u32, f64)>]) -> CsrMatrix {
    let mut m = CsrMatrix {
        rows: rows.len(),
        cols,
        row_offsets: vec![0],
        col_indices: vec![],
        values: vec![],
    };
    for r in rows {
        for &(j, v) in r {
            m.col_indices.push(j);
            m.values.push(v);
        }
        m.row_offsets.push(m.values.len() as u64);
    }
    m
}

/// The layout tests' `x`: `0.5 + (j mod 11) / 8`, exact in binary.
pub fn x_for(cols: usize) -> Vec<f64> {
    (0..cols).map(|j| 0.5 + (j % 11) as f64 * 0.125).collect()
}

/// The row variant that folds each row sequentially (`unroll2=0`), one thread.
pub fn row_variant(k: &Kernels) -> &Variant {
    k.variants()
        .iter()
        .find(|v| {
            let id = v.id();
            id.contains("independent.sequential/threads=1,")
                && id.contains("unroll2=0")
                && id.contains("layout1=rows")
        })
        .expect("a sequential row variant")
}

/// The bits of a flat f64 or i64 result.
pub fn bits(o: Output) -> Vec<u64> {
    match o {
        Output::Seq(Buffer::F64(v)) => v.iter().map(|x| x.to_bits()).collect(),
        Output::Seq(Buffer::I64(v)) => v.iter().map(|x| *x as u64).collect(),
        other => panic!("expected a flat sequence, got {other:?}"),
    }
}
