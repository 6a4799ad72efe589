//! Every validation error is returned (never a panic) with a message naming the operator and values.

use surge::codegen::ir::{
    Computation as Ir, Elem, InputDecl, Lambda, Node, NodeId, Op, ScalarExpr, Type,
};
use surge::prelude::*;

fn msg<T: std::fmt::Debug>(r: Result<T>) -> String {
    r.unwrap_err().to_string()
}

/// `file:line:column` in this file, as errors name the DSEL call made there.
fn here(line: u32, column: u32) -> String {
    format!("{}:{line}:{column}", file!())
}

#[test]
fn mismatched_lengths_name_the_operator_and_lengths() {
    let a = Seq::input("a", vec![1.0f64, 2.0, 3.0]).unwrap();
    let b = Seq::input("b", vec![1.0f64, 2.0]).unwrap();
    let (e, l) = (msg(map(|(x, y)| x + y, (&a, &b))), line!());
    assert_eq!(
        e,
        format!(
            "`map` at {}: input lengths differ: input 0 has length 3, input 1 has length 2",
            here(l, 23)
        )
    );
    assert!(msg(zip(&a, &b)).starts_with("`zip` at "));
    let i = Seq::input("i", vec![0u32]).unwrap();
    let (e, l) = (msg(scatter(&a, &i, &b)), line!());
    assert_eq!(
        e,
        format!(
            "`scatter` at {}: the source has length 3 but the indices have length 1",
            here(l, 23)
        )
    );
    let k = Seq::input("k", vec![0u32, 1]).unwrap();
    let (e, l) = (msg(reduce_by_key(add, &a, &k, 0.0)), line!());
    assert_eq!(
        e,
        format!(
            "`reduce_by_key` at {}: the input has length 3 but the keys have length 2",
            here(l, 23)
        )
    );
}

#[test]
fn nest_offsets_are_checked() {
    let s = Seq::input("s", vec![1.0f64; 5]).unwrap();
    let not_monotone = Seq::input("off", vec![0u32, 3, 2, 5]).unwrap();
    let (e, l) = (msg(nest(&s, &not_monotone)), line!());
    assert_eq!(
        e,
        format!(
            "`nest` at {}: offsets are not monotone: offsets[1] = 3 > offsets[2] = 2 (offsets \
             `off`)",
            here(l, 23)
        )
    );
    let out_of_range = Seq::input("off", vec![0u32, 6]).unwrap();
    assert!(
        msg(nest(&s, &out_of_range))
            .contains("offsets[1] = 6 is out of range for a sequence of length 5")
    );
    let negative = Seq::input("off", vec![-1i64, 5]).unwrap();
    assert!(msg(nest(&s, &negative)).contains("offsets[0] = -1 is out of range"));
    let empty = Seq::input("off", Vec::<u32>::new()).unwrap();
    assert!(msg(nest(&s, &empty)).contains("offsets are empty"));
    // Computed offsets are checked when the computation runs.
    let computed = reverse(&Seq::input("off", vec![0u32, 3, 1]).unwrap()).unwrap();
    let e = msg(nest(&s, &computed).unwrap().interpret());
    assert!(
        e.contains("`nest`") && e.contains("offsets are not monotone"),
        "{e}"
    );
}

#[test]
fn index_out_of_range_at_run_time_is_an_error() {
    let s = Seq::input("s", vec![1.0f64, 2.0]).unwrap();
    let idx = Seq::input("idx", vec![0u32, 2]).unwrap();
    let (e, l) = (msg(gather(&s, &idx).unwrap().interpret()), line!());
    assert_eq!(
        e,
        format!(
            "`gather` at {} (node %2) failed: index 2 at position 1 is out of range for a \
             source of length 2",
            here(l, 23)
        )
    );
    let neg = Seq::input("neg", vec![-1i32, 0]).unwrap();
    assert!(
        msg(scatter(&s, &neg, &s).unwrap().interpret())
            .contains("index -1 at position 0 is out of range for a destination of length 2")
    );
}

#[test]
fn bad_sizes_and_strides() {
    let s = Seq::input("s", vec![1i64, 2, 3]).unwrap();
    let (e, l) = (msg(split(&s, 0u64)), line!());
    assert_eq!(
        e,
        format!(
            "`split` at {}: tile size must be positive, got 0",
            here(l, 23)
        )
    );
    assert!(msg(striding(&s, 0u64)).ends_with(": stride must be positive, got 0"));
    let (e, l) = (msg(range_step(0i32, 9, 0)), line!());
    assert_eq!(e, format!("`range` at {}: stride is 0", here(l, 23)));
    assert!(
        msg(reduce(add, &Seq::input("e", Vec::<f64>::new()).unwrap()))
            .contains("reduction of an empty sequence without a prefix")
    );
    let ragged = nest(&s, &Seq::input("o", vec![0u32, 1, 3]).unwrap()).unwrap();
    assert!(
        msg(transpose(&ragged).unwrap().interpret())
            .contains("rows differ in length (row 0 has 1, row 1 has 2)")
    );
    assert!(msg(at(&s, 3u32)).contains("index 3 out of range for a sequence of length 3"));
}

