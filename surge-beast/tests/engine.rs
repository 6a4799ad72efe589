//! Engine correctness: pruned, hoisted, tightened, parallel enumeration equals brute force.

use std::collections::HashMap;

use proptest::prelude::*;
use surge_beast::{
    Class, Domain, Expr, GeneratorFn, PlanOptions, Resolved, RunOptions, Space, Value, parse_expr,
};

/// A generated space: iterators (each may use earlier ones), derived values, constraints.
#[derive(Debug, Clone)]
struct Spec {
    n: i64,
    iterators: Vec<String>,
    derived: Vec<String>,
    constraints: Vec<String>,
}

fn it_template(i: usize) -> impl Strategy<Value = String> {
    let first = prop_oneof![
        Just("range(0, N + 2)".to_string()),
        Just("[1, 2, 3, 5, 3]".to_string()),
        Just("range(N, -2, -1)".to_string()),
        Just("range(1, 9, 2)".to_string()),
        Just("7".to_string()),
        Just("union(range(0, 4), [6, 2])".to_string()),
    ];
    if i == 0 {
        return first.boxed();
    }
    let j = 0..i;
    (first, j.clone(), j, 0..7usize)
        .prop_map(move |(f, a, b, t)| match t {
            0 => f,
            1 => format!("range(i{a}, N + 3)"),
            2 => format!("range(1, abs(i{a}) + 2)"),
            3 => format!("[i{a}, i{b} + 1, 2]"),
            4 => format!("range(i{a} + 3, -1, -2)"),
            5 => format!("0 if i{a} % 2 == 0 else range(0, 3)"),
            _ => format!("difference(range(0, 6), [i{a}])"),
        })
        .boxed()
}

fn cons_template(ni: usize, nd: usize) -> impl Strategy<Value = String> {
    (0..ni, 0..ni, 0..(nd.max(1)), -3i64..12, 0..12usize).prop_map(move |(a, b, d, k, t)| {
        let dv = if nd > 0 {
            format!("d{d}")
        } else {
            format!("i{a}")
        };
        match t {
            0 => format!("i{a} * i{b} != {k}"),
            1 => format!("i{a} + i{b} > {k}"),
            2 => format!("i{a} % 2 == 1"),
            3 => format!("{dv} > {k}"),
            4 => format!("i{a} == i{b}"),
            5 => format!("i{a} - i{b} != {k}"),
            6 => format!("min(i{a}, i{b}) * 2 > {k} or i{a} == 0"),
            7 => format!("(i{a} ^ i{b}) & 1 == 1"),
            8 => format!("i{a} // 2 >= i{b}"),
            9 => format!("i{b} != {k} or i{a} * 3 > N"),
            10 => format!("{dv} * i{b} != {k} and i{a} != 1"),
            _ => format!("not ({dv} == {k})"),
        }
    })
}

fn spec() -> impl Strategy<Value = Spec> {
    (1i64..5, 1usize..5).prop_flat_map(|(n, ni)| {
        let its: Vec<_> = (0..ni).map(|i| it_template(i).boxed()).collect();
        (Just(n), its, 0usize..3).prop_flat_map(move |(n, iterators, nd)| {
            let ni = iterators.len();
            let ders = proptest::collection::vec(
                (0..ni, 0..ni, 0..4usize).prop_map(|(a, b, t)| match t {
                    0 => format!("i{a} * i{b} + 1"),
                    1 => format!("i{a} % (abs(i{b}) + 1)"),
                    2 => format!("max(i{a}, i{b}) - N"),
                    _ => format!("(i{a} + i{b}) // 2"),
                }),
                nd,
            );
            let cons = proptest::collection::vec(cons_template(ni, nd), 1..5);
            (Just(n), Just(iterators.clone()), ders, cons).prop_map(
                |(n, iterators, derived, constraints)| Spec {
                    n,
                    iterators,
                    derived,
                    constraints,
                },
            )
        })
    })
}

fn build(s: &Spec) -> Space {
    let mut b = Space::builder("random").setting("N", s.n);
    for (i, e) in s.iterators.iter().enumerate() {
        b = b.iterator(format!("i{i}"), e.as_str());
    }
    for (i, e) in s.derived.iter().enumerate() {
        b = b.derived(format!("d{i}"), e.as_str());
    }
    for (i, e) in s.constraints.iter().enumerate() {
        let class = [Class::Hard, Class::Soft, Class::Correctness][i % 3];
        b = b.constraint(format!("c{i}"), class, e.as_str());
    }
    b.build().unwrap()
}

