//! A `reduce_by_key` of rows on CUDA, Listing 5.5's shape (rows gathered in label order, summed
//! per run with an element-wise combiner from a zero row): the kernel's blocks are pairs of a
//! position range and a group of about four columns (`templates/cuda/runs_rows.cu.tera`), so
//! a few long runs keep many blocks busy. Widths below, at and above one group, ragged last
//! groups, one long run, many short ones; every `STRIDE`-th variant NVRTC-compiled and run in
//! the emulator against the interpreter, and a ragged row failing every variant with the
//! interpreter's message.

use surge::Computation;
use surge::prelude::*;
use surge_codegen::target::Platform;
use surge_cuda::Emulator;
use tests::conformance::values;
use tests::cuda_checks::on_cuda;

/// Listing 5.5's sums: the rows of `x` (`w` wide) gathered by `order`, reduced per run of
/// `keys` from a zero row.
fn sums(x: Vec<f64>, w: usize, order: Vec<u32>, keys: Vec<u32>) -> surge::Result<Computation> {
    let x = Seq::input("x", x)?;
    let order = Seq::input("order", order)?;
    let rows = gather(&split(&x, w as u64)?, &order)?;
    sum_runs(&rows, keys, w)
}

/// The rows (`w` wide) summed per run of `keys` from a zero row.
fn sum_runs(rows: &Seq<Seq<f64>>, keys: Vec<u32>, w: usize) -> surge::Result<Computation> {
    let keys = Seq::input("keys", keys)?;
    let zero = Seq::input("zero", vec![0.0f64; w])?;
    let s = reduce_by_key(
        |a: Seq<f64>, b: Seq<f64>| map(|(u, v)| u + v, (&a, &b)),
        rows,
        &keys,
        &zero,
    )?;
    Computation::new(&s)
}

/// `n` labels sorted into runs: `k` of about equal length.
fn sorted_labels(n: usize, k: usize) -> Vec<u32> {
    (0..n).map(|i| (i * k / n.max(1)) as u32).collect()
}

/// A permutation of `0..n` (a stride coprime with `n`).
fn order(n: usize) -> Vec<u32> {
    let step = (1..)
        .map(|s| 7 + 2 * s)
        .find(|s| gcd(*s, n) == 1)
        .unwrap_or(1);
    (0..n).map(|i| ((i * step) % n.max(1)) as u32).collect()
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[test]
fn runs_of_rows_of_every_width_agree() -> surge::Result<()> {
    for w in [1usize, 5, 9, 32, 37] {
        for (n, k) in [(1usize, 1usize), (50, 50), (2000, 3), (2000, 400)] {
            let c = sums(values(n * w, w as u64), w, order(n), sorted_labels(n, k))?;
            on_cuda(&format!("width {w}, {n} rows, {k} runs"), &c);
        }
    }
    Ok(())
}

/// A row of another length deep inside a long run: every variant fails as the interpreter does
/// (the length check is the first column group's, whichever block holds the run).
#[test]
fn a_ragged_row_fails_every_variant() -> surge::Result<()> {
    let (n, w) = (1500usize, 9usize);
    let mut lens = vec![w as u64; n];
    lens[1234] = w as u64 - 1;
    let offsets: Vec<u64> = std::iter::once(0)
        .chain(lens.iter().scan(0, |s, l| {
            *s += l;
            Some(*s)
        }))
        .collect();
    let total = *offsets.last().unwrap_or(&0) as usize;
    let rows = nest(
        &Seq::input("x", values(total, 3))?,
        &Seq::input("offsets", offsets)?,
    )?;
    let c = sum_runs(&rows, sorted_labels(n, 2), w)?;
    let want = c.interpret().unwrap_err().to_string();
    let emu = Emulator::default();
    let set = c.variants(&Platform::Cuda(surge_cuda::Runtime::info(&emu).clone()))?;
    let results = surge_cuda::run_each(&emu, c.ir(), c.buffers(), set.phases())
        .unwrap_or_else(|e| panic!("building: {e}"));
    assert!(results.len() > 1);
    for (p, v, got) in results {
        let e = got.expect_err(&format!("phase {p}: {v}")).to_string();
        assert_eq!(e, want, "phase {p}: {v}");
    }
    Ok(())
}
