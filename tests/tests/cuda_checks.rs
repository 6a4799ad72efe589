//! The CUDA backend's device-side run-time checks and its upload-once runner.
//!
//! Runs here (no GPU needed): a representative subset of the emitted variants of spmv, reduce and
//! scan, checks included, compiles with NVRTC; a recorded (node, code, values) decodes to the
//! interpreter's message. On a CUDA runtime, a GPU (`mod gpu`, ignored without one) and the
//! emulator (`mod emulator`, everywhere): bad indices, bad offsets and an empty row without a
//! prefix are errors on the device, and `DeviceKernels`/`Prepared` runs, times and downloads
//! correct results.

use std::collections::BTreeMap;
use surge::apps::{App, AppInput, BuiltApp};
use surge::mtx::CsrMatrix;
use surge::prelude::*;
use surge::{Buffer, Output};
use surge_codegen::emit::cuda::{self, ERROR_WORDS, check};
use surge_codegen::ir::{NodeId, Op};
use surge_codegen::target::Platform;
use surge_codegen::variant::Variant;
use surge_cuda::{CudaError, Device, DeviceKernels, Runtime};

fn lists(c: &Computation, platform: &Platform) -> Vec<Vec<Variant>> {
    c.variants(platform).unwrap().phases().to_vec()
}

/// One variant per distinct kernel structure (schedule, resources, block algorithm), so every
/// template branch is compiled without compiling all variants.
fn one_per_structure(vs: &[Variant]) -> Vec<Variant> {
    let mut seen = BTreeMap::new();
    for v in vs {
        let id = v.id();
        let key: Vec<String> = id
            .split(['/', ','])
            .filter(|part| {
                !part.contains('=')
                    || ["res1=", "res2=", "reduce2=", "scan2="]
                        .iter()
                        .any(|k| part.starts_with(k))
            })
            .map(str::to_string)
            .collect();
        seen.entry(key).or_insert_with(|| v.clone());
    }
    seen.into_values().collect()
}

fn built(app: App) -> BuiltApp {
    let input = match app {
        App::Spmv => AppInput::Default,
        _ => AppInput::Size(10_000),
    };
    BuiltApp::new(app, &input).unwrap()
}

#[test]
fn checked_kernels_compile_with_nvrtc_for_representative_variants() {
    surge_cuda::nvrtc_available()
        .unwrap_or_else(|e| panic!("NVRTC is required (.ci/run installs libnvrtc): {e}"));
    let platform = Platform::from_names("cuda", Some("h200")).unwrap();
    for app in [App::Spmv, App::Reduce, App::Scan] {
        let b = built(app);
        let c = &b.computation;
        let picked: Vec<Vec<Variant>> = lists(c, &platform)
            .iter()
            .map(|l| one_per_structure(l))
            .collect();
        let analysis = c.analyze().unwrap();
        let program = cuda::emit(c.ir(), &analysis, &picked).unwrap();
        let src = &program.source;
        assert!(src.contains("u64 *__restrict__ surge_err)"), "{app}");
        if app == App::Spmv {
            assert!(
                src.contains("surge_gather<f64>("),
                "spmv: gathers are checked"
            );
            assert!(src.contains("surge_segment_ok("), "spmv: rows are checked");
            assert!(
                src.contains("surge_nest_rows("),
                "spmv: offsets are checked"
            );
        } else {
            assert!(
                src.contains("SURGE_EMPTY_REDUCE"),
                "{app}: empty tiles are checked"
            );
        }
        let t = std::time::Instant::now();
        let ptx = surge_cuda::compile(&program, surge_cuda::DEFAULT_ARCH)
            .unwrap_or_else(|e| panic!("{app}: {e}"))
            .to_src();
        println!(
            "{app}: {} variants ({} per phase) compile in {:.2} s",
            program.kernels.len(),
            picked
                .iter()
                .map(|l| l.len().to_string())
                .collect::<Vec<_>>()
                .join("+"),
            t.elapsed().as_secs_f64()
        );
        assert!(program.kernels.len() >= 4, "{app}");
        for k in &program.kernels {
            assert!(ptx.contains(&format!(".entry {}(", k.name)), "{app}");
        }
        // The first failure is claimed atomically.
        assert!(ptx.contains("atom.global.cas.b64"), "{app}");
    }
}