/// Brute force: nested loops in declaration order, every derived value and every constraint
/// evaluated on every full point; returns survivors as iterator value vectors.
fn brute_force(s: &Spec, disabled: &[usize]) -> Vec<Vec<Value>> {
    let ni = s.iterators.len();
    let names: HashMap<String, u32> = (0..ni)
        .map(|i| (format!("i{i}"), i as u32))
        .chain((0..s.derived.len()).map(|d| (format!("d{d}"), (ni + d) as u32)))
        .collect();
    let compile = |src: &str| -> Expr {
        let mut e = parse_expr(src).unwrap();
        let n = s.n;
        e.resolve(&|name: &str| {
            if name == "N" {
                Some(Resolved::Const(Value::Int(n)))
            } else {
                names.get(name).map(|&s| Resolved::Slot(s))
            }
        })
        .unwrap();
        e
    };
    let doms: Vec<Expr> = s.iterators.iter().map(|e| compile(e)).collect();
    let ders: Vec<Expr> = s.derived.iter().map(|e| compile(e)).collect();
    let cons: Vec<Expr> = s
        .constraints
        .iter()
        .enumerate()
        .filter(|(i, _)| !disabled.contains(i))
        .map(|(_, e)| compile(e))
        .collect();
    let mut out = Vec::new();
    let mut env = vec![Value::None; ni + ders.len()];
    #[allow(clippy::too_many_arguments)]
    fn rec(
        k: usize,
        env: &mut Vec<Value>,
        doms: &[Expr],
        ders: &[Expr],
        cons: &[Expr],
        out: &mut Vec<Vec<Value>>,
    ) {
        let ni = doms.len();
        if k == ni {
            for (d, e) in ders.iter().enumerate() {
                env[ni + d] = e.eval(env).unwrap();
            }
            if cons.iter().all(|c| !c.eval(env).unwrap().truthy()) {
                out.push(env[..ni].to_vec());
            }
            return;
        }
        let vals = match doms[k].eval(env).unwrap() {
            Value::Range(r) => r.iter().map(Value::Int).collect(),
            Value::List(l) => l.to_vec(),
            v => vec![v],
        };
        for v in vals {
            env[k] = v;
            rec(k + 1, env, doms, ders, cons, out);
        }
    }
    rec(0, &mut env, &doms, &ders, &cons, &mut out);
    out
}

fn key(v: &[Value]) -> Vec<i64> {
    v.iter().map(|x| x.as_i64().expect("int")).collect()
}

fn sorted(mut v: Vec<Vec<i64>>) -> Vec<Vec<i64>> {
    v.sort();
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, .. ProptestConfig::default() })]

    #[test]
    fn engine_equals_brute_force(s in spec(), disable_first in any::<bool>()) {
        let space = build(&s);
        let disabled: Vec<usize> = if disable_first { vec![0] } else { vec![] };
        let want = sorted(brute_force(&s, &disabled).iter().map(|p| key(p)).collect());
        let mut reference = None;
        for tighten in [true, false] {
            let mut opts = PlanOptions::default().tighten(tighten);
            if disable_first {
                opts.disable.push("c0".into());
            }
            let plan = space.plan(&opts).unwrap();
            for threads in [1, 3] {
                let run = RunOptions::threads(threads);
                let (pts, stats) = plan.collect(&run).unwrap();
                let got: Vec<Vec<i64>> = pts.iter().map(|p| key(p)).collect();
                prop_assert_eq!(sorted(got.clone()), want.clone(), "plan:\n{}", plan.describe());
                let counted = plan.count(&run).unwrap();
                prop_assert_eq!(counted.survivors, want.len() as u64);
                prop_assert_eq!(stats.counts(), counted.counts());
                // Same content, same order, same statistics for every thread count and
                // with or without tightening.
                match &reference {
                    None => reference = Some((got, counted.counts())),
                    Some((order, counts)) => {
                        prop_assert_eq!(&got, order);
                        prop_assert_eq!(&counted.counts(), counts);
                    }
                }
            }
        }
    }
}

fn primes_upto(max: i64) -> Vec<i64> {
    // The paper's Figure 3 yields 1 and 2, then odd primes up to MAX.
    let mut out = vec![1, 2];
    let mut n = 3;
    while n <= max {
        if (3..)
            .step_by(2)
            .take_while(|d| d * d <= n)
            .all(|d| n % d != 0)
        {
            out.push(n);
        }
        n += 2;
    }
    out
}

