//! Forms the CUDA emitter generates since issue 19's CUDA work: every `STRIDE`-th CUDA variant
//! of each phase of each program is emitted, compiled with NVRTC (where it can be loaded:
//! `.ci/run` installs it) and run in the CUDA emulator against the interpreter. (Every variant
//! of the random programs is NVRTC-compiled by `random_programs.rs`; the CPU backend runs these
//! forms in its own tests: `pipelines.rs`, `kmeans.rs`, `deep_results.rs`, the random programs.)

use surge::Computation;
use surge::apps::kmeans::program::argmin;
use surge::prelude::*;
use tests::cuda_checks::{fails_as_the_interpreter, on_cuda};

fn xs(n: usize) -> Seq<f64> {
    Seq::input("x", tests::conformance::values(n, n as u64)).unwrap()
}

#[test]
fn map_bodies_that_are_sequences_give_nested_results() {
    let x = xs(23);
    let rows = split(&x, 4u64).unwrap();
    let y = map(|r: Seq<f64>| reverse(&r), &rows).unwrap();
    on_cuda("reversed rows", &Computation::new(&y).unwrap());
    let y: Seq<Seq<f64>> = map(|v: Scalar<f64>| replicate(&v, 3u64), &x).unwrap();
    on_cuda("replicated elements", &Computation::new(&y).unwrap());
    let k = Seq::input("k", vec![0u32, 3, 1, 0, 5]).unwrap();
    let y = map(|n: Scalar<u32>| range(0u32, n), &k).unwrap();
    on_cuda("ranges", &Computation::new(&y).unwrap());
    let x2 = x.clone();
    let y = map(move |_n: Scalar<u32>| x2.clone(), &k).unwrap();
    on_cuda("an input per element", &Computation::new(&y).unwrap());
}

#[test]
fn rows_reversed_strided_gathered_and_replicated() {
    let x = xs(29);
    let off = Seq::input("off", vec![0u32, 3, 3, 10, 17, 29]).unwrap();
    let rows = nest(&x, &off).unwrap();
    let idx = Seq::input("idx", vec![4u32, 0, 2, 2, 1]).unwrap();
    let sum = |r: Seq<f64>| reduce_prefix(add, &r, 0.0);
    let cases: Vec<(&str, Seq<Seq<f64>>)> = vec![
        ("reverse", reverse(&rows).unwrap()),
        ("striding", striding(&rows, 2u64).unwrap()),
        ("gather", gather(&rows, &idx).unwrap()),
        ("replicate", replicate(&x, 2u64).unwrap()),
        ("replicate none", replicate(&x, 0u64).unwrap()),
    ];
    for (what, r) in cases {
        on_cuda(what, &Computation::new(&r).unwrap());
        let sums = map(sum, &r).unwrap();
        on_cuda(
            &format!("sums of {what}"),
            &Computation::new(&sums).unwrap(),
        );
    }
    let row = at(&split(&x, 5u64).unwrap(), 2u32).unwrap();
    let r: Seq<Seq<f64>> = replicate(&row, 3u64).unwrap();
    on_cuda(
        "replicate a row",
        &Computation::new(&map(sum, &r).unwrap()).unwrap(),
    );
    let inner = map(|r: Seq<f64>| reverse(&r), &rows).unwrap();
    let y = map(|r: Seq<f64>| reduce_prefix(max, &r, -1.0), &inner).unwrap();
    on_cuda(
        "a map of rows read by a map",
        &Computation::new(&y).unwrap(),
    );
}

#[test]
fn a_gathered_row_out_of_range_is_the_interpreters_error() {
    let x = xs(12);
    let rows = split(&x, 4u64).unwrap();
    let idx = Seq::input("idx", vec![1u32, 3]).unwrap();
    let y = map(
        |r: Seq<f64>| reduce_prefix(add, &r, 0.0),
        &gather(&rows, &idx).unwrap(),
    )
    .unwrap();
    fails_as_the_interpreter(&Computation::new(&y).unwrap());
}

