//! Helpers of the SpMV storage-layout tests (`sell_layout.rs`, `bcsr_layout.rs`): the reference
//! row variant every layout must equal bit for bit, and a result's bits.

use surge::codegen::variant::Variant;
use surge::{Buffer, Kernels, Output};

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
