//! Differential tests of fast counting (cuts, remembered sub-nests, closed forms): every count
//! and statistic equals a plain scan of the same plan (`PlanOptions::fast_count(false)`) and the
//! survivors equal a listing.

use proptest::prelude::*;
use surge_beast::{Class, PlanOptions, RunOptions, Space, Stats};

/// Counts of a space with fast counting on and off, for 1 and 3 threads; asserts they agree
/// and that listing delivers as many points; returns the survivors.
fn check(space: &Space) -> u64 {
    check_with(space, PlanOptions::default())
}

/// [`check`] under `opts`.
fn check_with(space: &Space, opts: PlanOptions) -> u64 {
    let fast = space.plan(&opts).unwrap();
    let scan = space.plan(&opts.clone().fast_count(false)).unwrap();
    let want: Stats = scan.count(&RunOptions::threads(1)).unwrap();
    for threads in [1, 3] {
        let got = fast.count(&RunOptions::threads(threads)).unwrap();
        assert_eq!(
            got.counts(),
            want.counts(),
            "threads={threads}\n{}",
            fast.describe()
        );
    }
    let (pts, _) = fast.collect(&RunOptions::threads(1)).unwrap();
    assert_eq!(pts.len() as u64, want.survivors);
    want.survivors
}

fn space(iterators: &[(&str, &str)], constraints: &[&str]) -> Space {
    let mut b = Space::builder("t").setting("N", 7);
    for (n, d) in iterators {
        b = b.iterator(*n, *d);
    }
    for (i, c) in constraints.iter().enumerate() {
        let class = [Class::Hard, Class::Soft, Class::Correctness][i % 3];
        b = b.constraint(format!("c{i}"), class, *c);
    }
    b.build().unwrap()
}

#[test]
fn closed_form_bounds_on_the_innermost_iterator() {
    // (domain of y, constraints, survivors by brute force in Python), x in range(0, 20).
    let cases: &[(&str, &[&str], u64)] = &[
        ("range(0, 20)", &["y > x + 3"], 264),
        ("range(0, 20)", &["y >= x", "y < 2"], 153),
        ("range(0, 20)", &["x <= y", "y != 5"], 14),
        ("range(0, 20)", &["y < 3 or y > 12"], 200),
        ("range(19, -1, -1)", &["y > x + 3", "y <= 1"], 224),
        ("range(30, -7, -4)", &["y > x", "2 > y"], 50),
        ("range(0, 40, 3)", &["y >= x", "y > 100"], 70),
        // Empty ranges and constraints that leave nothing.
        ("range(5, 5)", &["y > x"], 0),
        ("range(5, 0)", &["y > x"], 0),
        ("range(0, 20)", &["y > -100"], 0),
        ("range(0, 20)", &["y != 100"], 0),
    ];
    for (dy, cons, survivors) in cases {
        let s = space(&[("x", "range(0, 20)"), ("y", dy)], cons);
        let opts = PlanOptions {
            loop_order: Some(vec!["x".into(), "y".into()]),
            ..PlanOptions::default()
        };
        let plan = s.plan(&opts).unwrap();
        assert!(
            plan.describe().contains("counted in closed form"),
            "{dy} {cons:?}\n{}",
            plan.describe()
        );
        assert_eq!(check_with(&s, opts), *survivors, "{dy} {cons:?}");
    }
}

#[test]
fn independent_blocks_are_counted_once_and_multiplied() {
    // b depends on a, d on c; {a, b} and {c, d} are independent blocks.
    let s = space(
        &[
            ("a", "range(1, 30)"),
            ("b", "range(1, a + 1)"),
            ("c", "range(1, 25)"),
            ("d", "range(c, 40, 3)"),
            ("e", "range(0, 3)"),
        ],
        &["a % b != 0", "(c + d) % 4 == 0", "d * c > 200", "e == 1"],
    );
    let plan = s.plan(&PlanOptions::default()).unwrap();
    assert!(
        plan.describe().contains("do not depend on this block"),
        "{}",
        plan.describe()
    );
    assert!(check(&s) > 0);
}