#[test]
fn reductions_inside_element_expressions_fold_sequentially() {
    let x = xs(40);
    let off = Seq::input("off", vec![0u32, 7, 7, 20, 40]).unwrap();
    let rows = nest(&x, &off).unwrap();
    // Two reductions in one body: one is the phase's inner level, the other folded in place.
    let y = map(
        |r: Seq<f64>| -> surge::Result<_> {
            Ok(reduce_prefix(add, &r, 0.0)? * 2.0 + reduce_prefix(max, &r, -9.0)?)
        },
        &rows,
    )
    .unwrap();
    on_cuda("two reductions per row", &Computation::new(&y).unwrap());
    // A reduction over elements that are reductions of another sequence's rows.
    let tiles = split(&x, 6u64).unwrap();
    let y = reduce(
        add,
        &map(|t: Seq<f64>| reduce(|a, b| a * b, &t), &tiles).unwrap(),
    )
    .unwrap();
    on_cuda("a sum of tile products", &Computation::new(&y).unwrap());
    // Without a prefix, an empty row is the interpreter's error on every variant.
    let y = map(
        |r: Seq<f64>| -> surge::Result<_> { Ok(reduce(add, &r)? + reduce(min, &r)?) },
        &rows,
    )
    .unwrap();
    fails_as_the_interpreter(&Computation::new(&y).unwrap());
}

#[test]
fn results_that_hold_tuples_are_stored_in_parts() {
    let x = xs(30);
    let k = Seq::input("k", (0..30u32).map(|i| i % 7).collect()).unwrap();
    let z = zip(&x, &k).unwrap();
    on_cuda("a zip", &Computation::new(&z).unwrap());
    on_cuda(
        "a reversed zip",
        &Computation::new(&reverse(&z).unwrap()).unwrap(),
    );
    let small = Seq::input("s", vec![1.5f32, -2.0]).unwrap();
    on_cuda(
        "a join",
        &Computation::new(&join(&small, &k).unwrap()).unwrap(),
    );
    let rows = split(&x, 4u64).unwrap();
    let y = map(
        |r: Seq<f64>| -> surge::Result<_> {
            Ok((reduce_prefix(add, &r, 0.0)?, reduce_prefix(max, &r, -5.0)?))
        },
        &rows,
    )
    .unwrap();
    on_cuda("a (sum, max) per row", &Computation::new(&y).unwrap());
    let y = map(
        |(v, j): (Scalar<f64>, Scalar<u32>)| (v * 2.0, j.clone().lt(3u32)),
        &z,
    )
    .unwrap();
    on_cuda(
        "a tuple with a boolean per element",
        &Computation::new(&y).unwrap(),
    );
    let t = (reduce(add, &x).unwrap(), reduce(max, &k).unwrap());
    on_cuda("a tuple of reductions", &Computation::new(&t).unwrap());
    let pair = (at(&x, 3u32).unwrap(), at(&k, 4u32).unwrap());
    let r: Seq<(f64, u32)> = replicate(&pair, 3u64).unwrap();
    on_cuda("a replicated tuple", &Computation::new(&r).unwrap());
    // Per row, a tuple whose first item folds a map over the row (a map in a fold's elements).
    let y = map(
        |r: Seq<f64>| -> surge::Result<_> {
            let sq = map(|v: Scalar<f64>| &v * &v, &r)?;
            Ok((reduce_prefix(add, &sq, 0.0)?, len(&r)))
        },
        &rows,
    )
    .unwrap();
    on_cuda(
        "(sum of squares, length) per row",
        &Computation::new(&y).unwrap(),
    );
}

#[test]
fn tuple_reductions_and_operators_without_identity_fold_in_order() {
    // Ties on purpose (values repeat): the first index wins, as in the interpreter.
    let d = Seq::input("d", (0..300).map(|i| ((i * 37) % 11) as f64).collect()).unwrap();
    let best = reduce(argmin, &zip(&d, &range(0u32, 300u32).unwrap()).unwrap()).unwrap();
    on_cuda("argmin", &Computation::new(&best).unwrap());
    on_cuda("argmin index", &Computation::new(&best.1).unwrap());
    // An operator without an identity: the sequential order is the result.
    let w = Seq::input("w", tests::conformance::values(50, 6)).unwrap();
    let y = map(
        |r: Seq<f64>| reduce_prefix(|a: Scalar<f64>, b: Scalar<f64>| a * 0.5 + b, &r, 1.0),
        &split(&w, 7u64).unwrap(),
    )
    .unwrap();
    on_cuda("a decaying sum per row", &Computation::new(&y).unwrap());
    // An empty row without a prefix: the interpreter's error on every variant.
    let off = Seq::input("off", vec![0u32, 3, 3, 5]).unwrap();
    let y = map(
        |r: Seq<f64>| reduce(|a: Scalar<f64>, b: Scalar<f64>| a * 0.5 + b, &r),
        &nest(&w, &off).unwrap(),
    )
    .unwrap();
    fails_as_the_interpreter(&Computation::new(&y).unwrap());
}

