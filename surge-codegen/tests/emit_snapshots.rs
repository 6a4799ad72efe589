//! Structural golden files of the emitters: the CUDA and Rust source emitted for a few
//! representative computations (a flat `map` over `gather`/`range`/`reverse` zipped by a
//! three-input map, SpMV as `map.reduce` over `nest` + `gather`, and a `map.scan` over `nest`),
//! compared byte for byte with `tests/snapshots/*.cu` and `*.rs`.
//!
//! The shared prelude (`templates/cuda/prelude.cu`) and runtime (`templates/cpu/runtime.rs`) are
//! replaced by a one-line marker so the files hold only what the emitters generate.
//!
//! After an intended change of the emitted code, regenerate with
//! `SURGE_BLESS=1 cargo test -p surge-codegen --test emit_snapshots` and review the diff.

use std::path::PathBuf;
use surge_codegen::analysis::analyze;
use surge_codegen::emit::{cpu, cuda};
use surge_codegen::ir::{
    BinaryOp, Computation, Elem, InputDecl, Lambda, Literal, Node, NodeId, Op, ScalarExpr, Type,
};
use surge_codegen::target::Platform;
use surge_codegen::variant::Variant;
use surge_codegen::variant_set::VariantSet;

const CUDA_PRELUDE: &str = include_str!("../templates/cuda/prelude.cu");
const CPU_RUNTIME: &str = include_str!("../templates/cpu/runtime.rs");
const CPU_SELL_SIMD: &str = include_str!("../templates/cpu/sell_simd.rs");
const CPU_LANES_SIMD: &str = include_str!("../templates/cpu/lanes_simd.rs");

/// A computation under construction: nodes are appended in topological order.
struct B {
    c: Computation,
}

impl B {
    fn new(inputs: &[(&str, Elem, u64)]) -> B {
        let mut b = B {
            c: Computation {
                inputs: inputs
                    .iter()
                    .map(|&(name, elem, len)| InputDecl {
                        name: name.into(),
                        elem,
                        len,
                    })
                    .collect(),
                nodes: Vec::new(),
                root: NodeId(0),
            },
        };
        for (k, &(_, elem, _)) in inputs.iter().enumerate() {
            b.push(Op::Input { buffer: k }, Type::scalar_seq(elem));
        }
        b
    }
    fn push(&mut self, op: Op, ty: Type) -> NodeId {
        self.c.nodes.push(Node::new(op, ty));
        NodeId(self.c.nodes.len() as u64 - 1)
    }
    fn param(&mut self, ty: Type) -> NodeId {
        self.push(Op::Param, ty)
    }
    fn scalar(&mut self, expr: ScalarExpr, e: Elem) -> NodeId {
        self.push(Op::Scalar { expr }, Type::Scalar(e))
    }
    /// `|a, b| a ⊕ b` over `e`.
    fn binary(&mut self, op: BinaryOp, e: Elem) -> Lambda {
        let (a, b) = (self.param(Type::Scalar(e)), self.param(Type::Scalar(e)));
        let body = self.scalar(bin(op, v(a), v(b)), e);
        Lambda {
            params: vec![a, b],
            body,
        }
    }
    fn finish(mut self, root: NodeId) -> Computation {
        self.c.root = root;
        self.c
    }
}

fn v(n: NodeId) -> ScalarExpr {
    ScalarExpr::Value(n)
}

fn bin(op: BinaryOp, a: ScalarExpr, b: ScalarExpr) -> ScalarExpr {
    ScalarExpr::Binary(op, Box::new(a), Box::new(b))
}

/// `map(|a, b, r| fma(a, b, (f64) r), gather(x, idx), reverse(y), range(0, len(y)))`.
fn flat_map() -> Computation {
    let mut b = B::new(&[
        ("x", Elem::F64, 8),
        ("idx", Elem::U32, 6),
        ("y", Elem::F64, 6),
    ]);
    let (x, idx, y) = (NodeId(0), NodeId(1), NodeId(2));
    let g = b.push(
        Op::Gather {
            source: x,
            indices: idx,
        },
        Type::scalar_seq(Elem::F64),
    );
    let r = b.push(Op::Reverse { input: y }, Type::scalar_seq(Elem::F64));
    let zero = b.scalar(ScalarExpr::Const(Literal::U64(0)), Elem::U64);
    let len = b.push(Op::Length { seq: y }, Type::Scalar(Elem::U64));
    let range = b.push(
        Op::Range {
            start: zero,
            end: len,
            stride: None,
        },
        Type::scalar_seq(Elem::U64),
    );
    let (pa, pb, pr) = (
        b.param(Type::Scalar(Elem::F64)),
        b.param(Type::Scalar(Elem::F64)),
        b.param(Type::Scalar(Elem::U64)),
    );
    let body = b.scalar(
        ScalarExpr::Fma(
            Box::new(v(pa)),
            Box::new(v(pb)),
            Box::new(ScalarExpr::Cast(Elem::F64, Box::new(v(pr)))),
        ),
        Elem::F64,
    );
    let m = b.push(
        Op::Map {
            f: Lambda {
                params: vec![pa, pb, pr],
                body,
            },
            inputs: vec![g, r, range],
        },
        Type::scalar_seq(Elem::F64),
    );
    b.finish(m)
}

