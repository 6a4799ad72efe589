//! The shipped GEMM spaces load, plan as the paper describes, and count correctly.

use surge_beast::{Class, PlanOptions, RunOptions, Space};

const K40C: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/spaces/beast_gemm_k40c.toml");
const H200: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/spaces/beast_gemm_h200.toml");

#[test]
fn gemm_spaces_have_the_papers_shape() {
    for path in [K40C, H200] {
        let space = Space::from_toml_file(path).unwrap();
        assert_eq!(space.iterators.len(), 15, "{path}");
        for class in Class::ALL {
            assert_eq!(
                space
                    .constraints
                    .iter()
                    .filter(|c| c.class == class)
                    .count(),
                4,
                "{path} {class:?}"
            );
        }
        let plan = space.plan(&PlanOptions::default()).unwrap();
        assert_eq!(plan.loop_order().len(), 15);
        // The equality constraints are solved, not searched.
        let t = plan.tightened();
        assert!(t.iter().any(|(_, c)| *c == "cant_reshape_a1"), "{t:?}");
        assert!(t.iter().any(|(_, c)| *c == "cant_reshape_b1"), "{t:?}");
        // dim_vec follows the intent for double real: {1, 2}.
        assert!(
            plan.describe().contains("for dim_vec in range(1, 3, 1)"),
            "{}",
            plan.describe()
        );
    }
}

/// A K40c space shrunk to 64-thread blocks so debug-mode tests stay fast.
fn small_k40c() -> Space {
    let src = std::fs::read_to_string(K40C).unwrap();
    let src = src
        .replace("max_threads_per_block = 1024", "max_threads_per_block = 64")
        .replace("max_threads_dim_x = 1024", "max_threads_dim_x = 32")
        .replace("max_threads_dim_y = 1024", "max_threads_dim_y = 32");
    Space::from_toml_str(&src).unwrap()
}

#[test]
fn small_gemm_counts_agree_across_threads_and_tightening() {
    let space = small_k40c();
    let mut reference = None;
    for tighten in [true, false] {
        let plan = space
            .plan(&PlanOptions::default().tighten(tighten))
            .unwrap();
        for threads in if tighten { vec![1, 2, 4] } else { vec![2] } {
            let s = plan.count(&RunOptions::threads(threads)).unwrap();
            assert!(s.survivors > 0);
            match &reference {
                None => reference = Some(s.counts()),
                Some(r) => assert_eq!(&s.counts(), r, "tighten={tighten} threads={threads}"),
            }
        }
    }
    // Listing agrees with counting.
    let plan = space.plan(&PlanOptions::default()).unwrap();
    let (pts, _) = plan.collect(&RunOptions::threads(2)).unwrap();
    assert_eq!(pts.len() as u64, reference.unwrap().0);
}

#[test]
fn disabling_classes_only_grows_the_space() {
    let space = small_k40c();
    let count = |o: PlanOptions| {
        space
            .plan(&o)
            .unwrap()
            .count(&RunOptions::threads(2))
            .unwrap()
            .survivors
    };
    let all = count(PlanOptions::default());
    let no_soft = count(PlanOptions::default().disable("soft"));
    let no_fmas = count(PlanOptions::default().disable("low_fmas"));
    assert!(
        all < no_fmas && no_fmas <= no_soft,
        "{all} {no_fmas} {no_soft}"
    );
}

/// The full K40c space (about 1.2 million survivors); run with `--release -- --ignored`.
#[test]
#[ignore]
fn full_k40c_count() {
    let plan = Space::from_toml_file(K40C)
        .unwrap()
        .plan(&PlanOptions::default())
        .unwrap();
    let s = plan.count(&RunOptions::threads(0)).unwrap();
    assert_eq!(s.survivors, 1_207_600);
}
