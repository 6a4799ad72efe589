//! k-means (issue 22): the two programs of a Lloyd iteration run natively with every CPU variant
//! equal to the interpreter; Surge's Lloyd reaches the plain-Rust Lloyd's labels and centroids
//! (to 1e-9) from the same initial centroids; the rules for empty clusters and bad input.

use surge::Target;
use surge::apps::kmeans::{self, LloydVariants, Points, data, program, reference};
use tests::conformance::{CpuBackend, check_all};

fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x - y).abs() <= tol * (1.0 + x.abs().max(y.abs())))
}

#[test]
fn both_programs_match_the_interpreter_with_every_variant() -> surge::Result<()> {
    let p = data::blobs(300, 5, 4, 3);
    let init = data::kmeans_plus_plus(&p, 4, 9)?;
    let relabel = program::relabel(p.data.clone(), init.clone(), 5)?;
    assert_eq!(relabel.analyze()?.expression_sequence(), "map.reduce");
    let n = check_all(&CpuBackend, "k-means relabeling", &relabel);
    assert!(n > 1, "{n} variants");
    // Labels sorted on the host, as Lloyd does; cluster 2 left empty.
    let labels: Vec<u32> = (0..300).map(|i| [0, 1, 3][i % 3]).collect();
    let mut order: Vec<u32> = (0..300).collect();
    order.sort_by_key(|&i| labels[i as usize]);
    let sorted: Vec<u32> = order.iter().map(|&i| labels[i as usize]).collect();
    let recalc = program::recalculate(p.data.clone(), order, sorted, vec![100.0; 3], 5)?;
    assert_eq!(
        recalc.analyze()?.expression_sequence(),
        "reduce_by_key.map, map.map"
    );
    let n = check_all(&CpuBackend, "k-means recalculation (Listing 5.5)", &recalc);
    assert!(n > 1, "{n} variants");
    Ok(())
}

/// The recalculation folds its runs in parallel (one output row per run of equal labels); a
/// bad point index or a ragged last point is still the interpreter's error on every variant.
#[test]
fn recalculation_errors_are_the_interpreters_on_every_variant() -> surge::Result<()> {
    use tests::conformance::Backend;
    let d = 4;
    let cases = [
        // Point 9 does not exist (9 points): the gather names the index.
        (36, vec![0u32, 3, 6, 1, 4, 9, 2, 5, 8], "index 9"),
        // 35 values: the last point has 3 values, the sum of its cluster's rows fails.
        (35, vec![0u32, 3, 6, 1, 4, 7, 2, 5, 8], "length"),
    ];
    for (values, order, what) in cases {
        let sorted = vec![0u32, 0, 0, 1, 1, 1, 2, 2, 2];
        let points: Vec<f64> = (0..values).map(|v| v as f64).collect();
        let c = program::recalculate(points, order, sorted, vec![3.0; 3], d)?;
        let want = c
            .interpret()
            .expect_err("the interpreter refuses it")
            .to_string();
        assert!(want.contains(what), "{want}");
        let results = CpuBackend.run_all(&c).expect("kernels build");
        assert!(results.len() > 1);
        for (id, r) in results {
            let e = r.expect_err(&format!("variant {id} accepted it"));
            assert_eq!(e, want, "variant {id}");
        }
    }
    Ok(())
}

#[test]
fn surge_lloyd_reaches_the_plain_rust_lloyd() -> surge::Result<()> {
    let p = data::blobs(3000, 8, 6, 11);
    let init = data::kmeans_plus_plus(&p, 6, 2)?;
    let want = reference::lloyd_serial(&p, &init, 100);
    let par = reference::lloyd_rayon(&p, &init, 100);
    assert_eq!(par.labels, want.labels);
    let got = kmeans::lloyd(&p, &init, 100, &Target::cpu(), &LloydVariants::default())?;
    assert_eq!(got.labels, want.labels);
    assert_eq!(got.counts, want.counts);
    assert_eq!(
        (got.iterations, got.converged),
        (want.iterations, want.converged)
    );
    assert!(close(&got.centroids, &want.centroids, 1e-9));
    assert!(close(&[got.inertia], &[want.inertia], 1e-9));
    // A capped run stops where the reference stops.
    let got = kmeans::lloyd(&p, &init, 2, &Target::cpu(), &LloydVariants::default())?;
    let want = reference::lloyd_serial(&p, &init, 2);
    assert_eq!((got.iterations, got.converged), (2, false));
    assert_eq!(got.labels, want.labels);
    assert!(close(&got.centroids, &want.centroids, 1e-9));
    Ok(())
}

#[test]
fn an_empty_cluster_keeps_its_centroid() -> surge::Result<()> {
    let p = Points::new(2, vec![0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 5.0, 5.0, 6.0, 5.0])?;
    // The third centroid is nearest to no point.
    let init = vec![0.0, 0.0, 5.0, 5.0, 100.0, 100.0];
    let got = kmeans::lloyd(&p, &init, 10, &Target::cpu(), &LloydVariants::default())?;
    let want = reference::lloyd_serial(&p, &init, 10);
    assert_eq!(got.counts, vec![3, 2, 0]);
    assert_eq!(&got.centroids[4..], &[100.0, 100.0]);
    assert!(close(&got.centroids, &want.centroids, 1e-12));
    assert!(got.converged);
    Ok(())
}

