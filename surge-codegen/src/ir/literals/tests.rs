use super::*;
use crate::data::Buffer;
use crate::ir::testing::B;
use crate::ir::{BinaryOp, Type};

fn k(l: Literal) -> Box<ScalarExpr> {
    Box::new(ScalarExpr::Const(l))
}

#[test]
fn integer_literals_are_numbered_in_preorder_and_floats_and_bools_stay_in_the_source() {
    let mut b = B::default();
    let x = b.input("x", Buffer::U64(vec![1, 2]));
    let i = b.konst(Literal::U64(1));
    let at = b.op(Op::Index { seq: x, index: i });
    // select(true, (at + 3) * 4, 5) and a float constant: literals 1, then 3, 4, 5.
    let sum = ScalarExpr::Binary(
        BinaryOp::Add,
        Box::new(ScalarExpr::Value(at)),
        k(Literal::U64(3)),
    );
    let e = ScalarExpr::Select(
        k(Literal::Bool(true)),
        Box::new(ScalarExpr::Binary(
            BinaryOp::Mul,
            Box::new(sum),
            k(Literal::U64(4)),
        )),
        k(Literal::U64(5)),
    );
    let s = b.op(Op::Scalar { expr: e });
    b.konst(Literal::f64(0.5));
    let c = b.with_root(s);
    let got: Vec<(NodeId, Literal)> = literals(&c).iter().map(|l| (l.node, l.value)).collect();
    assert_eq!(
        got,
        vec![
            (i, Literal::U64(1)),
            (s, Literal::U64(3)),
            (s, Literal::U64(4)),
            (s, Literal::U64(5)),
        ]
    );
    assert_eq!(literal_values(&c), vec![1, 3, 4, 5]);
    let t = LiteralTable::of(&c);
    assert_eq!(t.len(), 4);
    let cur = t.cursor(s);
    assert_eq!(
        [3, 4, 5].map(|v| cur.take(Literal::U64(v))),
        [1, 2, 3],
        "node {s}'s literals follow node {i}'s"
    );
}

#[test]
fn literal_bits_round_trip_through_an_as_cast() {
    assert_eq!(literal_bits(Literal::I32(-1)), Some(u64::MAX));
    assert_eq!(literal_bits(Literal::I32(-5)).unwrap() as i32, -5);
    assert_eq!(
        literal_bits(Literal::I64(i64::MIN)).unwrap() as i64,
        i64::MIN
    );
    assert_eq!(literal_bits(Literal::U32(u32::MAX)), Some(u32::MAX as u64));
    assert_eq!(literal_bits(Literal::f64(1.0)), None);
    assert_eq!(literal_bits(Literal::Bool(true)), None);
}

#[test]
fn sizes_and_input_lengths_are_not_structure() {
    let (a, b) = (B::tiled_sum(10, 3), B::tiled_sum(17, 4));
    assert_ne!(a, b);
    assert_ne!(a.stable_hash(), b.stable_hash());
    assert_eq!(structure(&a), structure(&b));
    assert_eq!(a.structure_hash(), b.structure_hash());
    assert_eq!(structure_difference(&a, &b), None);
    assert_eq!(literal_values(&a), vec![3]);
    assert_eq!(literal_values(&b), vec![4]);
}

#[test]
fn another_structure_is_named() {
    let a = B::tiled_sum(10, 3);
    // The tile as a u32: a literal of another type is another structure.
    let mut b = a.clone();
    b.nodes[1].op = Op::Scalar {
        expr: ScalarExpr::Const(Literal::U32(3)),
    };
    b.nodes[1].ty = Type::Scalar(Elem::U32);
    assert_eq!(
        structure_difference(&a, &b).unwrap(),
        "its node %1 is scalar `3u32` of type u32, the compiled one's scalar `3u64` of type u64"
    );
    let mut c = a.clone();
    c.nodes[2].op = Op::Reverse { input: NodeId(0) };
    let e = structure_difference(&a, &c).unwrap();
    assert!(
        e.contains("node %2 is `reverse(%0)`") && e.contains("`split(%0, %1)`"),
        "{e}"
    );
    let mut d = a.clone();
    d.inputs[0].name = "y".into();
    assert_eq!(
        structure_difference(&a, &d).unwrap(),
        "its input 0 is `y` of f64, the compiled one's `x` of f64"
    );
    assert_ne!(a.structure_hash(), d.structure_hash());
}