#[test]
fn a_row_of_a_nested_phase_is_one_row_copied() {
    let x = xs(12);
    let off = Seq::input("off", vec![0u32, 4, 8, 12]).unwrap();
    let y = at(&transpose(&nest(&x, &off).unwrap()).unwrap(), 1u32).unwrap();
    on_cuda("a column", &Computation::new(&y).unwrap());
}

#[test]
fn scans_of_tuples_and_without_identity_fold_in_order() {
    let d = Seq::input("d", (0..40).map(|i| ((i * 37) % 11) as f64).collect()).unwrap();
    let z = zip(&d, &range(0u32, 40u32).unwrap()).unwrap();
    on_cuda(
        "running argmin",
        &Computation::new(&scan(argmin, &z).unwrap()).unwrap(),
    );
    let p = (lit(100.0f64), lit(7u32));
    let s = scan_prefix(argmin, &z, p).unwrap();
    on_cuda(
        "running argmin after a prefix",
        &Computation::new(&s).unwrap(),
    );
    let rows = split(&d, 6u64).unwrap();
    let y = map(
        |r: Seq<f64>| scan(|a: Scalar<f64>, b: Scalar<f64>| a * 0.5 + b, &r),
        &rows,
    )
    .unwrap();
    on_cuda("a decaying scan per row", &Computation::new(&y).unwrap());
}

#[test]
fn a_reduce_by_key_of_rows_folds_columns_per_run() {
    // Listing 5.5: points gathered in label order, summed per run of equal labels.
    let d = 3u64;
    let x = Seq::input("x", tests::conformance::values(14 * 3, 8)).unwrap();
    let order = Seq::input(
        "order",
        vec![3u32, 0, 7, 1, 13, 2, 4, 5, 12, 6, 8, 9, 10, 11],
    )
    .unwrap();
    let keys = Seq::input("keys", vec![0u32, 0, 0, 1, 1, 3, 3, 3, 3, 4, 5, 5, 5, 5]).unwrap();
    let zero = Seq::input("zero", vec![0.0f64; 3]).unwrap();
    let gathered = gather(&split(&x, d).unwrap(), &order).unwrap();
    let sums = reduce_by_key(
        |a: Seq<f64>, b: Seq<f64>| map(|(u, v)| u + v, (&a, &b)),
        &gathered,
        &keys,
        &zero,
    )
    .unwrap();
    on_cuda("sums per label", &Computation::new(&sums).unwrap());
    let maxes = reduce_by_key(
        |a: Seq<f64>, b: Seq<f64>| map(|(u, v): (Scalar<f64>, Scalar<f64>)| v.max(&u), (&b, &a)),
        &gathered,
        &keys,
        &zero,
    )
    .unwrap();
    on_cuda(
        "swapped maxima per label",
        &Computation::new(&maxes).unwrap(),
    );
    // A prefix shorter than the rows: the interpreter's error on every variant.
    let short = Seq::input("short", vec![0.0f64; 2]).unwrap();
    let bad = reduce_by_key(
        |a: Seq<f64>, b: Seq<f64>| map(|(u, v)| u + v, (&a, &b)),
        &gathered,
        &keys,
        &short,
    )
    .unwrap();
    fails_as_the_interpreter(&Computation::new(&bad).unwrap());
}

/// Both programs of one Lloyd iteration as the k-means app builds them (relabeling, then
/// Listing 5.5's recalculation on the points in label order) run on CUDA, every variant.
#[test]
fn both_k_means_programs_run_on_cuda() {
    use surge::apps::kmeans::program::{recalculate, relabel};
    let d = 4;
    let points = tests::conformance::values(60 * d, 9);
    let centroids = points[..3 * d].to_vec();
    let c = relabel(points.clone(), centroids, d).unwrap();
    on_cuda("k-means relabeling", &c);
    let labels: Vec<u32> = match c.interpret().unwrap() {
        surge::codegen::ir::Value::Seq(v) => v
            .iter()
            .map(|l| l.as_scalar().unwrap().as_i128().unwrap() as u32)
            .collect(),
        v => panic!("labels: {v:?}"),
    };
    let mut order: Vec<u32> = (0..60).collect();
    order.sort_by_key(|&i| labels[i as usize]);
    let sorted: Vec<u32> = order.iter().map(|&i| labels[i as usize]).collect();
    let mut counts = Vec::new();
    for (k, l) in sorted.iter().enumerate() {
        if k == 0 || sorted[k - 1] != *l {
            counts.push(0.0);
        }
        *counts.last_mut().unwrap() += 1.0;
    }
    let c = recalculate(points, order, sorted, counts, d).unwrap();
    on_cuda("k-means recalculation", &c);
}