#[test]
fn bad_input_data() {
    // NaN and infinities are values, not errors (tests/non_finite.rs).
    assert!(Seq::input("x", vec![1.0f64, f64::NAN, f64::INFINITY]).is_ok());
    let a = Seq::input("same", vec![1.0f64]).unwrap();
    let b = Seq::input("same", vec![2.0f64]).unwrap();
    let y = map(|(x, y)| x + y, (&a, &b)).unwrap();
    assert_eq!(
        msg(Computation::new(&y)),
        "input `same`: two different inputs of one computation have this name"
    );
}

#[test]
fn integer_division_by_zero_is_a_runtime_error() {
    let s = Seq::input("s", vec![4i64, 0]).unwrap();
    let y = map(|x| 8i64 / x, &s).unwrap();
    assert!(msg(y.interpret()).contains("integer division by zero"));
}

/// Raw IR with a float index sequence: the DSEL's types rule it out, the validator must too.
fn raw(op: Op, ty: Type) -> Ir {
    Ir {
        inputs: vec![
            InputDecl {
                name: "s".into(),
                elem: Elem::F64,
                len: 3,
            },
            InputDecl {
                name: "idx".into(),
                elem: Elem::F64,
                len: 3,
            },
        ],
        nodes: vec![
            Node {
                op: Op::Input { buffer: 0 },
                ty: Type::scalar_seq(Elem::F64),
                loc: None,
            },
            Node {
                op: Op::Input { buffer: 1 },
                ty: Type::scalar_seq(Elem::F64),
                loc: None,
            },
            Node::new(op, ty),
        ],
        root: NodeId(2),
    }
}

#[test]
fn non_integer_gather_and_scatter_indices_are_rejected() {
    let t = Type::scalar_seq(Elem::F64);
    let g = raw(
        Op::Gather {
            source: NodeId(0),
            indices: NodeId(1),
        },
        t.clone(),
    );
    assert_eq!(
        g.validate().unwrap_err().to_string(),
        "`gather` (node %2): indices must have an integer element type, got f64"
    );
    let s = raw(
        Op::Scatter {
            source: NodeId(0),
            indices: NodeId(1),
            dest: NodeId(0),
        },
        t.clone(),
    );
    assert!(
        s.validate()
            .unwrap_err()
            .to_string()
            .starts_with("`scatter` (node %2): indices must have an integer element type")
    );
    let n = raw(
        Op::Nest {
            input: NodeId(0),
            offsets: NodeId(1),
        },
        Type::seq(t),
    );
    assert!(
        n.validate()
            .unwrap_err()
            .to_string()
            .contains("offsets must have an integer element type")
    );
}

#[test]
fn validator_catches_malformed_ir() {
    let t = Type::scalar_seq(Elem::F64);
    // Wrong declared type.
    let bad_ty = raw(
        Op::Reverse { input: NodeId(0) },
        Type::scalar_seq(Elem::F32),
    );
    assert!(
        bad_ty
            .validate()
            .unwrap_err()
            .to_string()
            .contains("declared type seq<f32> but its operands give seq<f64>")
    );
    // Forward reference.
    let mut fwd = raw(Op::Reverse { input: NodeId(0) }, t.clone());
    fwd.nodes[0] = Node {
        op: Op::Reverse { input: NodeId(2) },
        ty: t.clone(),
        loc: None,
    };
    assert!(
        fwd.validate()
            .unwrap_err()
            .to_string()
            .contains("does not come before it")
    );
    // A lambda of the wrong arity.
    let mut arity = raw(Op::Reverse { input: NodeId(0) }, t.clone());
    arity.nodes[2] = Node {
        op: Op::Param,
        ty: Type::Scalar(Elem::F64),
        loc: None,
    };
    arity.nodes.push(Node {
        op: Op::Map {
            f: Lambda {
                params: vec![NodeId(2), NodeId(2)],
                body: NodeId(2),
            },
            inputs: vec![NodeId(0)],
        },
        ty: t.clone(),
        loc: None,
    });
    arity.root = NodeId(3);
    assert!(
        arity
            .validate()
            .unwrap_err()
            .to_string()
            .contains("the function takes 1 parameter(s), got 2")
    );
    // A parameter used outside its lambda.
    let mut scope = raw(Op::Param, Type::Scalar(Elem::F64));
    scope.nodes.push(Node {
        op: Op::Scalar {
            expr: ScalarExpr::Value(NodeId(2)),
        },
        ty: Type::Scalar(Elem::F64),
        loc: None,
    });
    scope.root = NodeId(3);
    assert_eq!(
        scope.validate().unwrap_err().to_string(),
        "`scalar` (node %3): uses parameter %2 of a lambda that is not part of the computation \
         outside that lambda: a closure's argument, and anything computed from it, can only be \
         used inside that closure"
    );
    // ... and one no node uses.
    scope.root = NodeId(0);
    assert_eq!(
        scope.validate().unwrap_err().to_string(),
        "`param` (node %2): not bound by any lambda"
    );
    // An unknown buffer.
    let mut buf = raw(Op::Reverse { input: NodeId(0) }, t);
    buf.nodes[1].op = Op::Input { buffer: 7 };
    assert!(
        buf.validate()
            .unwrap_err()
            .to_string()
            .contains("buffer 7 does not exist")
    );
}