fn node_of(c: &Computation, pred: impl Fn(&Op) -> bool) -> NodeId {
    NodeId(c.ir().nodes.iter().position(|n| pred(&n.op)).unwrap() as u64)
}

#[test]
fn recorded_errors_decode_to_the_failing_operator_and_message() {
    let b = built(App::Spmv);
    let c = &b.computation;
    let gather = node_of(c, |op| matches!(op, Op::Gather { .. }));
    let nest = node_of(c, |op| matches!(op, Op::Nest { .. }));
    let rec = |node: NodeId, code: u64, a: i64, b: i64, c: i64| -> [u64; ERROR_WORDS] {
        [(node.0 << 8) | code, a as u64, b as u64, c as u64]
    };
    assert!(surge_cuda::runtime_error(c.ir(), &[0; ERROR_WORDS]).is_none());
    let e = surge_cuda::runtime_error(c.ir(), &rec(gather, check::GATHER, 7, 1, 3)).unwrap();
    assert_eq!(
        e,
        CudaError::Runtime {
            op: "gather",
            node: gather,
            loc: c.ir().loc(gather),
            message: "index 7 at position 1 is out of range for a source of length 3".into()
        }
    );
    // What the conformance suite asks of every backend's bad-index error.
    let text = e.to_string();
    assert!(
        text.contains("gather") && text.contains("index 7"),
        "{text}"
    );
    let e = surge_cuda::runtime_error(c.ir(), &rec(nest, check::OFFSET_ORDER, 5, 2, 4)).unwrap();
    assert_eq!(
        e.to_string(),
        format!(
            "{} failed: offsets are not monotone: offsets[2] = 5 > offsets[3] = 4",
            c.ir().site(nest)
        )
    );
    // The site leads with the user's line (here the app's `nest` call), then the node.
    let loc = c.ir().loc(nest).expect("traced nodes have a location");
    assert!(loc.file.ends_with("spmv.rs"), "{loc}");
    // Through the facade a CUDA run-time error reads like the CPU backend's.
    let s: surge::SurgeError = e.into();
    assert!(
        s.to_string().starts_with(&format!("`nest` at {loc} (node")),
        "{s}"
    );
}

// ---- On a CUDA runtime: a GPU (ignored unless asked for) and the emulator (always) ----------

/// GPU 0; the GPU tests are ignored unless asked for, and then a missing GPU fails them.
fn device() -> Device {
    Device::open(0).unwrap_or_else(|e| panic!("no CUDA device: {e}"))
}

fn every_variant<R: Runtime>(dev: &R, c: &Computation) -> (DeviceKernels<R>, Vec<Vec<Variant>>) {
    let l = lists(c, &Platform::Cuda(dev.info().clone()));
    (DeviceKernels::build(dev, c.ir(), &l).unwrap(), l)
}

/// Runs every variant of each phase (the others at their first) and returns each one's result.
fn run_each<R: Runtime>(dev: &R, c: &Computation) -> Vec<(String, Result<Output, CudaError>)> {
    let l = lists(c, &Platform::Cuda(dev.info().clone()));
    surge_cuda::run_each(dev, c.ir(), c.buffers(), &l)
        .unwrap()
        .into_iter()
        .map(|(p, v, r)| (format!("phase {p}: {v}"), r))
        .collect()
}

fn bad_column_indices_are_gather_errors_on_the_device<R: Runtime>(dev: &R) {
    let m = CsrMatrix {
        rows: 2,
        cols: 3,
        row_offsets: vec![0, 2, 3],
        col_indices: vec![0, 1, 7],
        values: vec![1.0, 2.0, 3.0],
    };
    let c = Computation::new(&surge::apps::spmv_app(&m, &[1.0, 2.0, 3.0]).unwrap()).unwrap();
    let want = c.interpret().unwrap_err().to_string();
    assert!(want.contains("index 7 at position 0"), "{want}");
    for (id, r) in run_each(dev, &c) {
        let e = r.expect_err(&id).to_string();
        assert!(
            e.contains("gather") && e.contains("index 7 at position 0"),
            "{id}: {e} (interpreter: {want})"
        );
    }
}