fn fibonacci_upto(max: i64) -> impl Iterator<Item = i64> {
    // Figure 6: k = n = 1; while n <= MAX: yield n; n, k = n + k, n
    std::iter::successors(Some((1i64, 1i64)), |&(n, k)| Some((n + k, n)))
        .map(|(n, _)| n)
        .take_while(move |&n| n <= max)
}

#[test]
fn closure_iterators_primes_and_fibonacci() {
    let space = Space::builder("closures")
        .setting("MAX", 30)
        .generator("p", &["MAX"], |a: &[Value]| {
            primes_upto(a[0].as_i64().unwrap_or(0))
        })
        .generator("f", &["MAX"], |a: &[Value]| {
            fibonacci_upto(a[0].as_i64().unwrap_or(0))
        })
        .build()
        .unwrap();
    let plan = space.plan(&PlanOptions::default()).unwrap();
    let (pts, _) = plan.collect(&RunOptions::threads(1)).unwrap();
    let mut ps: Vec<i64> = pts.iter().map(|p| p[0].as_i64().unwrap()).collect();
    let mut fs: Vec<i64> = pts.iter().map(|p| p[1].as_i64().unwrap()).collect();
    ps.dedup();
    fs.sort();
    fs.dedup();
    assert_eq!(ps, vec![1, 2, 3, 5, 7, 11, 13, 17, 19, 23, 29]);
    assert_eq!(fs, vec![1, 2, 3, 5, 8, 13, 21]);
    assert_eq!(pts.len(), 11 * 7);

    // A generator whose argument is another iterator, combined with constraints.
    let space = Space::builder("dependent-generator")
        .setting("MAX", 50)
        .iterator("m", "range(3, MAX + 1, 7)")
        .generator("q", &["m"], |a: &[Value]| {
            primes_upto(a[0].as_i64().unwrap_or(0))
        })
        .constraint("even_sum", Class::Soft, "(m + q) % 2 == 0")
        .build()
        .unwrap();
    let plan = space.plan(&PlanOptions::default()).unwrap();
    let mut want = 0;
    for m in (3..=50).step_by(7) {
        want += primes_upto(m)
            .into_iter()
            .filter(|q| (m + q) % 2 != 0)
            .count() as u64;
    }
    assert_eq!(plan.count(&RunOptions::threads(2)).unwrap().survivors, want);

    // Registered generators are reachable from TOML too.
    let mut gens: HashMap<String, GeneratorFn> = HashMap::new();
    gens.insert(
        "primes".into(),
        std::sync::Arc::new(|a: &[Value]| {
            Ok(primes_upto(a[0].as_i64().unwrap_or(0))
                .into_iter()
                .map(Value::Int)
                .collect())
        }),
    );
    let src =
        "[settings]\nMAX = 20\n[iterators]\np = { generator = \"primes\", args = [\"MAX\"] }\n";
    let space = Space::from_toml_str_with(src, &gens).unwrap();
    assert_eq!(
        space
            .plan(&PlanOptions::default())
            .unwrap()
            .count(&RunOptions::threads(1))
            .unwrap()
            .survivors,
        9
    );
}

#[test]
fn figure2_dependent_and_deferred_iterators() {
    // Deferred iterators in any order: `inner` is defined before `outer`.
    let src = r#"
        [settings]
        architecture = "Kepler"
        [iterators]
        inner = "range(outer)"
        outer = "range(32) if architecture == 'Fermi' else (range(192) if architecture == 'Kepler' else range(256))"
        ex_outer = "range(100)"
        ex_inner = "range(ex_outer)"
    "#;
    let space = Space::from_toml_str(src).unwrap();
    let plan = space.plan(&PlanOptions::default()).unwrap();
    let order = plan.loop_order();
    let pos = |n: &str| order.iter().position(|x| *x == n).unwrap();
    assert!(pos("outer") < pos("inner"));
    assert!(pos("ex_outer") < pos("ex_inner"));
    let stats = plan.count(&RunOptions::threads(2)).unwrap();
    assert_eq!(stats.survivors, (191 * 192 / 2) * (99 * 100 / 2));
    // Points keep the declaration order of fields.
    let (pts, _) = plan
        .collect(&RunOptions {
            threads: 2,
            limit: Some(3),
        })
        .unwrap();
    assert_eq!(pts.len(), 3);
    assert_eq!(
        plan.iterator_names(),
        &["inner", "outer", "ex_outer", "ex_inner"]
    );
}