#[test]
fn bad_points_and_k_are_errors_that_say_where() {
    let e = data::parse_csv("1,2\n3,4\n5\n").unwrap_err();
    assert_eq!(e, "line 3: 1 values, the first point has 2");
    let e = data::parse_csv("1,2\n# c\n3,x\n").unwrap_err();
    assert_eq!(e, "line 3: `x` is not a finite number");
    let p = data::parse_csv("1,2\n3,4\n").unwrap();
    let e = data::kmeans_plus_plus(&p, 3, 1).unwrap_err().to_string();
    assert!(e.contains("k = 3 clusters for 2 points"), "{e}");
}

#[test]
fn npy_points_are_read() {
    let dir = std::env::temp_dir().join(format!("surge-kmeans-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut header = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }".to_string();
    while !(10 + header.len() + 1).is_multiple_of(64) {
        header.push(' ');
    }
    header.push('\n');
    let mut b = b"\x93NUMPY\x01\x00".to_vec();
    b.extend((header.len() as u16).to_le_bytes());
    b.extend(header.as_bytes());
    for v in [1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0] {
        b.extend(v.to_le_bytes());
    }
    let f = dir.join("p.npy");
    std::fs::write(&f, &b).unwrap();
    let p = Points::read(&f).unwrap();
    assert_eq!((p.d, p.len()), (2, 3));
    assert_eq!(p.point(2), &[5.0, 6.0]);
    std::fs::write(&f, &b[..b.len() - 8]).unwrap();
    let e = Points::read(&f).unwrap_err().to_string();
    assert!(e.contains("holds 40 bytes of data, not 48"), "{e}");
}

/// scikit-learn's `KMeans(algorithm='lloyd', n_init=1, tol=0)` from the same initial centroids,
/// on the generated blobs and two real data sets it bundles (iris, wine): the fixture and the
/// script that wrote it are in `tests/data/kmeans/`. Surge's Lloyd (default variants) reaches
/// the same labels and centroids to 1e-9; on iris, so does every variant of each program.
#[test]
fn surge_lloyd_reaches_scikit_learns_centroids() -> surge::Result<()> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/kmeans");
    let text = std::fs::read_to_string(dir.join("sklearn.json")).expect("the fixture");
    let fx: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let rows = |v: &serde_json::Value| -> Vec<f64> {
        v.as_array()
            .expect("rows")
            .iter()
            .flat_map(|r| {
                r.as_array()
                    .expect("a row")
                    .iter()
                    .map(|x| x.as_f64().expect("a number"))
            })
            .collect()
    };
    for name in ["blobs", "iris", "wine"] {
        let f = &fx[name];
        let points = if name == "blobs" {
            let g = &f["generator"];
            let at = |k: &str| g[k].as_u64().expect("generator field") as usize;
            data::blobs(at("n"), at("d"), at("k"), at("seed") as u64)
        } else {
            Points::read(&dir.join(format!("{name}.csv")))?
        };
        let init = rows(&f["init"]);
        let got = kmeans::lloyd(
            &points,
            &init,
            300,
            &Target::cpu(),
            &LloydVariants::default(),
        )?;
        let want_labels: Vec<u32> = f["labels"]
            .as_array()
            .expect("labels")
            .iter()
            .map(|l| l.as_u64().expect("a label") as u32)
            .collect();
        assert_eq!(got.labels, want_labels, "{name}");
        assert!(
            close(&got.centroids, &rows(&f["centroids"]), 1e-9),
            "{name}: {:?}",
            got.centroids
        );
        assert!(got.converged, "{name}");
        if name == "iris" {
            every_variant_reaches(&points, &init, &got);
        }
        eprintln!(
            "{name}: {} points, {} iterations (scikit-learn {} reported {})",
            points.len(),
            got.iterations,
            fx["sklearn"],
            f["iterations"]
        );
    }
    Ok(())
}

/// Lloyd with each relabeling variant (the recalculation at its default), then each
/// recalculation variant, reaches `want`.
fn every_variant_reaches(points: &Points, init: &[f64], want: &kmeans::KMeansResult) {
    let d = points.d;
    let relabel = program::relabel(points.data.clone(), init.to_vec(), d).unwrap();
    let labels = want.labels.clone();
    let mut order: Vec<u32> = (0..labels.len() as u32).collect();
    order.sort_by_key(|&i| labels[i as usize]);
    let sorted: Vec<u32> = order.iter().map(|&i| labels[i as usize]).collect();
    let counts: Vec<f64> = want.counts.iter().map(|&c| c as f64).collect();
    let recalc = program::recalculate(points.data.clone(), order, sorted, counts, d).unwrap();
    let ids = |c: &surge::Computation| -> Vec<String> {
        surge::Kernels::shared(c, &Target::cpu())
            .unwrap()
            .variants()
            .iter()
            .map(|v| v.id())
            .collect()
    };
    let runs = ids(&relabel)
        .into_iter()
        .map(|id| LloydVariants {
            relabel: Some(id),
            recalculate: None,
        })
        .chain(ids(&recalc).into_iter().map(|id| LloydVariants {
            relabel: None,
            recalculate: Some(id),
        }));
    let mut n = 0;
    for v in runs {
        let got = kmeans::lloyd(points, init, 300, &Target::cpu(), &v).unwrap();
        assert_eq!(got.labels, want.labels, "{v:?}");
        assert!(close(&got.centroids, &want.centroids, 1e-12), "{v:?}");
        n += 1;
    }
    eprintln!("iris: {n} variant pairings reach the same centroids");
}
