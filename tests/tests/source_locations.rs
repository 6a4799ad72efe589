//! Source locations: every DSEL call records its caller's `file:line:column` in the IR, and every
//! analysis, emission and run-time error names it beside the operator (then the node id). A
//! location is provenance, not structure: equality, hashes and the emitted code ignore it, so a
//! kernel cache survives edits elsewhere in the program.

use surge::codegen::emit::{cpu, cuda};
use surge::codegen::ir::{Computation as Ir, NodeId, SourceLoc};
use surge::codegen::target::{CudaDevice, Platform};
use surge::prelude::*;
use surge::{Kernels, Target};

/// `file:line:column` in this file.
fn here(line: u32, column: u32) -> String {
    format!("{}:{line}:{column}", file!())
}

fn msg<T: std::fmt::Debug>(r: Result<T>) -> String {
    r.unwrap_err().to_string()
}

/// Sums of squares per tile. `squares_too` is the same program, written on other lines.
fn squares(s: &Seq<f64>) -> Result<Seq<f64>> {
    let tiles = split(s, 4u64)?;
    map(
        |t: Seq<f64>| reduce(add, &map(|x: Scalar<f64>| x.clone() * x, &t)?),
        &tiles,
    )
}

fn squares_too(s: &Seq<f64>) -> Result<Seq<f64>> {
    let tiles = split(s, 4u64)?;
    map(
        |t: Seq<f64>| reduce(add, &map(|x: Scalar<f64>| x.clone() * x, &t)?),
        &tiles,
    )
}

fn built(f: fn(&Seq<f64>) -> Result<Seq<f64>>) -> Computation {
    let s = Seq::input("s", (0..40).map(f64::from).collect()).unwrap();
    Computation::new(&f(&s).unwrap()).unwrap()
}

fn cpu_source(c: &Computation) -> String {
    let set = c.variants(&Target::cpu().platform().unwrap()).unwrap();
    cpu::emit(
        c.ir(),
        &c.analyze().unwrap(),
        set.variants(),
        &Default::default(),
    )
    .unwrap()
    .source
}

fn cuda_source(c: &Computation) -> String {
    let set = c
        .variants(&Platform::Cuda(CudaDevice::builtin("h200").unwrap()))
        .unwrap();
    cuda::emit(c.ir(), &c.analyze().unwrap(), set.phases())
        .unwrap()
        .source
}

#[test]
fn every_traced_node_has_its_callers_line() {
    let c = built(squares);
    let line = |n: usize| {
        c.ir().nodes[n]
            .loc
            .as_ref()
            .map(|l| (l.file.as_str(), l.line))
    };
    // The input, the split, the inner map and its `x * x`, the reduce and its `+`, the map.
    let lines: Vec<_> = (0..c.ir().nodes.len()).map(line).collect();
    assert!(lines.iter().all(|l| l.is_some()), "{lines:?}");
    let root = c.ir().root_node().loc.clone().unwrap();
    assert_eq!((root.file.as_str(), root.line), (file!(), 24));
    let split = c.ir().nodes.iter().find(|n| n.op.kind().name() == "split");
    assert_eq!(split.unwrap().loc.as_ref().unwrap().line, 23);
    // The builtin `add`'s body is where `add` is defined.
    assert!(
        lines
            .iter()
            .flatten()
            .any(|l| l.0.ends_with("dsel/lambda.rs"))
    );
}

#[test]
fn locations_are_not_structure() {
    let (a, b) = (built(squares), built(squares_too));
    assert_ne!(a.ir().root_node().loc, b.ir().root_node().loc);
    assert_eq!(a.ir(), b.ir());
    assert_eq!(a.ir().stable_hash(), b.ir().stable_hash());
    assert_eq!(a.ir().structure_hash(), b.ir().structure_hash());
    assert_eq!(cpu_source(&a), cpu_source(&b));
    assert_eq!(cuda_source(&a), cuda_source(&b));
    // Kept in JSON; IR written before locations existed still loads.
    let json = serde_json::to_string(a.ir()).unwrap();
    assert!(json.contains(r#""loc":{"file":"tests/tests/source_locations.rs","line":24"#));
    let back: Ir = serde_json::from_str(&json).unwrap();
    assert_eq!(back.root_node().loc, a.ir().root_node().loc);
    let old: Ir =
        serde_json::from_str(&serde_json::to_string(&a.ir().without_locs()).unwrap()).unwrap();
    assert!(!serde_json::to_string(&old).unwrap().contains("\"loc\""));
    assert_eq!(&old, a.ir());
}

#[test]
fn interpreter_and_cpu_kernel_errors_name_the_line() {
    let s = Seq::input("s", vec![1.0f64, 2.0]).unwrap();
    let idx = Seq::input("idx", vec![0u32, 5]).unwrap();
    let (g, l) = (gather(&s, &idx).unwrap(), line!());
    let c = Computation::new(&g).unwrap();
    let want = format!(
        "`gather` at {} (node %2) failed: index 5 at position 1 is out of range for a source of \
         length 2",
        here(l, 19)
    );
    assert_eq!(msg(c.interpret()), want);
    let k = Kernels::build(&c, &Target::cpu()).unwrap();
    for v in k.variants() {
        assert_eq!(msg(k.run(&c, v)), want, "{v}");
    }
}

#[test]
fn anchored_nodes_carry_the_line_and_deep_results_run() {
    let s = Seq::input("s", vec![1.0f64; 8]).unwrap();
    // A program without a data-parallel operator is anchored in a one-element map
    // (`ir::anchored`) whose nodes carry the user's line: a message about them names it.
    let (n, l) = (len(&s), line!());
    let c = Computation::new(&n).unwrap();
    assert_eq!(c.analyze().unwrap().phases.len(), 1);
    assert_eq!(c.ir().loc(c.ir().root).map(|l| l.line), Some(l));
    // A result three levels deep was the last CPU emitter refusal that named its line; it runs
    // now (`tests/tests/deep_results.rs`), and no emitter error is left to name one.
    let tiles = split(&s, 4u64).unwrap();
    let deep: Seq<Seq<Seq<f64>>> = map(
        |t: Seq<f64>| map(|x: Scalar<f64>| replicate(&x, 2u64), &t),
        &tiles,
    )
    .unwrap();
    let c = Computation::new(&deep).unwrap();
    assert!(tests::conformance::check_all(&tests::conformance::CpuBackend, "deep", &c) > 1);
}

#[test]
fn a_node_is_named_the_same_way_everywhere() {
    let c = built(squares);
    let root = c.ir().root;
    let loc = SourceLoc {
        file: file!().into(),
        line: 24,
        column: 5,
    };
    assert_eq!(c.ir().loc(root), Some(loc));
    assert_eq!(
        c.ir().site(root),
        format!("`map` at {} (node {root})", here(24, 5))
    );
    assert_eq!(
        c.ir().site(NodeId(0)),
        format!("`input` at {} (node %0)", here(39, 13))
    );
}