/// SpMV: `map(|vals, cols| reduce(+, 0.0, map(*, vals, gather(x, cols))), nest(val, off),
/// nest(col, off))`.
fn spmv() -> Computation {
    let mut b = B::new(&[
        ("val", Elem::F64, 7),
        ("col", Elem::U32, 7),
        ("off", Elem::U32, 5),
        ("x", Elem::F64, 4),
    ]);
    let (val, col, off, x) = (NodeId(0), NodeId(1), NodeId(2), NodeId(3));
    let rows_v = b.push(
        Op::Nest {
            input: val,
            offsets: off,
        },
        Type::seq(Type::scalar_seq(Elem::F64)),
    );
    let rows_c = b.push(
        Op::Nest {
            input: col,
            offsets: off,
        },
        Type::seq(Type::scalar_seq(Elem::U32)),
    );
    let vals = b.param(Type::scalar_seq(Elem::F64));
    let cols = b.param(Type::scalar_seq(Elem::U32));
    let xs = b.push(
        Op::Gather {
            source: x,
            indices: cols,
        },
        Type::scalar_seq(Elem::F64),
    );
    let mul = b.binary(BinaryOp::Mul, Elem::F64);
    let prods = b.push(
        Op::Map {
            f: mul,
            inputs: vec![vals, xs],
        },
        Type::scalar_seq(Elem::F64),
    );
    let add = b.binary(BinaryOp::Add, Elem::F64);
    let zero = b.scalar(ScalarExpr::Const(Literal::F64(0f64.to_bits())), Elem::F64);
    let sum = b.push(
        Op::Reduce {
            op: add,
            input: prods,
            prefix: Some(zero),
        },
        Type::Scalar(Elem::F64),
    );
    let m = b.push(
        Op::Map {
            f: Lambda {
                params: vec![vals, cols],
                body: sum,
            },
            inputs: vec![rows_v, rows_c],
        },
        Type::scalar_seq(Elem::F64),
    );
    b.finish(m)
}

/// Row-wise exclusive prefix sums: `map(|row| scan(+, 0, row), nest(x, off))`.
fn row_scan() -> Computation {
    let mut b = B::new(&[("x", Elem::I64, 6), ("off", Elem::U64, 3)]);
    let rows = b.push(
        Op::Nest {
            input: NodeId(0),
            offsets: NodeId(1),
        },
        Type::seq(Type::scalar_seq(Elem::I64)),
    );
    let row = b.param(Type::scalar_seq(Elem::I64));
    let add = b.binary(BinaryOp::Add, Elem::I64);
    let zero = b.scalar(ScalarExpr::Const(Literal::I64(0)), Elem::I64);
    let scan = b.push(
        Op::Scan {
            op: add,
            input: row,
            prefix: Some(zero),
        },
        Type::scalar_seq(Elem::I64),
    );
    let m = b.push(
        Op::Map {
            f: Lambda {
                params: vec![row],
                body: scan,
            },
            inputs: vec![rows],
        },
        Type::seq(Type::scalar_seq(Elem::I64)),
    );
    b.finish(m)
}

/// Every variant the passes produce for `c` on `platform`, per phase.
fn all_variants(c: &Computation, platform: &Platform) -> Vec<Vec<Variant>> {
    let a = analyze(c).unwrap();
    VariantSet::new(&a, platform).unwrap().phases().to_vec()
}

/// The variants named by `ids` (per phase), each checked to be one the passes produce.
fn pick(c: &Computation, platform: &Platform, ids: &[&[&str]]) -> Vec<Vec<Variant>> {
    let all = all_variants(c, platform);
    if std::env::var_os("SURGE_LIST_VARIANTS").is_some() {
        for (p, vs) in all.iter().enumerate() {
            for v in vs {
                println!("phase {p}: {v}");
            }
        }
    }
    assert_eq!(ids.len(), all.len(), "one id list per phase");
    ids.iter()
        .zip(&all)
        .map(|(ids, vs)| {
            ids.iter()
                .map(|id| {
                    vs.iter()
                        .find(|v| v.id() == *id)
                        .unwrap_or_else(|| panic!("{id} is not a variant of the computation"))
                        .clone()
                })
                .collect()
        })
        .collect()
}

fn snapshot_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("snapshots")
        .join(name)
}