fn bad_offsets_are_nest_errors_on_the_device<R: Runtime>(dev: &R) {
    let flat = Seq::input("flat", vec![1.0f64, 2.0, 3.0]).unwrap();
    for (offsets, needle) in [
        (vec![0u64, 2, 9], "offsets[2] = 9 is out of range"),
        (vec![0u64, 2, 1, 3], "offsets are not monotone"),
    ] {
        // Offsets computed by a map: constant offsets are already checked when `nest` is built.
        let off = Seq::input("off", offsets).unwrap();
        let off = map(|o: Scalar<u64>| o + 0u64, &off).unwrap();
        let rows = nest(&flat, &off).unwrap();
        let r = map(|row: Seq<f64>| reduce_prefix(add, &row, 0.0), &rows).unwrap();
        let c = Computation::new(&r).unwrap();
        let want = c.interpret().unwrap_err().to_string();
        assert!(want.contains(needle), "{want}");
        for (id, r) in run_each(dev, &c) {
            let e = r.expect_err(&id).to_string();
            assert!(e.contains("nest") && e.contains(needle), "{id}: {e}");
        }
    }
}

fn an_empty_row_without_a_prefix_is_an_error_on_the_device<R: Runtime>(dev: &R) {
    let flat = Seq::input("flat", vec![1.0f64, 2.0, 3.0]).unwrap();
    let off = Seq::input("off", vec![0u64, 2, 2, 3]).unwrap();
    let rows = nest(&flat, &off).unwrap();
    let r = map(|row: Seq<f64>| reduce(add, &row), &rows).unwrap();
    let c = Computation::new(&r).unwrap();
    let want = c.interpret().unwrap_err().to_string();
    assert!(want.contains("without a prefix"), "{want}");
    for (id, r) in run_each(dev, &c) {
        let e = r.expect_err(&id).to_string();
        assert!(
            e.contains("reduction of an empty sequence without a prefix"),
            "{id}: {e}"
        );
    }
}

/// Inputs kept on the device (`Prepared::into_inputs`, `prepare_reusing`) are not uploaded
/// again: the kept copy is what runs, even where the host buffer now differs; a kept input of
/// another length is uploaded anew, and so is one not kept.
fn kept_inputs_are_not_uploaded_again<R: Runtime>(dev: &R) {
    let program = |host: Vec<f64>| {
        let x = Seq::input("x", host).unwrap();
        Computation::new(&map(|v: Scalar<f64>| v * 2.0, &x).unwrap()).unwrap()
    };
    let (k, l) = every_variant(dev, &program(vec![1.0]));
    let firsts: Vec<&Variant> = l.iter().map(|v| &v[0]).collect();
    let run = |host: Vec<f64>, kept| {
        let c = program(host);
        let p = k
            .prepare_reusing(c.ir(), c.buffers(), kept, &firsts)
            .unwrap();
        p.run(&firsts).unwrap();
        let out = p.output().unwrap();
        (out, p.into_inputs())
    };
    let seq = |v: Vec<f64>| Output::Seq(Buffer::F64(v));
    let (out, kept) = run(vec![1.0, 2.0, 3.0], Vec::new());
    assert_eq!(out, seq(vec![2.0, 4.0, 6.0]));
    let (out, kept) = run(vec![10.0, 20.0, 30.0], kept);
    assert_eq!(out, seq(vec![2.0, 4.0, 6.0]), "the kept copy runs");
    let (out, kept) = run(vec![1.0, 2.0, 3.0, 4.0], kept);
    assert_eq!(
        out,
        seq(vec![2.0, 4.0, 6.0, 8.0]),
        "another length is uploaded"
    );
    let (out, _) = run(
        vec![5.0, 6.0, 7.0, 8.0],
        kept.into_iter().map(|_| None).collect(),
    );
    assert_eq!(out, seq(vec![10.0, 12.0, 14.0, 16.0]), "not kept: uploaded");
}

