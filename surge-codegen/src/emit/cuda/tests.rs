//! Unit tests of the CUDA emitter (the byte-exact output is covered by
//! `surge-codegen/tests/emit_snapshots.rs`).

use super::*;
use crate::analysis::analyze;
use crate::ir::{
    BinaryOp, Computation, Elem, InputDecl, Lambda, Literal, Node, NodeId, Op, ScalarExpr, Type,
};
use crate::target::Platform;

fn node(op: Op, ty: Type) -> Node {
    Node::new(op, ty)
}

/// `map(|row| reduce(+, row), split(s, 4))` built by hand.
fn tiled_sum() -> Computation {
    use Type::*;
    let f = || Scalar(Elem::F64);
    Computation {
        inputs: vec![InputDecl {
            name: "s".into(),
            elem: Elem::F64,
            len: 10,
        }],
        nodes: vec![
            node(Op::Input { buffer: 0 }, Type::scalar_seq(Elem::F64)),
            node(
                Op::Scalar {
                    expr: ScalarExpr::Const(Literal::U64(4)),
                },
                Scalar(Elem::U64),
            ),
            node(
                Op::Split {
                    input: NodeId(0),
                    tile: NodeId(1),
                },
                Type::seq(Type::scalar_seq(Elem::F64)),
            ),
            node(Op::Param, Type::scalar_seq(Elem::F64)),
            node(Op::Param, f()),
            node(Op::Param, f()),
            node(
                Op::Scalar {
                    expr: ScalarExpr::Binary(
                        BinaryOp::Add,
                        Box::new(ScalarExpr::Value(NodeId(4))),
                        Box::new(ScalarExpr::Value(NodeId(5))),
                    ),
                },
                f(),
            ),
            node(
                Op::Reduce {
                    op: Lambda {
                        params: vec![NodeId(4), NodeId(5)],
                        body: NodeId(6),
                    },
                    input: NodeId(3),
                    prefix: None,
                },
                f(),
            ),
            node(
                Op::Map {
                    f: Lambda {
                        params: vec![NodeId(3)],
                        body: NodeId(7),
                    },
                    inputs: vec![NodeId(2)],
                },
                Type::scalar_seq(Elem::F64),
            ),
        ],
        root: NodeId(8),
    }
}

#[test]
fn emits_every_variant_with_its_id() {
    let c = tiled_sum();
    let a = analyze(&c).unwrap();
    let platform = Platform::from_names("cuda", Some("h200")).unwrap();
    let vs: Vec<Vec<Variant>> = crate::variant_set::VariantSet::new(&a, &platform)
        .unwrap()
        .phases()
        .to_vec();
    let prog = emit(&c, &a, &vs).unwrap();
    assert_eq!(prog.kernels.len(), vs[0].len());
    for k in &prog.kernels {
        assert!(
            prog.source
                .contains(&format!("// variant: {}\n", k.variant))
        );
        assert!(prog.source.contains(&k.name));
    }
    let mut names: Vec<_> = prog.kernels.iter().map(|k| &k.name).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), prog.kernels.len());
    // The tile size is literal 0 of the table, a kernel parameter.
    assert_eq!(
        prog.phases[0].args,
        [
            ArgSlot::Input {
                buffer: 0,
                elem: Elem::F64
            },
            ArgSlot::Literal {
                index: 0,
                elem: Elem::U64
            }
        ]
    );
    assert!(prog.source.contains("const u64 n_in0, const u64 lit0"));
    assert!(prog.source.contains("in0[(b0 + (j))]"));
}

#[test]
fn kernels_carry_the_run_time_checks() {
    let c = tiled_sum();
    let a = analyze(&c).unwrap();
    let v: Variant =
        "cuda:h200/independent.cooperative/bx=128,by=1,lw=8,grain1=1,res1=warp,res2=warp"
            .parse()
            .unwrap();
    let prog = emit(&c, &a, &[vec![v]]).unwrap();
    let k = &prog.source[prog.source.find("// variant: ").unwrap()..];
    assert!(k.contains("u64 *__restrict__ surge_err)"), "{k}");
    // The reduce (node 7) has no prefix: an empty row is an error, not the identity.
    assert!(
        k.contains("if (len == 0 && lane == 0) surge_fail(surge_err, 7, SURGE_EMPTY_REDUCE"),
        "{k}"
    );
    // The split's tile size (node 2, the run-time literal 0) is checked.
    assert!(
        k.contains("surge_positive((i64)(lit0), 0, 2, surge_err)"),
        "{k}"
    );
    assert!(
        prog.source
            .contains("SURGE_PTR(u64) shape, u64 *surge_err)")
    );
}

