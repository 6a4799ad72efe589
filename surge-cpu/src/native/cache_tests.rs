//! A damaged library in the kernel cache is detected, deleted and rebuilt. Each test compiles a
//! small program into its own cache directory, copies that cache into a second directory (which
//! this process has not loaded from), damages the copy, and loads from the copy.

use crate::native::NativeKernels;
use crate::native::compile::{Loaded, load_in};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use surge_codegen::analysis::analyze;
use surge_codegen::cache::{checksum, sum_path, verify};
use surge_codegen::data::{Buffer, Output};
use surge_codegen::emit::cpu::{CpuProgram, EmitOptions, emit};
use surge_codegen::ir::{
    BinaryOp, Computation, Elem, InputDecl, Lambda, Literal, Node, NodeId, Op, ScalarExpr, Type,
};
use surge_codegen::target::{CpuMachine, Platform};
use surge_codegen::variant::Variant;
use surge_codegen::variant_set::VariantSet;

const X: [f64; 5] = [1.0, -2.0, 0.5, 4.0, 8.0];

/// `map(|a| a * 2.5, x)`, its default variant and its program.
fn program() -> (Computation, Variant, CpuProgram) {
    let node = |op, ty| Node::new(op, ty);
    let f64s = Type::scalar_seq(Elem::F64);
    let body = ScalarExpr::Binary(
        BinaryOp::Mul,
        Box::new(ScalarExpr::Value(NodeId(1))),
        Box::new(ScalarExpr::Const(Literal::f64(2.5))),
    );
    let c = Computation {
        inputs: vec![InputDecl {
            name: "x".into(),
            elem: Elem::F64,
            len: X.len() as u64,
        }],
        nodes: vec![
            node(Op::Input { buffer: 0 }, f64s.clone()),
            node(Op::Param, Type::Scalar(Elem::F64)),
            node(Op::Scalar { expr: body }, Type::Scalar(Elem::F64)),
            node(
                Op::Map {
                    f: Lambda {
                        params: vec![NodeId(1)],
                        body: NodeId(2),
                    },
                    inputs: vec![NodeId(0)],
                },
                f64s,
            ),
        ],
        root: NodeId(3),
    };
    let a = analyze(&c).unwrap();
    let set = VariantSet::new(&a, &Platform::Cpu(CpuMachine::detect())).unwrap();
    let v = set.default_variant().clone();
    let p = emit(&c, &a, std::slice::from_ref(&v), &EmitOptions::default()).unwrap();
    (c, v, p)
}

/// Fresh, empty directories for one test, deleted with it.
struct Dirs(Vec<PathBuf>);

impl Dirs {
    fn fresh(&mut self, name: &str) -> PathBuf {
        let d = std::env::temp_dir()
            .join(format!("surge-cache-tests-{}", std::process::id()))
            .join(name);
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        self.0.push(d.clone());
        d
    }
}

impl Drop for Dirs {
    fn drop(&mut self) {
        for d in &self.0 {
            let _ = std::fs::remove_dir_all(d);
            // The per-process parent goes with the last test's directories.
            let _ = d.parent().map(std::fs::remove_dir);
        }
    }
}

/// Runs the program's kernels from `lib` and checks the result.
fn check_runs(lib: Arc<Loaded>) {
    let (c, v, p) = program();
    let k = NativeKernels::assemble(&c, std::slice::from_ref(&v), p, lib).unwrap();
    let Output::Seq(Buffer::F64(y)) = k.run(&v, &[Buffer::F64(X.to_vec())]).unwrap() else {
        panic!("a flat f64 result")
    };
    assert_eq!(y, X.map(|a| a * 2.5));
}

/// A cache in directory `name` holding the program's library, compiled into a sibling directory
/// and copied (so this process has not loaded it from here): the directories (deleted when
/// dropped), the cache directory and the library.
fn seeded_cache(name: &str) -> (Dirs, PathBuf, PathBuf) {
    let (_, _, p) = program();
    let mut dirs = Dirs(vec![]);
    let first = dirs.fresh(&format!("{name}-first"));
    let lib = load_in(&p, &first).unwrap();
    assert!(verify(&lib.library_path).is_ok());
    let dir = dirs.fresh(name);
    for e in std::fs::read_dir(&first).unwrap() {
        let e = e.unwrap().path();
        std::fs::copy(&e, dir.join(e.file_name().unwrap())).unwrap();
    }
    let so = dir.join(lib.library_path.file_name().unwrap());
    (dirs, dir, so)
}

/// Loads the program from `dir`, checks that it was rebuilt for a reason mentioning `why`, that
/// the rebuilt library has a valid checksum, and that its kernels run correctly.
fn assert_rebuilt(dir: &Path, so: &Path, why: &str) {
    let (_, _, p) = program();
    let lib = load_in(&p, dir).unwrap();
    assert!(lib.compiled, "the damaged library was rebuilt");
    let reason = lib.rebuilt.clone().expect("a reason for the rebuild");
    assert!(reason.contains(why), "{reason}");
    assert_eq!(lib.library_path, so);
    verify(so).unwrap();
    check_runs(lib);
}

#[test]
fn an_intact_cached_library_is_loaded_without_compiling() {
    let (_dirs, dir, _) = seeded_cache("intact");
    let (_, _, p) = program();
    let lib = load_in(&p, &dir).unwrap();
    assert!(!lib.compiled && lib.rebuilt.is_none());
    check_runs(lib);
}

#[test]
fn a_truncated_cached_library_is_rebuilt() {
    let (_dirs, dir, so) = seeded_cache("truncated");
    let bytes = std::fs::read(&so).unwrap();
    std::fs::write(&so, &bytes[..bytes.len() / 2]).unwrap();
    assert_rebuilt(&dir, &so, "checksum");
}

#[test]
fn a_foreign_file_under_the_cached_name_is_rebuilt() {
    let (_dirs, dir, so) = seeded_cache("garbage");
    std::fs::write(&so, b"not a library at all").unwrap();
    assert_rebuilt(&dir, &so, "checksum");
}

#[test]
fn a_cached_library_without_its_checksum_is_rebuilt() {
    let (_dirs, dir, so) = seeded_cache("no-sum");
    std::fs::remove_file(sum_path(&so)).unwrap();
    assert_rebuilt(&dir, &so, "cannot be read");
}

#[test]
fn a_cached_file_that_matches_its_checksum_but_does_not_load_is_rebuilt() {
    let (_dirs, dir, so) = seeded_cache("unloadable");
    let garbage = b"\x7fELF and nothing else".repeat(100);
    std::fs::write(&so, &garbage).unwrap();
    std::fs::write(sum_path(&so), checksum(&garbage)).unwrap();
    assert_rebuilt(&dir, &so, "does not load");
}

#[test]
fn checksums_see_truncation_and_single_bit_changes() {
    let a: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let mut b = a.clone();
    b[5003] ^= 4;
    assert_ne!(checksum(&a), checksum(&b));
    assert_ne!(checksum(&a), checksum(&a[..9_999]));
    assert_ne!(checksum(&a[..9_999]), checksum(&a[..9_998]));
    assert_eq!(checksum(&a), checksum(&a.clone()));
}
