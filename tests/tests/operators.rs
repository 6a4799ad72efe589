//! Every operator against a direct Rust implementation, on random sizes including empty and
//! length-1 sequences (property tests), evaluated by the reference interpreter.

use proptest::prelude::*;
use surge::prelude::*;

fn cfg() -> ProptestConfig {
    ProptestConfig {
        cases: 48,
        ..ProptestConfig::default()
    }
}

fn vals(max: usize) -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(-1000i64..1000, 0..max)
}

fn fvals(max: usize) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(-100.0f64..100.0, 0..max)
}

proptest! {
    #![proptest_config(cfg())]

    #[test]
    fn map_one_and_two_inputs(a in vals(40), k in -5i64..5) {
        let b: Vec<i64> = a.iter().map(|x| x * 3 + 1).collect();
        let sa = Seq::input("a", a.clone()).unwrap();
        let sb = Seq::input("b", b.clone()).unwrap();
        let y = map(|x| x * k + 2, &sa).unwrap().interpret().unwrap();
        prop_assert_eq!(y, a.iter().map(|x| x * k + 2).collect::<Vec<_>>());
        let z = map(|(x, y)| (x - y).abs().max(7), (&sa, &sb)).unwrap().interpret().unwrap();
        prop_assert_eq!(z, a.iter().zip(&b).map(|(x, y)| (x - y).abs().max(7)).collect::<Vec<_>>());
    }

    #[test]
    fn map_three_and_four_inputs_with_select_and_cast(a in fvals(30)) {
        let b: Vec<f64> = a.iter().map(|x| x * 0.5).collect();
        let c: Vec<i32> = (0..a.len() as i32).collect();
        let d: Vec<f64> = a.iter().map(|x| 1.0 - x).collect();
        let (sa, sb, sc, sd) = (Seq::input("a", a.clone()).unwrap(), Seq::input("b", b.clone()).unwrap(),
            Seq::input("c", c.clone()).unwrap(), Seq::input("d", d.clone()).unwrap());
        let y = map(|(x, y, i, w)| x.gt(&y).select(x.fma(2.0, w.clone()), i.cast::<f64>() + w), (&sa, &sb, &sc, &sd))
            .unwrap().interpret().unwrap();
        let want: Vec<f64> = (0..a.len()).map(|i| if a[i] > b[i] { a[i].mul_add(2.0, d[i]) } else { c[i] as f64 + d[i] }).collect();
        prop_assert_eq!(y, want);
    }

    #[test]
    fn reduce_with_and_without_prefix(a in vals(60), p in -50i64..50) {
        let s = Seq::input("s", a.clone()).unwrap();
        let r = reduce(add, &s).map(|r| r.interpret());
        match a.iter().copied().reduce(|x, y| x + y) {
            Some(want) => prop_assert_eq!(r.unwrap().unwrap(), want),
            None => prop_assert!(r.unwrap_err().to_string().contains("empty sequence without a prefix")),
        }
        prop_assert_eq!(reduce_prefix(add, &s, p).unwrap().interpret().unwrap(), p + a.iter().sum::<i64>());
        if !a.is_empty() {
            prop_assert_eq!(reduce(min, &s).unwrap().interpret().unwrap(), *a.iter().min().unwrap());
            prop_assert_eq!(reduce(max, &s).unwrap().interpret().unwrap(), *a.iter().max().unwrap());
            let prod = reduce(mul, &map(|x| x % 3, &s).unwrap()).unwrap().interpret().unwrap();
            prop_assert_eq!(prod, a.iter().map(|x| x % 3).product::<i64>());
        }
    }

    #[test]
    fn scan_matches_dissertation_definition_with_non_commutative_op(a in vals(50), p in -9i64..9) {
        // f(y, x) = 2y - x is neither commutative nor associative: order matters.
        let f = |y: i64, x: i64| 2i64.wrapping_mul(y).wrapping_sub(x);
        let s = Seq::input("s", a.clone()).unwrap();
        let got = scan_prefix(|y, x| y * 2 - x, &s, p).unwrap().interpret().unwrap();
        let mut want = Vec::new();
        let mut y = p;
        for (i, x) in a.iter().enumerate() {
            want.push(y); // y[0] = p, y[i] = f(y[i-1], s[i-1])
            if i + 1 < a.len() { y = f(y, *x); }
        }
        prop_assert_eq!(got, want);
        let inclusive = scan(|y, x| y * 2 - x, &s).unwrap().interpret().unwrap();
        let mut want = Vec::new();
        for x in &a {
            let next = match want.last() { None => *x, Some(y) => f(*y, *x) };
            want.push(next);
        }
        prop_assert_eq!(inclusive, want);
    }

    #[test]
    fn reduce_by_key_segments(keys in prop::collection::vec(0u32..4, 0..40)) {
        let vals: Vec<f64> = (0..keys.len()).map(|i| i as f64).collect();
        let s = Seq::input("s", vals.clone()).unwrap();
        let k = Seq::input("k", keys.clone()).unwrap();
        let got = reduce_by_key(add, &s, &k, 0.5).unwrap().interpret().unwrap();
        let mut want: Vec<f64> = Vec::new();
        for (i, key) in keys.iter().enumerate() {
            if i == 0 || keys[i - 1] != *key { want.push(0.5); }
            *want.last_mut().unwrap() += vals[i];
        }
        prop_assert_eq!(got, want);
    }

    #[test]
    fn gather_and_scatter(src in vals(30), idx in prop::collection::vec(0u32..1000, 0..30)) {
        prop_assume!(!src.is_empty());
        let idx: Vec<u32> = idx.iter().map(|i| i % src.len() as u32).collect();
        let s = Seq::input("s", src.clone()).unwrap();
        let i = Seq::input("i", idx.clone()).unwrap();
        prop_assert_eq!(gather(&s, &i).unwrap().interpret().unwrap(), idx.iter().map(|k| src[*k as usize]).collect::<Vec<_>>());
        let vals: Vec<i64> = (0..idx.len() as i64).map(|v| v * 10).collect();
        let v = Seq::input("v", vals.clone()).unwrap();
        let mut want = src.clone();
        for (k, x) in idx.iter().zip(&vals) { want[*k as usize] = *x; }
        prop_assert_eq!(scatter(&v, &i, &s).unwrap().interpret().unwrap(), want);
    }

    #[test]
    fn range_with_any_stride(a in -30i64..30, b in -30i64..30, st in prop::sample::select(vec![-7i64, -2, -1, 1, 2, 5])) {
        let want: Vec<i64> = if st > 0 { (a..b).step_by(st as usize).collect() }
            else { let mut v = vec![]; let mut x = a; while x > b { v.push(x); x += st; } v };
        prop_assert_eq!(range_step(a, b, st).unwrap().interpret().unwrap(), want);
        prop_assert_eq!(range(a, b).unwrap().interpret().unwrap(), (a..b).collect::<Vec<_>>());
    }

    #[test]
    fn replicate_zip_join(n in 0u64..20, a in vals(6), b in vals(6)) {
        prop_assert_eq!(replicate::<i64>(7, n).unwrap().interpret().unwrap(), vec![7; n as usize]);
        let m = a.len().min(b.len());
        let (sa, sb) = (Seq::input("a", a[..m].to_vec()).unwrap(), Seq::input("b", b[..m].to_vec()).unwrap());
        let z = map(|(x, y)| x * 100 + y, &zip(&sa, &sb).unwrap()).unwrap().interpret().unwrap();
        prop_assert_eq!(z, (0..m).map(|i| a[i] * 100 + b[i]).collect::<Vec<_>>());
        let (ja, jb) = (Seq::input("a", a.clone()).unwrap(), Seq::input("b", b.clone()).unwrap());
        let j = map(|(x, y)| x * 10000 + y, &join(&ja, &jb).unwrap()).unwrap().interpret().unwrap();
        let want: Vec<i64> = a.iter().flat_map(|x| b.iter().map(move |y| x * 10000 + y)).collect();
        prop_assert_eq!(j, want);
    }

    #[test]
    fn split_striding_reverse_transpose(a in vals(40), t in 1u64..9) {
        let s = Seq::input("s", a.clone()).unwrap();
        prop_assert_eq!(split(&s, t).unwrap().interpret().unwrap(),
            a.chunks(t as usize).map(|c| c.to_vec()).collect::<Vec<_>>());
        prop_assert_eq!(striding(&s, t).unwrap().interpret().unwrap(), a.iter().step_by(t as usize).copied().collect::<Vec<_>>());
        prop_assert_eq!(reverse(&s).unwrap().interpret().unwrap(), a.iter().rev().copied().collect::<Vec<_>>());
        let rows = a.len() / t as usize;
        let uniform = Seq::input("u", a[..rows * t as usize].to_vec()).unwrap();
        let m = split(&uniform, t).unwrap();
        let want: Vec<Vec<i64>> = (0..t as usize).filter(|_| rows > 0).map(|j| (0..rows).map(|i| a[i * t as usize + j]).collect()).collect();
        prop_assert_eq!(transpose(&m).unwrap().interpret().unwrap(), want);
    }

    #[test]
    fn nest_csr_rows(lens in prop::collection::vec(0usize..6, 0..12)) {
        let n: usize = lens.iter().sum();
        let data: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
        let mut off = vec![0u64];
        for l in &lens { off.push(off.last().unwrap() + *l as u64); }
        let s = Seq::input("s", data.clone()).unwrap();
        let o = Seq::input("o", off.clone()).unwrap();
        let m = nest(&s, &o).unwrap();
        let want: Vec<Vec<f64>> = off.windows(2).map(|w| data[w[0] as usize..w[1] as usize].to_vec()).collect();
        prop_assert_eq!(m.interpret().unwrap(), want.clone());
        // Nested reductions over the rows: map.reduce with an empty-row-safe prefix.
        let sums = map(|row: Seq<f64>| reduce_prefix(add, &row, 0.0), &m).unwrap().interpret().unwrap();
        prop_assert_eq!(sums, want.iter().map(|r| r.iter().sum::<f64>()).collect::<Vec<_>>());
        let lengths = map(|row: Seq<f64>| len(&row), &m).unwrap().interpret().unwrap();
        prop_assert_eq!(lengths, lens.iter().map(|l| *l as u64).collect::<Vec<_>>());
    }
}