#[test]
fn a_reduce_of_rows_folds_columns() {
    let x = xs(24);
    let rows = split(&x, 4u64).unwrap();
    let sum = reduce(
        |a: Seq<f64>, b: Seq<f64>| map(|(u, v)| u + v, (&a, &b)),
        &rows,
    )
    .unwrap();
    on_cuda("column sums", &Computation::new(&sum).unwrap());
    let init = Seq::input("init", vec![-1.0f64, 0.0, 1.0, 2.0]).unwrap();
    let m = reduce_prefix(
        |a: Seq<f64>, b: Seq<f64>| map(|(u, v): (Scalar<f64>, Scalar<f64>)| u.max(&v), (&a, &b)),
        &rows,
        &init,
    )
    .unwrap();
    on_cuda(
        "column maxima after a prefix",
        &Computation::new(&m).unwrap(),
    );
}

#[test]
fn scalar_code_over_a_root_scan_or_scatter_reads_it_materialized() {
    let x = xs(20);
    let s = scan(add, &x).unwrap();
    let y = at(&s, 7u32).unwrap() * 2.0 + len(&s).cast::<f64>();
    on_cuda("an element of a scan", &Computation::new(&y).unwrap());
    let idx = Seq::input("idx", vec![3u32, 0, 3, 9]).unwrap();
    let src = Seq::input("src", vec![1.5f64, 2.5, 3.5, 4.5]).unwrap();
    let sc = scatter(&src, &idx, &x).unwrap();
    let y = at(&sc, 3u32).unwrap();
    on_cuda("an element of a scatter", &Computation::new(&y).unwrap());
}

/// A histogram by key (runs of sorted keys, a count per run) and maxima per run: each block and
/// each resource of it takes the runs that start in its range of positions.
#[test]
fn scalar_runs_are_split_over_blocks_and_resources() {
    let keys: Vec<u32> = (0..2000u32).map(|i| (i / 7) + (i / 300) * 3).collect();
    let k = Seq::input("k", keys).unwrap();
    let ones = map(|_k: Scalar<u32>| lit(1u64), &k).unwrap();
    let hist = reduce_by_key(add, &ones, &k, 0u64).unwrap();
    on_cuda("a histogram by key", &Computation::new(&hist).unwrap());
    let v = Seq::input("v", tests::conformance::values(2000, 3)).unwrap();
    let maxes = reduce_by_key(max, &v, &k, f64::NEG_INFINITY).unwrap();
    on_cuda("maxima per run", &Computation::new(&maxes).unwrap());
}

/// A scatter of rows: rows of other lengths than the ones they replace, duplicate indices (the
/// last write wins whole, whether it is longer or shorter than an earlier one), rows of a `nest`,
/// a `split`, a `reverse`, a `replicate` and a `map` whose body is a sequence; an index out of
/// range is the interpreter's error.
#[test]
fn a_scatter_of_rows_writes_whole_rows_in_order() {
    let x = xs(30);
    let src = nest(&x, &Seq::input("o", vec![0u32, 5, 5, 12, 13]).unwrap()).unwrap();
    let dest = split(&x, 4u64).unwrap();
    let idx = Seq::input("idx", vec![2u32, 0, 2, 7]).unwrap();
    let y = scatter(&src, &idx, &dest).unwrap();
    on_cuda(
        "rows of a nest into a split",
        &Computation::new(&y).unwrap(),
    );
    let y = scatter(&reverse(&src).unwrap(), &idx, &reverse(&dest).unwrap()).unwrap();
    on_cuda("reversed rows", &Computation::new(&y).unwrap());
    let row = Seq::input("r", vec![1.0f64, -2.0, 3.0]).unwrap();
    let reps: Seq<Seq<f64>> = replicate(&row, 4u64).unwrap();
    let y = scatter(&reps, &idx, &dest).unwrap();
    on_cuda("a replicated row", &Computation::new(&y).unwrap());
    let k = Seq::input("k", vec![3u32, 0, 6, 1]).unwrap();
    let ranges = map(|n: Scalar<u32>| range(0u32, n), &k).unwrap();
    let into = map(
        |n: Scalar<u32>| range(0u32, n),
        &Seq::input("m", vec![2u32; 8]).unwrap(),
    );
    let y = scatter(&ranges, &idx, &into.unwrap()).unwrap();
    on_cuda("rows of a map", &Computation::new(&y).unwrap());
    let bad = Seq::input("bad", vec![1u32, 8, 0, 2]).unwrap();
    fails_as_the_interpreter(&Computation::new(&scatter(&src, &bad, &dest).unwrap()).unwrap());
}