/// `source` with `shared` (which it must contain exactly once) replaced by a marker line.
fn without(source: &str, shared: &str, marker: &str) -> String {
    assert_eq!(
        source.matches(shared).count(),
        1,
        "the source holds {marker} once"
    );
    source.replacen(shared, &format!("{marker}\n"), 1)
}

/// Compares `text` with the golden file `name` (or writes it under `SURGE_BLESS=1`).
fn check(name: &str, text: &str) {
    let path = snapshot_path(name);
    if std::env::var_os("SURGE_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with SURGE_BLESS=1 to create it",
            path.display()
        )
    });
    if want != text {
        let line = want
            .lines()
            .zip(text.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| want.lines().count().min(text.lines().count()));
        panic!(
            "{} differs from the emitted source (first at line {}):\n  golden:  {:?}\n  emitted: {:?}\n\
             run with SURGE_BLESS=1 to accept the new output",
            path.display(),
            line + 1,
            want.lines().nth(line),
            text.lines().nth(line)
        );
    }
}

fn check_cuda(name: &str, c: &Computation, ids: &[&[&str]]) {
    let platform = Platform::from_names("cuda", Some("h200")).unwrap();
    let variants = pick(c, &platform, ids);
    let a = analyze(c).unwrap();
    let prog = cuda::emit(c, &a, &variants).unwrap();
    assert_eq!(
        prog.kernels.len(),
        variants.iter().map(Vec::len).sum::<usize>()
    );
    check(
        &format!("{name}.cu"),
        &without(&prog.source, CUDA_PRELUDE, "// <templates/cuda/prelude.cu>"),
    );
}

fn check_cpu(name: &str, c: &Computation, ids: &[&str]) {
    let platform = Platform::from_names("cpu", Some("haswell32")).unwrap();
    let all = pick(c, &platform, &[ids]);
    let a = analyze(c).unwrap();
    let prog = cpu::emit(c, &a, &all[0], &cpu::EmitOptions::default()).unwrap();
    check(
        &format!("{name}.rs"),
        &without(
            &without(
                &without(&prog.source, CPU_RUNTIME, "// <templates/cpu/runtime.rs>"),
                CPU_SELL_SIMD,
                "// <templates/cpu/sell_simd.rs>",
            ),
            CPU_LANES_SIMD,
            "// <templates/cpu/lanes_simd.rs>",
        ),
    );
}

#[test]
fn cuda_flat_map() {
    check_cuda(
        "flat_map",
        &flat_map(),
        &[&[
            "cuda:h200/independent/bx=128,by=1,lw=1,grain1=4,res1=thread",
            "cuda:h200/sequential/bx=64,by=1,lw=1,unroll1=1",
        ]],
    );
}

#[test]
fn cuda_spmv() {
    check_cuda(
        "spmv",
        &spmv(),
        &[&[
            "cuda:h200/independent.cooperative/bx=128,by=1,lw=8,grain1=1,res1=warp,res2=warp,reduce2=raking",
            "cuda:h200/independent.sequential/bx=128,by=1,lw=1,grain1=4,res1=thread,unroll2=1",
            "cuda:h200/sequential.cooperative/bx=128,by=2,lw=1,unroll1=0,res2=block,reduce2=warp_reductions",
        ]],
    );
}

#[test]
fn cuda_row_scan() {
    check_cuda(
        "row_scan",
        &row_scan(),
        &[&[
            "cuda:h200/independent.cooperative/bx=128,by=1,lw=2,grain1=1,res1=warp,res2=warp,scan2=raking,scan_grain2=4",
            "cuda:h200/independent.cooperative/bx=128,by=2,lw=1,grain1=1,res1=block,res2=block,scan2=warp_scans,scan_grain2=1",
        ]],
    );
}

#[test]
fn cpu_flat_map() {
    check_cpu(
        "flat_map",
        &flat_map(),
        &["cpu:haswell32/independent/threads=1,nesting=0,sched1=static,chunk1=64"],
    );
}

#[test]
fn cpu_spmv() {
    // Two modules (unroll2 off and on); the phase also exports `diag` (the diagonal layout).
    check_cpu(
        "spmv",
        &spmv(),
        &[
            "cpu:haswell32/independent.sequential/threads=1,nesting=0,sched1=static,chunk1=64,unroll2=0,layout1=rows",
            "cpu:haswell32/independent.sequential/threads=1,nesting=0,sched1=static,chunk1=64,unroll2=1,layout1=rows",
        ],
    );
}

#[test]
fn cpu_row_scan() {
    check_cpu(
        "row_scan",
        &row_scan(),
        &[
            "cpu:haswell32/independent.cooperative/threads=1,nesting=1,sched1=static,chunk1=64,sched2=static,chunk2=64",
        ],
    );
}