#[test]
fn float_math_functions() {
    let a = vec![0.25f64, 1.0, 4.0];
    let s = Seq::input("s", a.clone()).unwrap();
    let y = map(|x| x.sqrt() + x.exp().ln() - (-x.clone()).abs() / 2.0, &s)
        .unwrap()
        .interpret()
        .unwrap();
    let want: Vec<f64> = a
        .iter()
        .map(|x| x.sqrt() + x.exp().ln() - (-x).abs() / 2.0)
        .collect();
    assert_eq!(y, want);
    let r = map(|x| x % 0.75, &s).unwrap().interpret().unwrap();
    assert_eq!(r, a.iter().map(|x| x % 0.75).collect::<Vec<_>>());
}

#[test]
fn f32_and_unsigned_elements() {
    let s = Seq::input("s", vec![1.5f32, -2.0, 3.25]).unwrap();
    assert_eq!(reduce(add, &s).unwrap().interpret().unwrap(), 2.75f32);
    let u = Seq::input("u", vec![5u32, 9, 2]).unwrap();
    assert_eq!(
        map(|x| &x / 2 + &x % 2, &u).unwrap().interpret().unwrap(),
        vec![3u32, 5, 1]
    );
    let w = Seq::input("w", vec![u64::MAX, 1]).unwrap();
    assert_eq!(
        reduce(add, &w).unwrap().interpret().unwrap(),
        0u64,
        "integers wrap"
    );
}

#[test]
fn captured_sequences_become_inputs() {
    let x = Seq::input("x", vec![1.0f64, 2.0, 3.0]).unwrap();
    let idx = Seq::input("idx", vec![2u32, 1, 0]).unwrap();
    let y = map(|i: Scalar<u32>| at(&x, i).unwrap() * 10.0, &idx).unwrap();
    let c = Computation::new(&y).unwrap();
    let names: Vec<&str> = c.ir().inputs.iter().map(|i| i.name.as_str()).collect();
    assert!(names.contains(&"x") && names.contains(&"idx"), "{names:?}");
    assert_eq!(y.interpret().unwrap(), vec![30.0, 20.0, 10.0]);
}