/// Rows of tuples (`split`, `nest`, `transpose` of a `replicate` of a `zip`, rows reversed):
/// each component keeps the row structure; stored in parts, or read by a map over the rows (a
/// fold of each row's tuples, a row's length).
#[test]
fn rows_of_tuples_keep_their_structure_per_component() {
    let x = xs(23);
    let k = Seq::input("k", (0..23u32).map(|i| (i * 7) % 5).collect()).unwrap();
    let pairs = zip(&x, &k).unwrap();
    let y = split(&pairs, 4u64).unwrap();
    on_cuda("split of a zip", &Computation::new(&y).unwrap());
    let o = Seq::input("o", vec![0u32, 3, 3, 10, 23]).unwrap();
    let y = reverse(&nest(&pairs, &o).unwrap()).unwrap();
    on_cuda("reversed nest of a zip", &Computation::new(&y).unwrap());
    let small = zip(&xs(3), &Seq::input("b", vec![1u32, 2, 3]).unwrap()).unwrap();
    let y = transpose(&replicate(&small, 4u64).unwrap()).unwrap();
    on_cuda(
        "transpose of replicated tuples",
        &Computation::new(&y).unwrap(),
    );
    let o = Seq::input("o", vec![0u32, 3, 4, 10, 23]).unwrap();
    let rows = nest(&pairs, &o).unwrap();
    let y = map(
        |r: Seq<(f64, u32)>| {
            let best = reduce(argmin, &r)?;
            Ok(best.1 + len(&r).cast::<u32>())
        },
        &rows,
    )
    .unwrap();
    on_cuda(
        "a fold of each row of tuples",
        &Computation::new(&y).unwrap(),
    );
}

/// A tuple reduced in one phase and read by a later one (replicated, projected into scalar
/// code): stored packed, a word per component, read back bit for bit (NaN, -0.0, booleans,
/// negative integers).
#[test]
fn a_tuple_that_a_later_phase_reads_is_stored_packed() {
    let v = Seq::input("v", vec![3.5f64, -0.0, f64::NAN, -7.25, 2.0]).unwrap();
    let k = Seq::input("k", vec![4i64, -9, 2, -9, 0]).unwrap();
    let flags = map(|x: Scalar<f64>| x.lt(0.0), &v).unwrap();
    let t = reduce(
        |a: (Scalar<f64>, Scalar<i64>, Scalar<bool>),
         b: (Scalar<f64>, Scalar<i64>, Scalar<bool>)| {
            let take = a.1.le(&b.1);
            (
                take.select(&a.0, &b.0),
                take.select(&a.1, &b.1),
                a.2.or(&b.2),
            )
        },
        &zip3(&v, &k, &flags).unwrap(),
    )
    .unwrap();
    let y: Seq<(f64, i64, bool)> = replicate(&t, 3u64).unwrap();
    on_cuda("a replicated tuple", &Computation::new(&y).unwrap());
    let y = map(|x: Scalar<f64>| x * t.0.clone() + t.1.cast::<f64>(), &v).unwrap();
    on_cuda(
        "a tuple's components in a later map",
        &Computation::new(&y).unwrap(),
    );
}