fn prepared_runs_times_and_downloads_every_reduce_variant<R: Runtime>(dev: &R) {
    let data: Vec<f64> = (0..100_003).map(|i| (i % 17) as f64 - 8.0).collect();
    let s = Seq::input("s", data.clone()).unwrap();
    let c = Computation::new(&surge::apps::reduce_app(&s, 4096).unwrap()).unwrap();
    let want: f64 = data.iter().sum();
    let (k, l) = every_variant(dev, &c);
    let firsts: Vec<&Variant> = l.iter().map(|v| &v[0]).collect();
    let p = k.prepare(c.buffers(), &firsts).unwrap();
    for (pi, vs) in l.iter().enumerate() {
        for v in vs {
            let mut chosen = firsts.clone();
            chosen[pi] = v;
            p.run(&chosen).unwrap();
            match p.output().unwrap() {
                // Small integers: every association order is exact.
                Output::Seq(Buffer::F64(got)) => assert_eq!(got, [want], "{v}"),
                other => panic!("{v}: {other:?}"),
            }
        }
    }
    let t = p.time(&firsts, 2, 10).unwrap();
    assert_eq!(t.runs, 10);
    assert!(t.min_ms > 0.0 && t.min_ms <= t.median_ms && t.median_ms <= t.max_ms);
}

/// Boolean results are stored as u32 0/1, as the CPU stores them (found by the random programs
/// in the emulator: every variant of `map(|x| x < 0)` failed with "a device buffer of type bool").
fn boolean_results_run<R: Runtime>(dev: &R) {
    let x = Seq::input("x", vec![-1.0f64, 2.0, -3.0, 0.0]).unwrap();
    let b = map(|v: Scalar<f64>| v.lt(0.0), &x).unwrap();
    let c = Computation::new(&b).unwrap();
    let want = surge::oracle::Expected::interpret(c.ir(), c.buffers()).unwrap();
    for (id, r) in run_each(dev, &c) {
        let out = r.unwrap_or_else(|e| panic!("{id}: {e}"));
        let Output::Composite { parts, .. } = &out else {
            panic!("{id}: {out:?}")
        };
        assert_eq!(parts, &[Output::Seq(Buffer::U32(vec![1, 0, 1, 0]))], "{id}");
        want.check(&surge::oracle::Flat::of_output(&out)).unwrap();
    }
}

/// A reduction at the root (one element: the variant's one level reduces the whole input):
/// sums of fused products, and exact integer minima with a prefix.
fn root_reductions_run<R: Runtime>(dev: &R) {
    for n in [1usize, 1000, 4099] {
        let data: Vec<f64> = (0..n)
            .map(|i| ((i * 7919) % 64) as f64 / 8.0 - 3.0)
            .collect();
        let x = Seq::input("x", data.clone()).unwrap();
        let sq = map(|v: Scalar<f64>| v.clone() * v, &x).unwrap();
        let c = Computation::new(&reduce(add, &sq).unwrap()).unwrap();
        let want = surge::oracle::Expected::interpret(c.ir(), c.buffers()).unwrap();
        for (id, r) in run_each(dev, &c) {
            let out = r.unwrap_or_else(|e| panic!("n={n} {id}: {e}"));
            assert!(matches!(out, Output::Scalar(_)), "{id}: {out:?}");
            want.check(&surge::oracle::Flat::of_output(&out))
                .unwrap_or_else(|e| panic!("n={n} {id}: {e}"));
        }
        let ints: Vec<i64> = data.iter().map(|v| (v * 8.0) as i64).collect();
        let y = Seq::input("y", ints.clone()).unwrap();
        let c = Computation::new(&reduce_prefix(min, &y, 1000i64).unwrap()).unwrap();
        for (id, r) in run_each(dev, &c) {
            let out = r.unwrap_or_else(|e| panic!("n={n} {id}: {e}"));
            let want = ints.iter().copied().fold(1000, i64::min);
            assert_eq!(
                out,
                Output::Scalar(surge_codegen::data::ScalarValue::I64(want)),
                "{id}"
            );
        }
    }
    // (An empty input without a prefix is refused when the DSEL builds the reduction.)
}

