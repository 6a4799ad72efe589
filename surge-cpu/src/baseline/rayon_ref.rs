//! What a careful Rust programmer writes with rayon: the references for reduce, scan and spmv.

use rayon::prelude::*;

/// `x.par_iter().sum()`.
pub fn sum(x: &[f64]) -> f64 {
    x.par_iter().sum()
}

/// Two-pass exclusive prefix sum: per-chunk sums in parallel, a sequential scan of those, then
/// each chunk scanned in parallel from its carry.
pub fn exclusive_scan(x: &[f64], y: &mut [f64]) {
    assert_eq!(x.len(), y.len(), "scan input and output lengths");
    let chunk = (x.len() / (4 * rayon::current_num_threads())).max(4096);
    let sums: Vec<f64> = x.par_chunks(chunk).map(|c| c.iter().sum()).collect();
    let mut carry = Vec::with_capacity(sums.len());
    let mut acc = 0.0;
    for s in &sums {
        carry.push(acc);
        acc += s;
    }
    y.par_chunks_mut(chunk)
        .zip(x.par_chunks(chunk))
        .zip(carry.par_iter())
        .for_each(|((yc, xc), c)| {
            let mut a = *c;
            for (o, v) in yc.iter_mut().zip(xc) {
                *o = a;
                a += v;
            }
        });
}

/// CSR `y = A·x`, rows in parallel.
pub fn spmv(row_offsets: &[u64], col_indices: &[u32], values: &[f64], x: &[f64], y: &mut [f64]) {
    y.par_iter_mut()
        .enumerate()
        .with_min_len(256)
        .for_each(|(i, yi)| {
            let (a, b) = (row_offsets[i] as usize, row_offsets[i + 1] as usize);
            *yi = values[a..b]
                .iter()
                .zip(&col_indices[a..b])
                .map(|(v, c)| v * x[*c as usize])
                .sum();
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_compute_what_they_claim() {
        let x: Vec<f64> = (0..100_000).map(|i| (i % 7) as f64).collect();
        assert_eq!(sum(&x), x.iter().sum::<f64>());
        let mut y = vec![0.0; x.len()];
        exclusive_scan(&x, &mut y);
        let mut acc = 0.0;
        for (i, v) in x.iter().enumerate() {
            assert_eq!(y[i], acc);
            acc += v;
        }
        let mut y = vec![0.0; 2];
        spmv(
            &[0, 2, 3],
            &[0, 2, 1],
            &[1.0, 2.0, 3.0],
            &[1.0, 10.0, 100.0],
            &mut y,
        );
        assert_eq!(y, vec![201.0, 30.0]);
    }
}