/// One row of a map whose body gives rows (`at(map(|_| replicate(r, n), x), k)`, `r` reduced by
/// an earlier phase), read at the root: computed where it is copied out.
#[test]
fn a_row_of_a_map_of_rows_is_computed_where_it_is_read() {
    let x = xs(9);
    let flags = map(|v: Scalar<f64>| v.lt(0.5), &x).unwrap();
    let all = reduce(|a: Scalar<bool>, b: Scalar<bool>| a.and(&b), &flags).unwrap();
    let k = Seq::input("k", vec![1i64, 4, 2, 0]).unwrap();
    let rows: Seq<Seq<bool>> = map(|n: Scalar<i64>| replicate(&all, n.cast::<u64>()), &k).unwrap();
    let y = at(&rows, 1u32).unwrap();
    on_cuda("a row of replicated flags", &Computation::new(&y).unwrap());
    let rows = map(|n: Scalar<i64>| range(0i64, n), &k).unwrap();
    let y = at(&rows, 2u32).unwrap();
    on_cuda("a range row", &Computation::new(&y).unwrap());
}

/// Scalar code over a gather (`len(gather(x, idx))`): every index is checked, as the
/// interpreter evaluates the whole gather, then the code reads it lazily.
#[test]
fn scalar_code_over_a_gather_checks_every_index() {
    let x = xs(6);
    let idx = Seq::input("idx", vec![5u32, 0, 2, 2]).unwrap();
    let g = gather(&x, &idx).unwrap();
    let y = len(&g).cast::<f64>() + at(&g, 1u32).unwrap();
    on_cuda(
        "length and an element of a gather",
        &Computation::new(&y).unwrap(),
    );
    let bad = Seq::input("bad", vec![5u32, 0, 6, 2]).unwrap();
    let y = len(&gather(&x, &bad).unwrap());
    fails_as_the_interpreter(&Computation::new(&y).unwrap());
}

/// A map whose elements are tuples, stored for a later phase (each row's argmin, then strided
/// and reduced): packed, a word per component.
#[test]
fn a_sequence_of_tuples_that_a_later_phase_reads_is_stored_packed() {
    let x = xs(40);
    let k = Seq::input("k", (0..40u32).collect()).unwrap();
    let rows = split(&zip(&x, &k).unwrap(), 3u64).unwrap();
    let best = map(|r: Seq<(f64, u32)>| reduce(argmin, &r), &rows).unwrap();
    let y = reduce(argmin, &striding(&best, 2u64).unwrap()).unwrap();
    on_cuda(
        "argmin of strided row argmins",
        &Computation::new(&y).unwrap(),
    );
}

/// A result stored in parts whose parts are scalar code over the final phase's root scatter
/// (`(r, at(scatter(..), k), c)`): the scatter is stored first, then each part reads it.
#[test]
fn parts_over_a_root_scatter_read_it_materialized() {
    let idx = Seq::input("idx", vec![2u32, 0, 2, 4, 2, 0]).unwrap();
    let ks = range(-3i64, 6i64).unwrap();
    let src: Seq<f64> = replicate(5.75f64, 6u64).unwrap();
    let with_dest = |dest: Vec<f64>| {
        let r = reduce_prefix(
            min,
            &map(|k: Scalar<i64>| k.cast::<f32>(), &ks).unwrap(),
            1.75f32,
        );
        let sc = scatter(&src, &idx, &Seq::input("dest", dest).unwrap()).unwrap();
        let y = (r.unwrap(), at(&sc, 0u32).unwrap(), lit(-3.5f64));
        Computation::new(&y).unwrap()
    };
    on_cuda(
        "an element of a scatter beside a minimum",
        &with_dest(vec![0.25, 1.0, 2.0, 3.0, 4.0]),
    );
    // Indices past a one-element destination: the interpreter's error, on every variant.
    fails_as_the_interpreter(&with_dest(vec![0.25]));
}

/// A scan of tuples that other code reads (an element of it as the result, every element in a
/// later map): stored packed, each running value a word per component.
#[test]
fn a_scan_of_tuples_that_is_read_is_stored_packed() {
    let k = Seq::input("k", vec![3u32, 8, 5, 8, 3, 2]).unwrap();
    let v = Seq::input("v", vec![-0.75f64, -0.5, -1.75, -0.25, 2.5, 1.75]).unwrap();
    let step =
        |a: (Scalar<u32>, Scalar<f64>), b: (Scalar<u32>, Scalar<f64>)| (a.0.min(&b.0), a.1 + b.1);
    let s = scan(step, &zip(&k, &v).unwrap()).unwrap();
    let y = at(&s, 3u32).unwrap();
    on_cuda(
        "an element of a scan of tuples",
        &Computation::new(&y).unwrap(),
    );
    let y = map(|t: (Scalar<u32>, Scalar<f64>)| t.1 * t.0.cast::<f64>(), &s).unwrap();
    on_cuda(
        "a map over a scan of tuples",
        &Computation::new(&y).unwrap(),
    );
    let j = at(&Seq::input("j", vec![6u32]).unwrap(), 0u32).unwrap();
    let bad = at(&s, j).unwrap();
    fails_as_the_interpreter(&Computation::new(&bad).unwrap());
}

