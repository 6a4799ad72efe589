//! The analysis on small hand-built computations: expression sequences, fusion groups, phases
//! and the exact messages of what it refuses.

use super::{analyze, fusion_summary};
use crate::data::Buffer;
use crate::ir::testing::B;
use crate::ir::{BinaryOp, Elem, Lambda, Literal, NodeId, Op, OpKind, ScalarExpr, Type};

fn f64s(n: usize) -> Buffer {
    Buffer::F64(vec![1.0; n])
}

/// `|x| x * 2.0` as a lambda over f64.
fn double(b: &mut B) -> Lambda {
    let p = b.param(Type::Scalar(Elem::F64));
    let two = ScalarExpr::Const(Literal::f64(2.0));
    let body = b.op(Op::Scalar {
        expr: ScalarExpr::Binary(BinaryOp::Mul, Box::new(ScalarExpr::Value(p)), Box::new(two)),
    });
    Lambda {
        params: vec![p],
        body,
    }
}

/// SpMV: `map(|(row, idx)| reduce(add, map(*, row, gather(x, idx))), nest(v, off), nest(c, off))`.
fn spmv(b: &mut B) -> NodeId {
    let v = b.input("v", f64s(4));
    let c = b.input("c", Buffer::U32(vec![0, 1, 1, 0]));
    let off = b.input("off", Buffer::U32(vec![0, 2, 4]));
    let x = b.input("x", f64s(2));
    let rows = b.op(Op::Nest {
        input: v,
        offsets: off,
    });
    let idx = b.op(Op::Nest {
        input: c,
        offsets: off,
    });
    let (row, irow) = (
        b.param(Type::scalar_seq(Elem::F64)),
        b.param(Type::scalar_seq(Elem::U32)),
    );
    let g = b.op(Op::Gather {
        source: x,
        indices: irow,
    });
    let mul = b.binop(BinaryOp::Mul, Elem::F64);
    let prods = b.op(Op::Map {
        f: mul,
        inputs: vec![row, g],
    });
    let add = b.binop(BinaryOp::Add, Elem::F64);
    let sum = b.op(Op::Reduce {
        op: add,
        input: prods,
        prefix: None,
    });
    let f = Lambda {
        params: vec![row, irow],
        body: sum,
    };
    b.op(Op::Map {
        f,
        inputs: vec![rows, idx],
    })
}

#[test]
fn spmv_is_one_map_reduce_phase_with_the_gather_fused() {
    let mut b = B::default();
    let root = spmv(&mut b);
    let a = analyze(&b.with_root(root)).unwrap();
    assert_eq!(a.expression_sequence(), "map.reduce");
    let p = a.final_phase();
    assert!(p.depends_on.is_empty());
    let fused: Vec<&str> = p.levels[1].fused.iter().map(|f| f.op.name()).collect();
    assert_eq!(fused, ["map", "gather"]);
    assert_eq!(
        p.levels[0]
            .fused
            .iter()
            .map(|f| f.op.name())
            .collect::<Vec<_>>(),
        ["nest", "nest"]
    );
    assert_eq!(fusion_summary(p).len(), 2);
}

#[test]
fn a_scan_argument_of_a_map_is_its_own_phase() {
    let mut b = B::default();
    let s = b.input("s", f64s(5));
    let add = b.binop(BinaryOp::Add, Elem::F64);
    let scanned = b.op(Op::Scan {
        op: add,
        input: s,
        prefix: None,
    });
    let f = double(&mut b);
    let root = b.op(Op::Map {
        f,
        inputs: vec![scanned],
    });
    let a = analyze(&b.with_root(root)).unwrap();
    assert_eq!(a.expression_sequence(), "scan, map");
    assert_eq!(a.final_phase().depends_on, vec![scanned]);
}

#[test]
fn two_nested_operators_in_one_function_run_sequentially_per_element() {
    let mut b = B::default();
    let s = b.input("s", f64s(6));
    let three = b.konst(Literal::U64(3));
    let tiles = b.op(Op::Split {
        input: s,
        tile: three,
    });
    let t = b.param(Type::scalar_seq(Elem::F64));
    let add = b.binop(BinaryOp::Add, Elem::F64);
    let sum = b.op(Op::Reduce {
        op: add,
        input: t,
        prefix: None,
    });
    let mx = b.binop(BinaryOp::Max, Elem::F64);
    let top = b.op(Op::Reduce {
        op: mx,
        input: t,
        prefix: None,
    });
    let pair = b.op(Op::Tuple {
        items: vec![sum, top],
    });
    let root = b.op(Op::Map {
        f: Lambda {
            params: vec![t],
            body: pair,
        },
        inputs: vec![tiles],
    });
    let a = analyze(&b.with_root(root)).expect("analyzed");
    assert_eq!(a.expression_sequence(), "map");
    let level = &a.final_phase().levels[0];
    let seq: Vec<_> = level.sequential.iter().map(|f| (f.op, f.node)).collect();
    assert_eq!(seq, vec![(OpKind::Reduce, sum), (OpKind::Reduce, top)]);
}

#[test]
fn scalar_code_at_the_root_ends_the_last_reductions_phase() {
    let mut b = B::default();
    let s = b.input("s", f64s(6));
    let add = b.binop(BinaryOp::Add, Elem::F64);
    let sum = b.op(Op::Reduce {
        op: add,
        input: s,
        prefix: None,
    });
    let mx = b.binop(BinaryOp::Max, Elem::F64);
    let top = b.op(Op::Reduce {
        op: mx,
        input: s,
        prefix: None,
    });
    let ratio = b.op(Op::Scalar {
        expr: ScalarExpr::Binary(
            BinaryOp::Div,
            Box::new(ScalarExpr::Value(sum)),
            Box::new(ScalarExpr::Value(top)),
        ),
    });
    let a = analyze(&b.with_root(ratio)).expect("analyzed");
    assert_eq!(a.expression_sequence(), "reduce, reduce");
    assert_eq!(a.phases[0].root, sum);
    let last = a.final_phase();
    assert_eq!((last.root, last.levels[0].node), (ratio, top));
    assert_eq!(last.depends_on, vec![sum]);
}
