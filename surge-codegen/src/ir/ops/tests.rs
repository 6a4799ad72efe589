//! Each family's typing rule and reference semantics on small hand-built computations, with the
//! exact messages users see.

use crate::data::{Buffer, ScalarValue};
use crate::ir::testing::B;
use crate::ir::{BinaryOp, Elem, Literal, Op, Value};

fn f64s(v: &[f64]) -> Buffer {
    Buffer::F64(v.to_vec())
}
fn u32s(v: &[u32]) -> Buffer {
    Buffer::U32(v.to_vec())
}
fn seq(v: &[f64]) -> Value {
    Value::Seq(
        v.iter()
            .map(|x| Value::Scalar(ScalarValue::F64(*x)))
            .collect(),
    )
}

#[test]
fn gather_reads_by_index_and_names_the_bad_position() {
    let mut b = B::default();
    let x = b.input("x", f64s(&[1.0, 2.0, 3.0]));
    let i = b.input("i", u32s(&[2, 0, 7]));
    let g = b.op(Op::Gather {
        source: x,
        indices: i,
    });
    let e = b.run(g).unwrap_err();
    assert_eq!(
        e.to_string(),
        "`gather` (node %2) failed: index 7 at position 2 is out of range for a source of length 3"
    );
    let mut b = B::default();
    let x = b.input("x", f64s(&[1.0, 2.0, 3.0]));
    let i = b.input("i", u32s(&[2, 0]));
    let g = b.op(Op::Gather {
        source: x,
        indices: i,
    });
    assert_eq!(b.run(g).unwrap(), seq(&[3.0, 1.0]));
}

#[test]
fn gather_indices_must_be_integers() {
    let mut b = B::default();
    let x = b.input("x", f64s(&[1.0]));
    let msg = b.typing_error(Op::Gather {
        source: x,
        indices: x,
    });
    assert_eq!(
        msg,
        "`gather`: indices must have an integer element type, got f64"
    );
}

#[test]
fn scatter_applies_writes_in_order() {
    let mut b = B::default();
    let s = b.input("s", f64s(&[1.0, 2.0, 3.0]));
    let i = b.input("i", u32s(&[1, 1, 0]));
    let d = b.input("d", f64s(&[0.0, 0.0, 9.0]));
    let r = b.op(Op::Scatter {
        source: s,
        indices: i,
        dest: d,
    });
    assert_eq!(b.run(r).unwrap(), seq(&[3.0, 2.0, 9.0]));
}

#[test]
fn reduce_folds_left_and_refuses_an_empty_input_without_prefix() {
    let mut b = B::default();
    let x = b.input("x", f64s(&[1.0, 2.0, 4.0]));
    let add = b.binop(BinaryOp::Sub, Elem::F64);
    let r = b.op(Op::Reduce {
        op: add,
        input: x,
        prefix: None,
    });
    assert_eq!(b.run(r).unwrap(), Value::Scalar(ScalarValue::F64(-5.0)));

    let mut b = B::default();
    let x = b.input("x", f64s(&[]));
    let add = b.binop(BinaryOp::Add, Elem::F64);
    let msg = b.typing_error(Op::Reduce {
        op: add,
        input: x,
        prefix: None,
    });
    assert_eq!(
        msg,
        "`reduce`: reduction of an empty sequence without a prefix"
    );
}

#[test]
fn scan_is_exclusive_with_a_prefix_and_inclusive_without() {
    for (prefix, want) in [(true, [10.0, 11.0, 13.0]), (false, [1.0, 3.0, 6.0])] {
        let mut b = B::default();
        let x = b.input("x", f64s(&[1.0, 2.0, 3.0]));
        let p = prefix.then(|| b.konst(Literal::f64(10.0)));
        let add = b.binop(BinaryOp::Add, Elem::F64);
        let r = b.op(Op::Scan {
            op: add,
            input: x,
            prefix: p,
        });
        assert_eq!(b.run(r).unwrap(), seq(&want), "prefix {prefix}");
    }
}

#[test]
fn reduce_by_key_folds_each_run_of_equal_keys() {
    let mut b = B::default();
    let x = b.input("x", f64s(&[1.0, 2.0, 3.0, 4.0, 5.0]));
    let k = b.input("k", u32s(&[0, 0, 3, 0, 0]));
    let p = b.konst(Literal::f64(0.0));
    let add = b.binop(BinaryOp::Add, Elem::F64);
    let r = b.op(Op::ReduceByKey {
        op: add,
        input: x,
        keys: k,
        prefix: p,
    });
    assert_eq!(b.run(r).unwrap(), seq(&[3.0, 3.0, 9.0]));
}