/// Every variant of `c` against the interpreter (the oracle's tolerance rule).
fn matches_interpreter<R: Runtime>(dev: &R, what: &str, c: &Computation) {
    let want = surge::oracle::Expected::interpret(c.ir(), c.buffers()).unwrap();
    for (id, r) in run_each(dev, c) {
        let out = r.unwrap_or_else(|e| panic!("{what} {id}: {e}"));
        want.check(&surge::oracle::Flat::of_output(&out))
            .unwrap_or_else(|e| panic!("{what} {id}: {e}"));
    }
}

/// A scan at the root (one element: the variant's one level scans the whole input), inclusive
/// and exclusive, empty to several blocks long; its result comes back flat.
fn root_scans_run<R: Runtime>(dev: &R) {
    for n in [0usize, 1, 33, 2500] {
        let data: Vec<i64> = (0..n as i64).map(|i| (i * 7919) % 13 - 6).collect();
        let x = Seq::input("x", data.clone()).unwrap();
        let sq = map(|v: Scalar<i64>| v.clone() * v - 3i64, &x).unwrap();
        let c = Computation::new(&scan_prefix(add, &sq, 5i64).unwrap()).unwrap();
        matches_interpreter(dev, &format!("exclusive n={n}"), &c);
        if n > 0 {
            let c = Computation::new(&scan(max, &x).unwrap()).unwrap();
            matches_interpreter(dev, &format!("inclusive max n={n}"), &c);
        }
    }
}

/// Tuples of `zip` and `join` bound to a map's parameters: a three-way join, a zip inside a
/// nested level (rows of two nested inputs).
fn tuples_run<R: Runtime>(dev: &R) {
    let (a, b) = (
        Seq::input("a", vec![1.0f64, -2.0, 3.5]).unwrap(),
        Seq::input("b", vec![2i64, 5]).unwrap(),
    );
    let c3 = Seq::input("c", vec![0.5f64, 1.5, -1.0, 4.0]).unwrap();
    let j = join3(&a, &b, &c3).unwrap();
    let r = map(|(x, k, y)| x * k.cast::<f64>() - y, &j).unwrap();
    matches_interpreter(dev, "join3", &Computation::new(&r).unwrap());
    let flat = Seq::input("flat", (0..12).map(f64::from).collect::<Vec<_>>()).unwrap();
    let off = Seq::input("off", vec![0u32, 4, 4, 12]).unwrap();
    let (r1, r2) = (nest(&flat, &off).unwrap(), nest(&flat, &off).unwrap());
    let dots = map(
        |(u, v): (Seq<f64>, Seq<f64>)| {
            reduce_prefix(add, &map(|(x, y)| x * y, &zip(&u, &v)?)?, 0.0)
        },
        (&r1, &r2),
    )
    .unwrap();
    matches_interpreter(dev, "zip of rows", &Computation::new(&dots).unwrap());
}

/// A ragged transpose and a zip of rows of different lengths fail with the interpreter's
/// message on every variant.
fn ragged_transposes_and_unequal_zips_are_errors_on_the_device<R: Runtime>(dev: &R) {
    let flat = Seq::input("flat", vec![1.0f64, 2.0, 3.0, 4.0, 5.0]).unwrap();
    let off = Seq::input("off", vec![0u32, 2, 4, 5]).unwrap();
    let cols = transpose(&nest(&flat, &off).unwrap()).unwrap();
    let sums = map(|c: Seq<f64>| reduce_prefix(add, &c, 0.0), &cols).unwrap();
    let other = Seq::input("other", vec![0u32, 2, 3, 5]).unwrap();
    let dots = map(
        |(u, v): (Seq<f64>, Seq<f64>)| {
            reduce_prefix(add, &map(|(x, y)| x * y, &zip(&u, &v)?)?, 0.0)
        },
        (&nest(&flat, &off).unwrap(), &nest(&flat, &other).unwrap()),
    )
    .unwrap();
    for (what, c, needle) in [
        (
            "transpose",
            Computation::new(&sums).unwrap(),
            "rows differ in length (row 0 has 2, row 2 has 1)",
        ),
        (
            "zip",
            Computation::new(&dots).unwrap(),
            "input lengths differ",
        ),
    ] {
        let want = c.interpret().unwrap_err().to_string();
        assert!(want.contains(needle), "{what}: {want}");
        for (id, r) in run_each(dev, &c) {
            let e = r.expect_err(&id).to_string();
            assert!(
                e.contains(what) && e.contains(needle),
                "{id}: {e} (interpreter: {want})"
            );
        }
    }
}