#[test]
fn bound_buffers_must_match_declarations() {
    let ir = raw(
        Op::Reverse { input: NodeId(0) },
        Type::scalar_seq(Elem::F64),
    );
    use surge::codegen::data::Buffer;
    let e = Computation::from_ir(ir.clone(), vec![Buffer::F64(vec![1.0; 3])])
        .unwrap_err()
        .to_string();
    assert!(e.contains("1 buffers bound to 2 declared inputs"), "{e}");
    let e = Computation::from_ir(
        ir,
        vec![Buffer::F64(vec![1.0; 3]), Buffer::F32(vec![1.0; 3])],
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("input `idx`: declared 3 elements of f64, bound 3 elements of f32"),
        "{e}"
    );
}

/// A closure that keeps its argument (or a value computed from it) and lets it out of its
/// lambda: an error naming the line that uses it and the lambda's line. (It used to be a panic,
/// "internal: lowering produced invalid IR", with an IR dump.)
#[test]
fn a_parameter_used_outside_its_lambda_names_both_places() {
    let s = Seq::input("s", vec![1.0f64, 2.0]).unwrap();
    let mut kept = None;
    let lambda = line!() + 1;
    let doubled = map(
        |x: Scalar<f64>| {
            kept = Some(x.clone());
            x * 2.0
        },
        &s,
    )
    .unwrap();
    let kept = kept.unwrap();
    let (y, used) = (map(|v| v + &kept, &doubled).unwrap(), line!());
    let f = file!();
    assert_eq!(
        msg(Computation::new(&y)),
        format!(
            "`scalar` at {f}:{used}:30 (node %5): uses parameter %1 of the lambda of `map` at \
             {f}:{lambda}:19 (node %3) outside that lambda: a closure's argument, and anything \
             computed from it, can only be used inside that closure"
        )
    );
    // Into a lambda whose own `map` is not part of the result: the parameter's lambda is named
    // by where it was traced.
    let other = Seq::input("o", vec![5.0f64]).unwrap();
    let (z, used) = (map(|v| v * &kept, &other).unwrap(), line!());
    assert_eq!(
        msg(z.interpret()),
        format!(
            "`scalar` at {f}:{used}:30 (node %3): uses parameter %2 of the lambda at \
             {f}:{lambda}:19 outside that lambda: a closure's argument, and anything computed \
             from it, can only be used inside that closure"
        )
    );
    // Returned out of the closure and made the result.
    let (root, here) = (Computation::new(&kept), line!());
    assert_eq!(
        msg(root),
        format!(
            "`computation` at {f}:{here}:25: the result is parameter %0 of the lambda at \
             {f}:{lambda}:19, outside that lambda"
        )
    );
    // Captured by a nested closure inside its own lambda is fine.
    let rows = split(&s, 1u64).unwrap();
    let nested = map(
        |row: Seq<f64>| {
            let first = at(&row, 0u32)?;
            map(|x| x + &first, &row)
        },
        &rows,
    )
    .unwrap();
    assert_eq!(nested.interpret().unwrap(), vec![vec![2.0], vec![4.0]]);
}

/// A data-parallel value that depends on no closure argument is evaluated whether or not the
/// result reads it (README, "Semantics worth knowing"): its error is the program's, in the
/// interpreter and in every native variant alike, even in an untaken `select` branch or in the
/// body of a `map` over no elements.
#[test]
fn closed_data_parallel_values_fail_even_when_unread() {
    let x = Seq::input("x", vec![0.0f64; 3]).unwrap();
    let idx = Seq::input("idx", vec![7u32]).unwrap();
    let bad = reduce(add, &gather(&x, &idx).unwrap()).unwrap();
    // `select` never takes `bad`...
    let never = lit(1.0f64).lt(lit(0.0f64)).select(&bad, lit(2.0f64));
    let y = map(|v: Scalar<f64>| v + &never, &x).unwrap();
    // ... and a map over nothing never runs its body.
    let empty = Seq::input("empty", Vec::<f64>::new()).unwrap();
    let z = map(|v: Scalar<f64>| v + &bad, &empty).unwrap();
    for (what, c) in [
        ("select", Computation::new(&y)),
        ("empty map", Computation::new(&z)),
    ] {
        let c = c.unwrap();
        let want = c.interpret().unwrap_err().to_string();
        assert!(
            want.contains("`gather`") && want.contains("index 7"),
            "{what}: {want}"
        );
        let k = surge::Kernels::build(&c, &surge::Target::cpu()).unwrap();
        for v in k.variants() {
            let got = k.run(&c, v).unwrap_err().to_string();
            assert_eq!(got, want, "{what}: {}", v.id());
        }
    }
}
