//! Sizes are run-time values: computations that differ only in their integer literals and input
//! lengths emit byte-identical CPU and CUDA sources (so the kernel caches hit), with every integer
//! literal read from the literal table.

use super::{cpu, cuda};
use crate::analysis::analyze;
use crate::data::Buffer;
use crate::ir::testing::B;
use crate::ir::{BinaryOp, Computation, Elem, Lambda, Literal, Op, ScalarExpr, Type};
use crate::target::Platform;
use crate::variant_set::VariantSet;

/// The CPU source of all CPU variants and the CUDA source of all CUDA variants of `c`.
fn sources(c: &Computation) -> (String, String) {
    let a = analyze(c).unwrap();
    let cpu_set = VariantSet::new(&a, &Platform::from_names("cpu", Some("haswell32")).unwrap());
    let cpu_set = cpu_set.unwrap();
    let cpu = cpu::emit(c, &a, cpu_set.variants(), &cpu::EmitOptions::default()).unwrap();
    let cuda_set = VariantSet::new(&a, &Platform::from_names("cuda", Some("h200")).unwrap());
    let cuda = cuda::emit(c, &a, cuda_set.unwrap().phases()).unwrap();
    (cpu.source, cuda.source)
}

/// `map(|a, i| a * (f64)(i * k + j), x, range(0, n))` over `n` elements.
fn scaled_range(n: u64, k: u64, j: u64) -> Computation {
    let mut b = B::default();
    let x = b.input("x", Buffer::F64(vec![1.0; n as usize]));
    let (zero, end) = (b.konst(Literal::U64(0)), b.konst(Literal::U64(n)));
    let range = b.op(Op::Range {
        start: zero,
        end,
        stride: None,
    });
    let (pa, pi) = (
        b.param(Type::Scalar(Elem::F64)),
        b.param(Type::Scalar(Elem::U64)),
    );
    let bin = |op, a: ScalarExpr, b: ScalarExpr| ScalarExpr::Binary(op, Box::new(a), Box::new(b));
    let index = bin(
        BinaryOp::Add,
        bin(
            BinaryOp::Mul,
            ScalarExpr::Value(pi),
            ScalarExpr::Const(Literal::U64(k)),
        ),
        ScalarExpr::Const(Literal::U64(j)),
    );
    let body = b.op(Op::Scalar {
        expr: bin(
            BinaryOp::Mul,
            ScalarExpr::Value(pa),
            ScalarExpr::Cast(Elem::F64, Box::new(index)),
        ),
    });
    let m = b.op(Op::Map {
        f: Lambda {
            params: vec![pa, pi],
            body,
        },
        inputs: vec![x, range],
    });
    b.with_root(m)
}

#[test]
fn split_tiles_and_input_lengths_do_not_change_the_sources() {
    let (cpu3, cuda3) = sources(&B::tiled_sum(10, 3));
    let (cpu4, cuda4) = sources(&B::tiled_sum(17, 4));
    assert_eq!(cpu3, cpu4, "the CPU sources of split(x, 3) and split(x, 4)");
    assert_eq!(
        cuda3, cuda4,
        "the CUDA sources of split(x, 3) and split(x, 4)"
    );
    assert!(cpu3.contains("let lits: &[u64; 1] = unsafe { literal_table(bufs, 3) };"));
    assert!(cpu3.contains("let lit0: u64 = lits[0] as u64;"));
    assert!(cpu3.contains("chk_positive(((lit0) as i128), \"tile size\""));
    assert!(cuda3.contains("const u64 n_in0, const u64 lit0"));
}

#[test]
fn range_bounds_and_element_arithmetic_do_not_change_the_sources() {
    let (cpu_a, cuda_a) = sources(&scaled_range(5, 2, 1));
    let (cpu_b, cuda_b) = sources(&scaled_range(9, 3, 7));
    assert_eq!(
        cpu_a, cpu_b,
        "the CPU sources of range(0, 5) and range(0, 9)"
    );
    assert_eq!(
        cuda_a, cuda_b,
        "the CUDA sources of range(0, 5) and range(0, 9)"
    );
    // Literals 0 and 1 are the range's bounds, 2 and 3 the body's `k` and `j`.
    assert!(cpu_a.contains("(lit2)).wrapping_add(lit3)"), "{cpu_a}");
    assert!(
        cuda_a.contains("const u64 lit0, const u64 lit1"),
        "{cuda_a}"
    );
    assert!(cuda_a.contains("* lit2) + lit3)"), "{cuda_a}");
}

#[test]
fn another_float_constant_is_another_source() {
    // Floats stay in the source (they are not sizes): the compilers fold them.
    let mut c = scaled_range(5, 2, 1);
    let (cpu_a, _) = sources(&c);
    let body = c.nodes.len() - 2;
    c.nodes[body].op = Op::Scalar {
        expr: ScalarExpr::Const(Literal::f64(0.5)),
    };
    c.nodes[body].ty = Type::Scalar(Elem::F64);
    let (cpu_b, _) = sources(&c);
    assert_ne!(cpu_a, cpu_b);
    assert!(cpu_b.contains("0.5f64"));
}
