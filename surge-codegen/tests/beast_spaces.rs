//! The shipped GEMM spaces load, plan as the paper describes, and count correctly.

use surge_beast::{Class, PlanOptions, RunOptions, Space};

const K40C: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/spaces/beast_gemm_k40c.toml");
const H200: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/spaces/beast_gemm_h200.toml");
const OSF: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/spaces/osf_dgemm_k40c.toml");

/// The one-sided-factorizations paper's DGEMM space: nine parameters, nine checks, and the
/// paper's count of kernels on a K40c.
#[test]
fn osf_dgemm_k40c_has_the_papers_14767_kernels() {
    let space = Space::from_toml_file(OSF).unwrap();
    assert_eq!(space.iterators.len(), 9);
    assert_eq!(space.constraints.len(), 9);
    let plan = space.plan(&PlanOptions::default()).unwrap();
    assert_eq!(
        plan.count(&RunOptions::threads(2)).unwrap().survivors,
        14_767
    );
}

/// The paper's fastest kernel (96 x 64 x 12, 16 x 8 threads for C) survives, reading A as
/// 32 x 4 and B as 4 x 32 as the paper reports.
#[test]
fn osf_dgemm_k40c_keeps_the_papers_best_kernel() {
    let src = std::fs::read_to_string(OSF).unwrap();
    let pinned = src
        .replace(
            "dim_x = \"range(1, max_threads_dim_x + 1)\"",
            "dim_x = \"16\"",
        )
        .replace(
            "dim_y = \"range(1, max_threads_dim_y + 1)\"",
            "dim_y = \"8\"",
        )
        .replace("blk_m = \"range(dim_x, inf + 1, dim_x)\"", "blk_m = \"96\"")
        .replace("blk_n = \"range(dim_y, inf + 1, dim_y)\"", "blk_n = \"64\"")
        .replace("blk_k = \"range(1, inf + 1)\"", "blk_k = \"12\"");
    assert_ne!(pinned, src);
    let plan = Space::from_toml_str(&pinned)
        .unwrap()
        .plan(&PlanOptions::default())
        .unwrap();
    let (pts, _) = plan.collect(&RunOptions::threads(1)).unwrap();
    assert_eq!(pts.len(), 1);
    let ints: Vec<i64> = pts[0].iter().map(|v| v.as_i64().unwrap()).collect();
    assert_eq!(ints, [16, 8, 96, 64, 12, 32, 4, 4, 32]);
}

/// Fast counting equals a scan on every shipped space (the GEMM ones shrunk to stay fast in
/// debug builds).
#[test]
fn shipped_spaces_count_the_same_fast_and_scanning() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/spaces");
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let src = std::fs::read_to_string(&path).unwrap();
        let src = src
            .replace("max_threads_per_block = 1024", "max_threads_per_block = 64")
            .replace("max_threads_dim_x = 1024", "max_threads_dim_x = 32")
            .replace("max_threads_dim_y = 1024", "max_threads_dim_y = 32")
            .replace("inf = 6144", "inf = 512");
        let space = Space::from_toml_str(&src).unwrap();
        let counts = |fast: bool| {
            space
                .plan(&PlanOptions::default().fast_count(fast))
                .unwrap()
                .count(&RunOptions::threads(2))
                .unwrap()
                .counts()
        };
        assert_eq!(counts(true), counts(false), "{}", path.display());
        seen += 1;
    }
    assert!(seen >= 11, "{seen} spaces");
}

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

/// The full GEMM spaces (1.2 and 5.1 million survivors): fast counting takes about a second.
#[test]
fn full_gemm_counts() {
    for (path, survivors) in [(K40C, 1_207_600), (H200, 5_123_440)] {
        let plan = Space::from_toml_file(path)
            .unwrap()
            .plan(&PlanOptions::default())
            .unwrap();
        let s = plan.count(&RunOptions::threads(0)).unwrap();
        assert_eq!(s.survivors, survivors, "{path}");
    }
}