#[test]
fn a_transpose_of_a_transpose() -> surge::Result<()> {
    // Found by the random programs (seed 6): the two transposes' row placeholders collided, and
    // the emulator caught a read past the input.
    let x = Seq::input("x", vec![5.75, -4.25f32])?;
    let y = transpose(&transpose(&split(&x, 1u64)?)?)?;
    on_cuda("transpose(transpose(split(x, 1)))", &Computation::new(&y)?);
    let x = xs(24);
    let y = transpose(&transpose(&transpose(&split(&x, 6u64)?)?)?)?;
    on_cuda("three transposes", &Computation::new(&y)?);
    Ok(())
}

#[test]
fn integer_division_checks_as_the_interpreter() -> surge::Result<()> {
    // Raw `/` divided by zero trapped the emulator's process (SIGFPE) and is undefined on a GPU.
    let a = Seq::input("a", vec![7i64, -9, 100, i64::MIN, 5])?;
    let ok = Seq::input("b", vec![2i64, 4, -7, 3, 1])?;
    let q = map(
        |(a, b): (Scalar<i64>, Scalar<i64>)| (a.clone() / b.clone(), a % b),
        (&a, &ok),
    )?;
    on_cuda("quotients and remainders", &Computation::new(&q)?);
    for b in [vec![2i64, 4, 0, 3, 1], vec![2i64, 4, 1, -1, 1]] {
        let b = Seq::input("b", b)?;
        let q = map(|(a, b): (Scalar<i64>, Scalar<i64>)| a / b, (&a, &b))?;
        fails_as_the_interpreter(&Computation::new(&q)?);
        let r = map(|(a, b): (Scalar<i64>, Scalar<i64>)| a % b, (&a, &b))?;
        fails_as_the_interpreter(&Computation::new(&r)?);
    }
    let u = Seq::input("u", vec![7u32, 9])?;
    let z = Seq::input("z", vec![3u32, 0])?;
    let q = map(|(a, b): (Scalar<u32>, Scalar<u32>)| a / b, (&u, &z))?;
    fails_as_the_interpreter(&Computation::new(&q)?);
    Ok(())
}

#[test]
fn producers_of_a_join_run_over_the_whole_product() -> surge::Result<()> {
    // Found by the random programs (seed 6): a striding of a join lowered each component over
    // its own length, and with an empty input divided by zero (SIGFPE in the emulator).
    let a = Seq::input("a", vec![-0.5f32, 4.0, -1.0])?;
    let b = Seq::input("b", vec![1u32, 2])?;
    let empty = Seq::input("e", Vec::<f32>::new())?;
    let y = striding(&join(&a, &empty)?, 1u64)?;
    on_cuda(
        "a striding of a join with an empty input",
        &Computation::new(&y)?,
    );
    let y = reverse(&striding(&join(&a, &b)?, 2u64)?)?;
    on_cuda("a reversed striding of a join", &Computation::new(&y)?);
    Ok(())
}

#[test]
fn scalar_code_over_producers_of_tuples_and_rows() -> surge::Result<()> {
    // Found by the random programs (seed 6): scalar code over a join, a zip, a replicate of a
    // tuple and a nest of tuples at the root (each one phase whose root reads its one level).
    let a = Seq::input("a", vec![8u32, 2, 6, 2])?;
    let b = Seq::input("b", vec![4.75, 1.0, 5.5f64])?;
    let c = Seq::input("c", vec![-5.75, -1.0f64])?;
    let flags = map(|v: Scalar<f64>| v.lt(-4.0f64), &c)?;
    let y = len(&join3(&a, &b, &flags)?).cast::<f32>();
    on_cuda("the length of a join", &Computation::new(&y)?);
    let k = Seq::input("k", vec![5u32, 4, 4, 1])?;
    let (p, q) = at(&zip(&a, &k)?, 2u32)?;
    on_cuda("an element of a zip", &Computation::new(&(p + q))?);
    let (u, v) = at(
        &replicate::<(u32, u32)>((lit(4u32), lit(7u32)), 2u64)?,
        1u32,
    )?;
    on_cuda(
        "an element of a replicated tuple",
        &Computation::new(&(u * v))?,
    );
    let i = Seq::input("i", vec![-8i64, -6, 2])?;
    let off = Seq::input("off", vec![1i64, 2, 2])?;
    let rows = nest(&zip(&b, &i)?, &off)?;
    on_cuda(
        "the length of a nest of pairs",
        &Computation::new(&len(&rows))?,
    );
    // A gathered index out of range fails though only the length is read, as in the
    // interpreter.
    let idx = Seq::input("idx", vec![0u32, 9])?;
    let w = Seq::input("w", vec![1u32, 2])?;
    let y = len(&zip(&gather(&b, &idx)?, &w)?);
    fails_as_the_interpreter(&Computation::new(&y)?);
    Ok(())
}