#[test]
fn range_counts_down_with_a_negative_stride_and_refuses_stride_zero() {
    let mut b = B::default();
    let (s, e, st) = (
        b.konst(Literal::I64(5)),
        b.konst(Literal::I64(0)),
        b.konst(Literal::I64(-2)),
    );
    let r = b.op(Op::Range {
        start: s,
        end: e,
        stride: Some(st),
    });
    let want: Vec<Value> = [5i64, 3, 1]
        .iter()
        .map(|v| Value::Scalar(ScalarValue::I64(*v)))
        .collect();
    assert_eq!(b.run(r).unwrap(), Value::Seq(want));
    let mut b = B::default();
    let (s, e, z) = (
        b.konst(Literal::I64(0)),
        b.konst(Literal::I64(3)),
        b.konst(Literal::I64(0)),
    );
    assert_eq!(
        b.typing_error(Op::Range {
            start: s,
            end: e,
            stride: Some(z)
        }),
        "`range`: stride is 0"
    );
}

#[test]
fn split_striding_reverse_and_transpose_move_elements() {
    let mut b = B::default();
    let x = b.input("x", f64s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
    let two = b.konst(Literal::U64(2));
    let rev = b.op(Op::Reverse { input: x });
    let st = b.op(Op::Striding {
        input: rev,
        stride: two,
    });
    let b2 = B {
        c: b.c.clone(),
        bufs: b.bufs.clone(),
    };
    assert_eq!(b2.run(st).unwrap(), seq(&[6.0, 4.0, 2.0]));
    let sp = b.op(Op::Split {
        input: x,
        tile: two,
    });
    let t = b.op(Op::Transpose { input: sp });
    assert_eq!(
        b.run(t).unwrap(),
        Value::Seq(vec![seq(&[1.0, 3.0, 5.0]), seq(&[2.0, 4.0, 6.0])])
    );
}

#[test]
fn transpose_of_ragged_rows_names_the_row() {
    let mut b = B::default();
    let x = b.input("x", f64s(&[1.0, 2.0, 3.0]));
    let two = b.konst(Literal::U64(2));
    let sp = b.op(Op::Split {
        input: x,
        tile: two,
    });
    let t = b.op(Op::Transpose { input: sp });
    assert_eq!(
        b.run(t).unwrap_err().to_string(),
        "`transpose` (node %3) failed: rows differ in length (row 0 has 2, row 1 has 1); only uniform nesting transposes"
    );
}

#[test]
fn nest_checks_its_offsets_and_join_varies_the_last_input_fastest() {
    let mut b = B::default();
    let x = b.input("x", f64s(&[1.0, 2.0, 3.0]));
    let off = b.input("off", u32s(&[0, 2, 1]));
    let n = b.op(Op::Nest {
        input: x,
        offsets: off,
    });
    assert_eq!(
        b.run(n).unwrap_err().to_string(),
        "`nest` (node %2) failed: offsets are not monotone: offsets[1] = 2 > offsets[2] = 1"
    );
    let mut b = B::default();
    let x = b.input("x", f64s(&[1.0, 2.0]));
    let y = b.input("y", u32s(&[7, 8]));
    let j = b.op(Op::Join { inputs: vec![x, y] });
    let pair = |a: f64, c: u32| {
        Value::Tuple(vec![
            Value::Scalar(ScalarValue::F64(a)),
            Value::Scalar(ScalarValue::U32(c)),
        ])
    };
    assert_eq!(
        b.run(j).unwrap(),
        Value::Seq(vec![pair(1.0, 7), pair(1.0, 8), pair(2.0, 7), pair(2.0, 8)])
    );
}

#[test]
fn map_inputs_must_agree_in_length() {
    let mut b = B::default();
    let x = b.input("x", f64s(&[1.0, 2.0]));
    let y = b.input("y", f64s(&[1.0]));
    let add = b.binop(BinaryOp::Add, Elem::F64);
    let msg = b.typing_error(Op::Map {
        f: add,
        inputs: vec![x, y],
    });
    assert_eq!(
        msg,
        "`map`: input lengths differ: input 0 has length 2, input 1 has length 1"
    );
}

#[test]
fn index_and_length_read_one_value() {
    let mut b = B::default();
    let x = b.input("x", f64s(&[1.0, 2.0]));
    let one = b.konst(Literal::U64(1));
    let len = b.op(Op::Length { seq: x });
    let i = b.op(Op::Index { seq: x, index: one });
    let t = b.op(Op::Tuple {
        items: vec![len, i],
    });
    assert_eq!(
        b.run(t).unwrap(),
        Value::Tuple(vec![
            Value::Scalar(ScalarValue::U64(2)),
            Value::Scalar(ScalarValue::F64(2.0))
        ])
    );
    let mut b = B::default();
    let x = b.input("x", f64s(&[1.0, 2.0]));
    let five = b.konst(Literal::U64(5));
    assert_eq!(
        b.typing_error(Op::Index {
            seq: x,
            index: five
        }),
        "`index`: index 5 out of range for a sequence of length 2"
    );
}
