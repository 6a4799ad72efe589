//! Structural golden tests: expression sequences and fusion groups of the built-in apps.

use surge::apps::{App, AppInput, BuiltApp};
use surge::codegen::analysis::Analysis;
use surge::prelude::*;

fn analysis(app: App, input: AppInput) -> Analysis {
    BuiltApp::new(app, &input)
        .unwrap()
        .computation
        .analyze()
        .unwrap()
}

fn fused(a: &Analysis, phase: usize, level: usize) -> Vec<&'static str> {
    a.phases[phase].levels[level]
        .fused
        .iter()
        .map(|f| f.op.name())
        .collect()
}

#[test]
fn spmv_is_map_reduce_with_gather_and_map_fused() {
    let a = analysis(App::Spmv, AppInput::Default);
    assert_eq!(a.expression_sequence(), "map.reduce");
    assert_eq!(a.phases.len(), 1);
    assert_eq!(fused(&a, 0, 0), ["nest", "nest"]);
    assert_eq!(fused(&a, 0, 1), ["map", "gather"]);
}

#[test]
fn tiled_reduction_is_two_map_reduce_phases() {
    let a = analysis(App::Reduce, AppInput::Size(10_000));
    assert_eq!(a.expression_sequence(), "map.reduce, map.reduce");
    assert_eq!(a.phases[1].depends_on, vec![a.phases[0].root]);
    assert_eq!(fused(&a, 0, 0), ["split"]);
}

#[test]
fn scan_phases_are_map_reduce_then_map_scan() {
    let a = analysis(App::Scan, AppInput::Size(10_000));
    assert_eq!(a.expression_sequence(), "map.reduce, map.scan, map.scan");
    let seqs: Vec<String> = a.phases.iter().map(|p| p.expression_sequence()).collect();
    assert!(seqs.contains(&"map.scan".to_string()) && seqs.contains(&"map.reduce".to_string()));
}

#[test]
fn kmeans_centroid_recalculation_is_reduce_by_key_map() {
    // Listing 5.5: points (d = 2) sorted by label, summed per label.
    let points = Seq::input("points", vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let labels = Seq::input("labels", vec![0u32, 0, 1]).unwrap();
    let s_points = split(&points, 2u64).unwrap();
    let s_prefix = replicate::<f64>(0.0, 2u64).unwrap();
    let centroids = reduce_by_key(
        |x: Seq<f64>, y: Seq<f64>| map(|(a, b)| a + b, (&x, &y)),
        &s_points,
        &labels,
        &s_prefix,
    )
    .unwrap();
    let c = Computation::new(&centroids).unwrap();
    assert_eq!(
        c.analyze().unwrap().expression_sequence(),
        "reduce_by_key.map"
    );
    assert_eq!(
        centroids.interpret().unwrap(),
        vec![vec![4.0, 6.0], vec![5.0, 6.0]]
    );
}

#[test]
fn features_of_the_apps() {
    let spmv = BuiltApp::new(App::Spmv, &AppInput::Default)
        .unwrap()
        .computation
        .features()
        .unwrap();
    assert_eq!(spmv.length, 65536);
    assert_eq!(spmv.elements, 326_656);
    assert!((spmv.avg_row_length.unwrap() - 4.984375).abs() < 1e-12);
    assert_eq!(spmv.aspect_ratio, None);
    let red = BuiltApp::new(App::Reduce, &AppInput::Size(1 << 16))
        .unwrap()
        .computation
        .features()
        .unwrap();
    assert_eq!((red.length, red.elements), (16, 1 << 16));
    assert_eq!(red.aspect_ratio, Some(16.0 / 4096.0));
    assert_eq!(red.avg_row_length, None);
    assert!(spmv.levels.is_empty() && red.levels.is_empty());
}

/// An input nested twice (blocks of rows of values): the features of each level.
#[test]
fn features_per_nesting_level() {
    use surge::prelude::*;
    // 2 blocks of 3 and 1 rows; the 4 rows hold 2, 2, 2 and 4 values.
    let values = Seq::input("values", (0..10).map(f64::from).collect()).unwrap();
    let rows = Seq::input("rows", vec![0u64, 2, 4, 6, 10]).unwrap();
    let blocks = Seq::input("blocks", vec![0u64, 3, 4]).unwrap();
    let nested = nest(&nest(&values, &rows).unwrap(), &blocks).unwrap();
    let sums = map(
        |block: Nested<f64>| map(|row: Seq<f64>| reduce(add, &row), &block),
        &nested,
    )
    .unwrap();
    let f = Computation::new(&sums).unwrap().features().unwrap();
    assert_eq!((f.length, f.elements), (2, 10));
    assert_eq!(f.avg_row_length, Some(2.0));
    assert_eq!(f.levels.len(), 1);
    let l = &f.levels[0];
    assert_eq!((l.rows, l.elements), (4, 10));
    assert_eq!((l.avg_row_length, l.aspect_ratio), (Some(2.5), None));
}

#[test]
fn ir_hash_is_stable_and_structure_hash_ignores_lengths() {
    let c1 = BuiltApp::new(App::Reduce, &AppInput::Size(5000))
        .unwrap()
        .computation;
    let c2 = BuiltApp::new(App::Reduce, &AppInput::Size(5000))
        .unwrap()
        .computation;
    assert_eq!(c1.ir(), c2.ir());
    assert_eq!(c1.ir().stable_hash(), c2.ir().stable_hash());
    let json = serde_json::to_string(c1.ir()).unwrap();
    let back: surge::codegen::ir::Computation = serde_json::from_str(&json).unwrap();
    assert_eq!(&back, c1.ir());
    let c3 = BuiltApp::new(App::Reduce, &AppInput::Size(7000))
        .unwrap()
        .computation;
    assert_ne!(c1.ir().stable_hash(), c3.ir().stable_hash());
}

#[test]
fn app_results_match_direct_computation() {
    let n = 10_001;
    let data = surge::apps::sum_input(n);
    let red = BuiltApp::new(App::Reduce, &AppInput::Size(n))
        .unwrap()
        .computation
        .interpret()
        .unwrap();
    let total: f64 = data.iter().sum();
    assert!((red.to_f64_vec().unwrap()[0] - total).abs() < 1e-9 * total);
    let scan = BuiltApp::new(App::Scan, &AppInput::Size(n))
        .unwrap()
        .computation
        .interpret()
        .unwrap();
    let flat: Vec<f64> = scan
        .as_seq()
        .unwrap()
        .iter()
        .flat_map(|r| r.to_f64_vec().unwrap())
        .collect();
    let mut acc = 0.0;
    for (i, y) in flat.iter().enumerate() {
        assert!(
            (y - acc).abs() <= 1e-9 * acc.max(1.0),
            "position {i}: {y} vs {acc}"
        );
        acc += data[i];
    }
    assert_eq!(flat.len(), n);
}
