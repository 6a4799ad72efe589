//! Integer literals of every type are kernel parameters of their own type, and the emitted
//! kernels that take them compile with NVRTC (no GPU needed).

use crate::{DEFAULT_ARCH, compile_source, nvrtc_available};
use surge_codegen::analysis::analyze;
use surge_codegen::emit::cuda::{ArgSlot, emit};
use surge_codegen::ir::{
    BinaryOp, Computation, Elem, InputDecl, Lambda, Literal, Node, NodeId, Op, ScalarExpr, Type,
};
use surge_codegen::target::Platform;
use surge_codegen::variant_set::VariantSet;

/// `map(|a| a * 3i64 + (i64)(-5i32) + (i64)(7u32), striding(x, 2u64))`.
fn strided_affine() -> Computation {
    let node = |op, ty| Node::new(op, ty);
    let k = |l| Box::new(ScalarExpr::Const(l));
    let bin = |op, a, b| Box::new(ScalarExpr::Binary(op, a, b));
    let mul = bin(
        BinaryOp::Mul,
        Box::new(ScalarExpr::Value(NodeId(3))),
        k(Literal::I64(3)),
    );
    let plus = bin(
        BinaryOp::Add,
        mul,
        Box::new(ScalarExpr::Cast(Elem::I64, k(Literal::I32(-5)))),
    );
    let body = bin(
        BinaryOp::Add,
        plus,
        Box::new(ScalarExpr::Cast(Elem::I64, k(Literal::U32(7)))),
    );
    let i64s = Type::scalar_seq(Elem::I64);
    Computation {
        inputs: vec![InputDecl {
            name: "x".into(),
            elem: Elem::I64,
            len: 6,
        }],
        nodes: vec![
            node(Op::Input { buffer: 0 }, i64s.clone()),
            node(
                Op::Scalar {
                    expr: ScalarExpr::Const(Literal::U64(2)),
                },
                Type::Scalar(Elem::U64),
            ),
            node(
                Op::Striding {
                    input: NodeId(0),
                    stride: NodeId(1),
                },
                i64s.clone(),
            ),
            node(Op::Param, Type::Scalar(Elem::I64)),
            node(Op::Scalar { expr: *body }, Type::Scalar(Elem::I64)),
            node(
                Op::Map {
                    f: Lambda {
                        params: vec![NodeId(3)],
                        body: NodeId(4),
                    },
                    inputs: vec![NodeId(2)],
                },
                i64s,
            ),
        ],
        root: NodeId(5),
    }
}

#[test]
fn literal_parameters_of_every_integer_type_compile_with_nvrtc() {
    nvrtc_available()
        .unwrap_or_else(|e| panic!("NVRTC is required (.ci/run installs libnvrtc): {e}"));
    let c = strided_affine();
    let a = analyze(&c).unwrap();
    let set = VariantSet::new(&a, &Platform::from_names("cuda", Some("h200")).unwrap()).unwrap();
    let p = emit(&c, &a, set.phases()).unwrap();
    let lit = |index, elem| ArgSlot::Literal { index, elem };
    assert_eq!(
        p.phases[0].args[1..],
        [
            lit(0, Elem::U64),
            lit(1, Elem::I64),
            lit(2, Elem::I32),
            lit(3, Elem::U32)
        ]
    );
    assert!(p.source.contains(
        "const u64 n_in0, const u64 lit0, const i64 lit1, const i32 lit2, const u32 lit3"
    ));
    let ptx = compile_source(&p.source, DEFAULT_ARCH).unwrap().to_src();
    for k in &p.kernels {
        assert!(
            ptx.contains(&format!(".entry {}(", k.name)),
            "{}",
            k.variant
        );
    }
}