#[test]
fn remembered_sub_nests_with_repeated_keys() {
    // The inner nest only reads `a * b`, which repeats across (a, b).
    let s = Space::builder("t")
        .iterator("a", "range(1, 13)")
        .iterator("b", "range(1, 13)")
        .derived("p", "a * b")
        .iterator("k", "range(1, 50)")
        .iterator("j", "range(1, k + 1)")
        .constraint("c0", Class::Hard, "p % k != 0")
        .constraint("c1", Class::Soft, "k % j != 0 or j * 2 > p")
        .build()
        .unwrap();
    let plan = s.plan(&PlanOptions::default()).unwrap();
    assert!(
        plan.describe().contains("counting remembers this sub-nest"),
        "{}",
        plan.describe()
    );
    assert!(check(&s) > 0);
}

#[test]
fn errors_are_those_of_a_scan() {
    // The independent rest fails on every block survivor: the error comes first either way.
    let s = space(
        &[("a", "range(0, 5)"), ("b", "range(0, 4)")],
        &["a > 2", "10 // (b - b) > 1"],
    );
    for fast in [true, false] {
        let plan = s.plan(&PlanOptions::default().fast_count(fast)).unwrap();
        let e = plan.count(&RunOptions::threads(1)).unwrap_err();
        assert!(e.to_string().contains("ZeroDivisionError"), "{e}");
        assert!(e.to_string().contains("c1"), "{e}");
    }
}

fn domain(i: usize) -> impl Strategy<Value = String> {
    let consts = prop_oneof![
        Just("range(0, 9)".to_string()),
        Just("range(8, -3, -2)".to_string()),
        Just("range(3, 3)".to_string()),
        Just("[2, 5, 5, 1]".to_string()),
        Just("range(-4, 12, 3)".to_string()),
    ];
    if i == 0 {
        return consts.boxed();
    }
    (consts, 0..i, 0..5usize)
        .prop_map(|(c, a, t)| match t {
            0 | 1 => c,
            2 => format!("range(i{a}, 10)"),
            3 => format!("range(0, abs(i{a}) + 2)"),
            _ => format!("range(9, i{a} - 1, -1)"),
        })
        .boxed()
}

fn constraint(ni: usize) -> impl Strategy<Value = String> {
    (0..ni, 0..ni, -3i64..10, 0..9usize).prop_map(move |(a, b, k, t)| {
        let (lo, hi) = (a.min(b), a.max(b));
        match t {
            0 => format!("i{hi} > i{lo} + {k}"),
            1 => format!("i{hi} <= {k}"),
            2 => format!("i{hi} != i{lo} - 1"),
            3 => format!("{k} >= i{hi}"),
            4 => format!("i{hi} < {k} or i{hi} > i{lo} + 4"),
            5 => format!("(i{a} + i{b}) % 3 == 0"),
            6 => format!("i{a} * i{b} != {k}"),
            7 => format!("i{hi} == {k}"),
            _ => format!("i{a} % 2 == 1"),
        }
    })
}

fn random_space() -> impl Strategy<Value = Space> {
    (1usize..6).prop_flat_map(|ni| {
        let doms: Vec<_> = (0..ni).map(|i| domain(i).boxed()).collect();
        (doms, proptest::collection::vec(constraint(ni), 0..5)).prop_map(|(doms, cons)| {
            let mut b = Space::builder("random");
            for (i, d) in doms.iter().enumerate() {
                b = b.iterator(format!("i{i}"), d.as_str());
            }
            for (i, c) in cons.iter().enumerate() {
                b = b.constraint(format!("c{i}"), Class::Hard, c.as_str());
            }
            b.build().unwrap()
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, .. ProptestConfig::default() })]

    #[test]
    fn fast_count_equals_scan(s in random_space()) {
        check(&s);
    }
}