/// A `reduce_by_key` at the root: runs from one element to several blocks long, integer and
/// float elements, a prefix, keys of either sign, an empty input; and a `scatter` whose
/// duplicate indices end with the last write, of floats and of booleans.
fn keyed_phases_run<R: Runtime>(dev: &R) {
    for n in [0usize, 1, 7, 3000] {
        let keys: Vec<i64> = (0..n as i64)
            .map(|i| (i / 3 + (i / 700) * 50) % 9 - 4)
            .collect();
        let vals: Vec<i64> = (0..n as i64).map(|i| (i * 31) % 11 - 5).collect();
        let (k, v) = (
            Seq::input("k", keys).unwrap(),
            Seq::input("v", vals).unwrap(),
        );
        let sums = reduce_by_key(add, &v, &k, 7i64).unwrap();
        matches_interpreter(
            dev,
            &format!("reduce_by_key add n={n}"),
            &Computation::new(&sums).unwrap(),
        );
        let x = map(|a: Scalar<i64>| a.cast::<f64>() * 0.5, &v).unwrap();
        let maxes = reduce_by_key(max, &x, &k, -100.0).unwrap();
        matches_interpreter(
            dev,
            &format!("reduce_by_key max n={n}"),
            &Computation::new(&maxes).unwrap(),
        );
    }
    let s = Seq::input("s", vec![1.5f64, 2.5, 3.5, 4.5, 5.5]).unwrap();
    let idx = Seq::input("idx", vec![3u32, 0, 3, 5, 0]).unwrap();
    let d = Seq::input("d", vec![-1.0f64; 7]).unwrap();
    let c = Computation::new(&scatter(&s, &idx, &d).unwrap()).unwrap();
    matches_interpreter(dev, "scatter with duplicates", &c);
    for (id, r) in run_each(dev, &c) {
        let out = r.unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(
            out,
            Output::Seq(Buffer::F64(vec![5.5, -1.0, -1.0, 3.5, -1.0, 4.5, -1.0])),
            "{id}"
        );
    }
    let flags = map(|x: Scalar<f64>| x.gt(3.0), &s).unwrap();
    let none = map(|x: Scalar<f64>| x.lt(-10.0), &d).unwrap();
    let c = Computation::new(&scatter(&flags, &idx, &none).unwrap()).unwrap();
    matches_interpreter(dev, "scatter of booleans", &c);
}

/// A scatter index out of range fails at the first such position, with the interpreter's
/// message, on every variant.
fn bad_scatter_indices_are_errors_on_the_device<R: Runtime>(dev: &R) {
    let s = Seq::input("s", vec![1.0f64, 2.0, 3.0, 4.0]).unwrap();
    let idx = Seq::input("idx", vec![1i64, 9, -1, 0]).unwrap();
    let d = Seq::input("d", vec![0.0f64; 3]).unwrap();
    let c = Computation::new(&scatter(&s, &idx, &d).unwrap()).unwrap();
    let want = c.interpret().unwrap_err().to_string();
    let needle = "index 9 at position 1 is out of range for a destination of length 3";
    assert!(want.contains(needle), "{want}");
    for (id, r) in run_each(dev, &c) {
        let e = r.expect_err(&id).to_string();
        assert!(e.contains("scatter") && e.contains(needle), "{id}: {e}");
    }
}

/// Lloyd's k-means with both programs on a CUDA target (compiled once, rebound each iteration)
/// reaches the plain-Rust Lloyd's labels and centroids (to 1e-9) from the same initial centroids.
fn lloyd_matches_the_plain_rust_lloyd(target: &surge::Target, n: usize, d: usize, k: usize) {
    use surge::apps::kmeans::{self, LloydVariants, data};
    let points = data::blobs(n, d, k, 3);
    let init = data::kmeans_plus_plus(&points, k, 5).unwrap();
    let iterations = 6;
    let want = kmeans::reference::lloyd_serial(&points, &init, iterations);
    let got = kmeans::lloyd(
        &points,
        &init,
        iterations,
        target,
        &LloydVariants::default(),
    )
    .unwrap();
    assert_eq!(got.labels, want.labels);
    assert_eq!(got.iterations, want.iterations);
    for (a, b) in got.centroids.iter().zip(&want.centroids) {
        assert!(
            (a - b).abs() <= 1e-9 * b.abs().max(1.0),
            "centroid {a} vs {b}"
        );
    }
    assert!(
        got.variants.iter().all(|v| v.starts_with("cuda")),
        "{:?}",
        got.variants
    );
}