#[test]
fn builder_set_algebra_negative_steps_and_natives() {
    let space = Space::builder("algebra")
        .setting("N", 10)
        .iterator(
            "a",
            Domain::union(Domain::expr("range(0, 6, 2)"), Domain::values([3, 4, 9])),
        )
        .iterator(
            "b",
            Domain::difference(Domain::expr("range(N, 0, -1)"), Domain::expr("[a, 5]")),
        )
        .iterator(
            "c",
            Domain::intersection(Domain::range("0", "N", "3"), Domain::values([0, 3, 4, 9])),
        )
        .derived_fn("ab", &["a", "b"], |v| {
            Ok(Value::Int(
                v[0].as_i64().unwrap_or(0) * v[1].as_i64().unwrap_or(0),
            ))
        })
        .constraint_fn("odd", Class::Correctness, &["ab"], |v| {
            v[0].as_i64().unwrap_or(0) % 2 == 1
        })
        .constraint("lw", Class::Hard, "b & (b - 1) != 0")
        .build()
        .unwrap();
    let plan = space.plan(&PlanOptions::default()).unwrap();
    let mut want = 0;
    for a in [0, 2, 4, 3, 9] {
        for b in (1..=10).rev().filter(|b| *b != a && *b != 5) {
            for _c in [0, 3, 9] {
                if (a * b) % 2 != 1 && (b & (b - 1)) == 0 {
                    want += 1;
                }
            }
        }
    }
    assert_eq!(plan.count(&RunOptions::threads(1)).unwrap().survivors, want);
    assert_eq!(plan.count(&RunOptions::threads(2)).unwrap().survivors, want);
}

#[test]
fn disabling_by_class_and_name() {
    let space = Space::builder("d")
        .iterator("x", "range(0, 10)")
        .constraint("h", Class::Hard, "x > 5")
        .constraint("s", Class::Soft, "x % 2 == 1")
        .build()
        .unwrap();
    let count = |opts: PlanOptions| {
        space
            .plan(&opts)
            .unwrap()
            .count(&RunOptions::threads(1))
            .unwrap()
            .survivors
    };
    assert_eq!(count(PlanOptions::default()), 3);
    assert_eq!(count(PlanOptions::default().disable("hard")), 5);
    assert_eq!(count(PlanOptions::default().disable("s")), 6);
    assert_eq!(
        count(PlanOptions::default().disable("soft").disable("h")),
        10
    );
    assert!(space.plan(&PlanOptions::default().disable("nope")).is_err());
}

#[test]
fn runtime_errors_name_the_constraint() {
    let space = Space::builder("e")
        .iterator("x", "range(0, 3)")
        .constraint("div", Class::Soft, "10 // (x - 1) > 3")
        .build()
        .unwrap();
    let e = space
        .plan(&PlanOptions::default())
        .unwrap()
        .count(&RunOptions::threads(2))
        .unwrap_err();
    assert_eq!(e.entry(), Some("div"));
    assert_eq!(e.column(), Some(4));
    assert!(!e.is_input_error());
}

#[test]
fn streaming_iterator_and_unordered_callback() {
    let space = Space::builder("s")
        .iterator("x", "range(0, 50)")
        .iterator("y", "range(x, 50)")
        .constraint("c", Class::Hard, "(x + y) % 3 == 0")
        .build()
        .unwrap();
    let plan = space.plan(&PlanOptions::default()).unwrap();
    let run = RunOptions::threads(2);
    let (all, _) = plan.collect(&run).unwrap();
    let mut it = plan.points(&run);
    let streamed: Vec<Vec<Value>> = it.by_ref().map(|p| p.unwrap()).collect();
    assert_eq!(streamed, all);
    assert_eq!(it.stats().unwrap().survivors, all.len() as u64);
    let n = std::sync::atomic::AtomicU64::new(0);
    plan.par_for_each(&run, |_| {
        n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    })
    .unwrap();
    assert_eq!(n.into_inner(), all.len() as u64);
    let (first, stats) = plan
        .collect(&RunOptions {
            threads: 2,
            limit: Some(7),
        })
        .unwrap();
    assert_eq!(first[..], all[..7]);
    assert!(!stats.complete);
}