#[test]
fn a_root_scatter_of_tuples_is_stored_per_component() -> surge::Result<()> {
    // Found by the random programs (seed 6).
    let a = Seq::input("a", vec![0.75f32, 5.25, 2.75, -1.75])?;
    let b = Seq::input("b", vec![6i64, 1, 3, 1])?;
    let idx = Seq::input("idx", vec![2i64, 0, 4, 0])?;
    let c = Seq::input("c", vec![-2.75f32, -3.75, 4.0, 3.25, 1.0])?;
    let d = Seq::input("d", vec![3i64, -3, -4, -7, -6])?;
    let y = scatter(&reverse(&zip(&a, &b)?)?, &idx, &zip(&c, &d)?)?;
    on_cuda("a scatter of pairs", &Computation::new(&y)?);
    let bad = Seq::input("idx", vec![2i64, 0, 5, 0])?;
    let y = scatter(&reverse(&zip(&a, &b)?)?, &bad, &zip(&c, &d)?)?;
    fails_as_the_interpreter(&Computation::new(&y)?);
    Ok(())
}

#[test]
fn a_scatter_inside_a_map_body_is_read_lazily() -> surge::Result<()> {
    // Found by the random programs (seed 6): a map whose body is a scatter (`map.scatter`).
    let x = xs(12);
    let idx = Seq::input("idx", vec![4i64, 0, 4])?;
    let dest = Seq::input("dest", vec![0.5f64, 1.5, 2.5, 3.5, 4.5])?;
    let y = map(|r: Seq<f64>| scatter(&r, &idx, &dest), &split(&x, 3u64)?)?;
    on_cuda("a scatter per row", &Computation::new(&y)?);
    let sums = map(
        |r: Seq<f64>| reduce_prefix(add, &scatter(&r, &idx, &dest)?, 0.0),
        &split(&x, 3u64)?,
    )?;
    on_cuda("the sum of a scatter per row", &Computation::new(&sums)?);
    // An index out of range, and an empty destination: the interpreter's errors.
    let bad = Seq::input("idx", vec![4i64, 7, 4])?;
    let y = map(|r: Seq<f64>| scatter(&r, &bad, &dest), &split(&x, 3u64)?)?;
    fails_as_the_interpreter(&Computation::new(&y)?);
    let none = Seq::input("none", Vec::<f64>::new())?;
    let y = map(|r: Seq<f64>| scatter(&r, &idx, &none), &split(&x, 3u64)?)?;
    fails_as_the_interpreter(&Computation::new(&y)?);
    Ok(())
}

#[test]
fn a_map_inside_a_map_body_read_lazily() -> surge::Result<()> {
    // Found by the random programs (seed 6): the inner map (`map.map`) is only read (its
    // length, one element), so the outer map's body reads it lazily.
    let a = Seq::input("a", vec![0i64, 5, -2])?;
    let b = Seq::input("b", vec![7u32, 4, 3])?;
    let off = Seq::input("off", vec![2i64, 2, 3])?;
    let c = Seq::input("c", vec![-2.5f32, 1.0])?;
    let y = map(
        |v1: Scalar<i64>| {
            let pairs = map(
                |(r, w): (Seq<u32>, Scalar<f32>)| Ok((len(&r).cast::<f32>() + w, v1.clone())),
                (&nest(&b, &off)?, &c),
            )?;
            Ok(len(&pairs).cast::<f32>() + at(&pairs, 1u32)?.0)
        },
        &a,
    )?;
    on_cuda("an inner map read lazily", &Computation::new(&y)?);
    Ok(())
}