/// Phases whose root is an element-wise producer (materialized because a later phase reads it
/// twice, or because it is the result): `replicate`, `reverse`, `striding`, `range`, `gather`,
/// and the nested `nest`, `split` and `transpose` (rows copied out).
fn producer_phases_run<R: Runtime>(dev: &R) {
    let x = Seq::input(
        "x",
        (0..37)
            .map(|i| f64::from(i) * 0.25 - 3.0)
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let idx = Seq::input("idx", vec![3u32, 0, 36, 5, 5]).unwrap();
    let results = [
        ("replicate", replicate::<f64>(1.5, 9u64).unwrap()),
        ("reverse", reverse(&x).unwrap()),
        ("striding", striding(&x, 4u64).unwrap()),
        ("gather", gather(&x, &idx).unwrap()),
    ];
    for (what, y) in results {
        matches_interpreter(dev, what, &Computation::new(&y).unwrap());
    }
    let r = range_step(-5i64, 40i64, 3i64).unwrap();
    matches_interpreter(dev, "range", &Computation::new(&r).unwrap());
    let off = Seq::input("off", vec![0u32, 5, 5, 30, 37]).unwrap();
    let rows = [
        ("nest", nest(&x, &off).unwrap()),
        ("split", split(&x, 6u64).unwrap()),
        (
            "transpose",
            transpose(&split(&reverse(&x).unwrap(), 37u64).unwrap()).unwrap(),
        ),
    ];
    for (what, y) in rows {
        matches_interpreter(dev, what, &Computation::new(&y).unwrap());
    }
    let flags = map(|v: Scalar<f64>| v.gt(0.0), &x).unwrap();
    let rev = reverse(&flags).unwrap();
    matches_interpreter(dev, "reverse of booleans", &Computation::new(&rev).unwrap());
}

mod gpu {
    #[test]
    #[ignore = "needs a CUDA GPU: run `cargo test -- --ignored` on a GPU machine"]
    fn lloyd_matches_the_plain_rust_lloyd() {
        super::lloyd_matches_the_plain_rust_lloyd(&surge::Target::cuda(0), 20_000, 32, 10);
    }
    #[test]
    #[ignore = "needs a CUDA GPU: run `cargo test -- --ignored` on a GPU machine"]
    fn producer_phases_run() {
        super::producer_phases_run(&super::device());
    }
    #[test]
    #[ignore = "needs a CUDA GPU: run `cargo test -- --ignored` on a GPU machine"]
    fn kept_inputs_are_not_uploaded_again() {
        super::kept_inputs_are_not_uploaded_again(&super::device());
    }
    #[test]
    #[ignore = "needs a CUDA GPU: run `cargo test -- --ignored` on a GPU machine"]
    fn keyed_phases_run() {
        super::keyed_phases_run(&super::device());
    }
    #[test]
    #[ignore = "needs a CUDA GPU: run `cargo test -- --ignored` on a GPU machine"]
    fn bad_scatter_indices_are_errors_on_the_device() {
        super::bad_scatter_indices_are_errors_on_the_device(&super::device());
    }
    #[test]
    #[ignore = "needs a CUDA GPU: run `cargo test -- --ignored` on a GPU machine"]
    fn root_scans_run() {
        super::root_scans_run(&super::device());
    }
    #[test]
    #[ignore = "needs a CUDA GPU: run `cargo test -- --ignored` on a GPU machine"]
    fn tuples_run() {
        super::tuples_run(&super::device());
    }
    #[test]
    #[ignore = "needs a CUDA GPU: run `cargo test -- --ignored` on a GPU machine"]
    fn ragged_transposes_and_unequal_zips_are_errors_on_the_device() {
        super::ragged_transposes_and_unequal_zips_are_errors_on_the_device(&super::device());
    }
    #[test]
    #[ignore = "needs a CUDA GPU: run `cargo test -- --ignored` on a GPU machine"]
    fn root_reductions_run() {
        super::root_reductions_run(&super::device());
    }
    #[test]
    #[ignore = "needs a CUDA GPU: run `cargo test -- --ignored` on a GPU machine"]
    fn boolean_results_run() {
        super::boolean_results_run(&super::device());
    }
    #[test]
    #[ignore = "needs a CUDA GPU: run `cargo test -- --ignored` on a GPU machine"]
    fn bad_column_indices_are_gather_errors_on_the_device() {
        super::bad_column_indices_are_gather_errors_on_the_device(&super::device());
    }
    #[test]
    #[ignore = "needs a CUDA GPU: run `cargo test -- --ignored` on a GPU machine"]
    fn bad_offsets_are_nest_errors_on_the_device() {
        super::bad_offsets_are_nest_errors_on_the_device(&super::device());
    }
    #[test]
    #[ignore = "needs a CUDA GPU: run `cargo test -- --ignored` on a GPU machine"]
    fn an_empty_row_without_a_prefix_is_an_error_on_the_device() {
        super::an_empty_row_without_a_prefix_is_an_error_on_the_device(&super::device());
    }
    #[test]
    #[ignore = "needs a CUDA GPU: run `cargo test -- --ignored` on a GPU machine"]
    fn prepared_runs_times_and_downloads_every_reduce_variant() {
        super::prepared_runs_times_and_downloads_every_reduce_variant(&super::device());
    }
}

/// The same checks in the CUDA emulator (no GPU needed).
mod emulator {
    #[test]
    fn lloyd_matches_the_plain_rust_lloyd() {
        super::lloyd_matches_the_plain_rust_lloyd(&surge::Target::cuda_emulated(), 200, 3, 3);
    }
    #[test]
    fn producer_phases_run() {
        super::producer_phases_run(&surge_cuda::Emulator::default());
    }
    #[test]
    fn kept_inputs_are_not_uploaded_again() {
        super::kept_inputs_are_not_uploaded_again(&surge_cuda::Emulator::default());
    }
    #[test]
    fn keyed_phases_run() {
        super::keyed_phases_run(&surge_cuda::Emulator::default());
    }
    #[test]
    fn bad_scatter_indices_are_errors_on_the_device() {
        super::bad_scatter_indices_are_errors_on_the_device(&surge_cuda::Emulator::default());
    }
    #[test]
    fn root_scans_run() {
        super::root_scans_run(&surge_cuda::Emulator::default());
    }
    #[test]
    fn tuples_run() {
        super::tuples_run(&surge_cuda::Emulator::default());
    }
    #[test]
    fn ragged_transposes_and_unequal_zips_are_errors_on_the_device() {
        super::ragged_transposes_and_unequal_zips_are_errors_on_the_device(
            &surge_cuda::Emulator::default(),
        );
    }
    #[test]
    fn root_reductions_run() {
        super::root_reductions_run(&surge_cuda::Emulator::default());
    }
    #[test]
    fn boolean_results_run() {
        super::boolean_results_run(&surge_cuda::Emulator::default());
    }
    #[test]
    fn bad_column_indices_are_gather_errors_on_the_device() {
        super::bad_column_indices_are_gather_errors_on_the_device(&surge_cuda::Emulator::default());
    }
    #[test]
    fn bad_offsets_are_nest_errors_on_the_device() {
        super::bad_offsets_are_nest_errors_on_the_device(&surge_cuda::Emulator::default());
    }
    #[test]
    fn an_empty_row_without_a_prefix_is_an_error_on_the_device() {
        super::an_empty_row_without_a_prefix_is_an_error_on_the_device(
            &surge_cuda::Emulator::default(),
        );
    }
    #[test]
    fn prepared_runs_times_and_downloads_every_reduce_variant() {
        super::prepared_runs_times_and_downloads_every_reduce_variant(
            &surge_cuda::Emulator::default(),
        );
    }
}