#[test]
fn second_clip_equals_full_scan() {
    // The loop of y is clipped by c1; c2, the next check (a derived value between them), is
    // monotone too (rising, falling through a division by y, falling through a subtraction,
    // with another disjunct), or not (then nothing is skipped for it).
    let c1 = "s * 2 > 150";
    let cases: &[(&str, &str, bool)] = &[
        ("range(1, 60)", "min(300 // s, 8) * x < 20", true),
        ("range(1, 60)", "x - s * x < -30", true),
        ("range(1, 60)", "y * x // 3 >= 17 or x == 3", true),
        ("range(1, 60, 4)", "50 < y * x", true),
        ("range(59, 0, -1)", "min(300 // s, 8) * x < 20", true),
        ("range(1, 60)", "(x + y) % 7 == 0", false),
    ];
    for (dy, c2, then) in cases {
        let space = Space::builder("t")
            .iterator("x", "range(1, 40)")
            .iterator("y", *dy)
            .derived("s", "y * (x + 1)")
            .constraint("c1", Class::Hard, c1)
            .constraint("c2", Class::Soft, *c2)
            .constraint("c3", Class::Soft, "(x + y) % 5 == 0")
            .build()
            .unwrap();
        let mut reference = None;
        for tighten in [true, false] {
            let plan = space
                .plan(&PlanOptions::default().tighten(tighten))
                .unwrap();
            if tighten {
                assert_eq!(
                    plan.describe().contains("then by c2"),
                    *then,
                    "{c2}\n{}",
                    plan.describe()
                );
            }
            for threads in [1, 2] {
                let run = RunOptions::threads(threads);
                let (pts, stats) = plan.collect(&run).unwrap();
                let got: Vec<Vec<i64>> = pts.iter().map(|p| key(p)).collect();
                assert_eq!(stats.counts(), plan.count(&run).unwrap().counts(), "{c2}");
                match &reference {
                    None => reference = Some((got, stats.counts())),
                    Some((order, counts)) => {
                        assert_eq!(&got, order, "{c2} tighten={tighten} threads={threads}");
                        assert_eq!(
                            &stats.counts(),
                            counts,
                            "{c2} tighten={tighten} threads={threads}"
                        );
                    }
                }
            }
        }
        // Both clips reject something, so the test exercises the arithmetic.
        let (_, _, rejected) = reference.unwrap().1;
        assert!(rejected[0] > 0 && rejected[1] > 0, "{c2}: {rejected:?}");
    }
}

#[test]
fn tightening_paths_equal_full_scan() {
    // Solved products (with the outer loop enumerated by divisors), clipped ranges, zero and
    // negative values in ranges, negative right-hand sides, floats that force the fallback.
    let cases: &[(&str, &str, &str)] = &[
        ("range(1, 40)", "range(1, 40)", "x * y != 36"),
        ("range(-12, 13)", "range(-12, 13)", "x * y != -24"),
        ("range(-5, 6)", "range(-5, 6)", "x * y != 0"),
        (
            "range(20, 0, -1)",
            "range(1, x + 3)",
            "y * x != 12 or y > 3",
        ),
        ("range(1, 30)", "range(1, 30, 2)", "x + y != 17"),
        ("range(1, 30)", "range(1, 30)", "y - x != 4"),
        ("range(1, 50)", "range(1, 50)", "x * (y + 1) * 3 // 2 > 100"),
        (
            "range(1, 50)",
            "range(0, 50, 3)",
            "min(x * y, 60) >= 60 or x == y",
        ),
        ("[1, 2.0, 3, 4]", "range(1, 10)", "x * y != 6"),
        ("range(1, 10)", "[1, 2, 2, 3, 6]", "x * y != 6"),
    ];
    for (dx, dy, c) in cases {
        let space = Space::builder("t")
            .iterator("x", *dx)
            .iterator("y", *dy)
            .constraint("c", Class::Hard, *c)
            .constraint("d", Class::Soft, "(x + y) % 5 == 0")
            .build()
            .unwrap();
        let spec = Spec {
            n: 0,
            iterators: vec![dx.to_string(), dy.replace('x', "i0")],
            derived: vec![],
            constraints: vec![
                c.replace('x', "i0").replace('y', "i1"),
                "(i0 + i1) % 5 == 0".into(),
            ],
        };
        let want = sorted(
            brute_force(&spec, &[])
                .iter()
                .map(|p| p.iter().map(|v| v.as_f64().unwrap() as i64).collect())
                .collect(),
        );
        let mut counts = None;
        for tighten in [true, false] {
            let plan = space
                .plan(&PlanOptions::default().tighten(tighten))
                .unwrap();
            for threads in [1, 2] {
                let (pts, stats) = plan.collect(&RunOptions::threads(threads)).unwrap();
                let got = sorted(
                    pts.iter()
                        .map(|p| p.iter().map(|v| v.as_f64().unwrap() as i64).collect())
                        .collect(),
                );
                assert_eq!(got, want, "{c} tighten={tighten}\n{}", plan.describe());
                match &counts {
                    None => counts = Some(stats.counts()),
                    Some(k) => assert_eq!(
                        &stats.counts(),
                        k,
                        "{c} tighten={tighten} threads={threads}"
                    ),
                }
            }
        }
    }
}