#[test]
fn error_records_decode_to_the_interpreters_messages() {
    assert_eq!(decode_error(&[0; ERROR_WORDS]), None);
    let rec = |node: u64, code: u64, a: i64, b: i64, c: i64| {
        [(node << 8) | code, a as u64, b as u64, c as u64]
    };
    let cases = [
        (
            rec(12, check::GATHER, 7, 1, 3),
            "index 7 at position 1 is out of range for a source of length 3",
        ),
        (
            rec(3, check::GATHER, -2, 0, 3),
            "index -2 at position 0 is out of range for a source of length 3",
        ),
        (
            rec(4, check::INDEX, 9, 0, 5),
            "index 9 is out of range for a sequence of length 5",
        ),
        (
            rec(5, check::OFFSET_RANGE, 11, 2, 10),
            "offsets[2] = 11 is out of range for a sequence of length 10",
        ),
        (
            rec(5, check::OFFSET_ORDER, 6, 3, 4),
            "offsets are not monotone: offsets[3] = 6 > offsets[4] = 4",
        ),
        (
            rec(5, check::OFFSETS_EMPTY, 0, 0, 0),
            "offsets are empty; a nested sequence of n rows needs n + 1 offsets",
        ),
        (
            rec(9, check::EMPTY_REDUCE, 0, 0, 0),
            "reduction of an empty sequence without a prefix",
        ),
        (
            rec(2, check::NOT_POSITIVE, 0, 0, 0),
            "tile size must be positive, got 0",
        ),
        (
            rec(2, check::NOT_POSITIVE, -3, 1, 0),
            "stride must be positive, got -3",
        ),
        (rec(2, check::STRIDE_ZERO, 0, 0, 0), "stride is 0"),
        (
            rec(2, check::NEGATIVE_LEN, -1, 0, 0),
            "length -1 is negative",
        ),
        (
            rec(6, check::EQUAL_LEN, 4, 1, 3),
            "input lengths differ: input 0 has length 4, input 1 has length 3",
        ),
        (
            rec(3, check::RAGGED, 2, 1, 1),
            "rows differ in length (row 0 has 2, row 1 has 1); only uniform nesting transposes",
        ),
    ];
    for (r, want) in cases {
        let (node, msg) = decode_error(&r).unwrap();
        assert_eq!(node, NodeId(r[0] >> 8));
        assert_eq!(msg, want);
    }
    // The prelude's codes are the ones decoded.
    for (name, code) in [
        ("SURGE_GATHER", check::GATHER),
        ("SURGE_INDEX", check::INDEX),
        ("SURGE_OFFSET_RANGE", check::OFFSET_RANGE),
        ("SURGE_OFFSET_ORDER", check::OFFSET_ORDER),
        ("SURGE_OFFSETS_EMPTY", check::OFFSETS_EMPTY),
        ("SURGE_EMPTY_REDUCE", check::EMPTY_REDUCE),
        ("SURGE_NOT_POSITIVE", check::NOT_POSITIVE),
        ("SURGE_STRIDE_ZERO", check::STRIDE_ZERO),
        ("SURGE_NEGATIVE_LEN", check::NEGATIVE_LEN),
        ("SURGE_EQUAL_LEN", check::EQUAL_LEN),
        ("SURGE_RAGGED", check::RAGGED),
    ] {
        let def = format!("#define {name} {code}ULL");
        assert!(PRELUDE.contains(&def), "{def}");
    }
}

/// A reduction whose operator has no identity this emitter knows is folded in order by lane 0
/// of each element's resource, on every variant (`fold.rs`).
#[test]
fn an_operator_without_identity_is_folded_by_lane_zero() {
    let mut c = tiled_sum();
    // Make the reduction a subtraction (no identity; the order is the result).
    c.nodes[6].op = Op::Scalar {
        expr: ScalarExpr::Binary(
            BinaryOp::Sub,
            Box::new(ScalarExpr::Value(NodeId(4))),
            Box::new(ScalarExpr::Value(NodeId(5))),
        ),
    };
    let a = analyze(&c).unwrap();
    let platform = Platform::from_names("cuda", Some("h200")).unwrap();
    let vs = crate::variant_set::VariantSet::new(&a, &platform).unwrap();
    let prog = emit(&c, &a, vs.phases()).unwrap();
    let folds = prog
        .source
        .matches("if (lane == 0) {\n        const u64 surge_fold_len")
        .count();
    assert_eq!(folds, vs.phases()[0].len(), "every variant folds");
}

#[test]
fn bad_variants_are_named() {
    let c = tiled_sum();
    let a = analyze(&c).unwrap();
    let v: Variant = "cuda:h200/independent.cooperative/bx=128,by=1,lw=8,grain1=1,res1=warp,res2=block,reduce2=raking"
        .parse()
        .unwrap();
    let e = emit(&c, &a, &[vec![v.clone()]]).unwrap_err().to_string();
    assert!(e.contains(&v.id()) && e.contains("res2"), "{e}");
    let v: Variant = "cuda:h200/independent/bx=128,by=1,lw=1,grain1=1,res1=thread"
        .parse()
        .unwrap();
    let e = emit(&c, &a, &[vec![v]]).unwrap_err().to_string();
    assert!(e.contains("levels"), "{e}");
}
