//! The variants of one computation on one platform: what `execute`, `Kernels`, `surge run`,
//! `surge bench`, `surge variants`, `surge emit`, the tuners and the tests all enumerate from.
//!
//! A computation has one or more phases (the analysis splits it where a result must be
//! materialized); the passes give each phase its pruned space of variants. What a *variant of
//! the computation* is differs by platform, and is decided here once:
//!
//! - **CPU**: the final phase's variants; each applies its schedule and parameters to every phase
//!   (the emitter generates all phases for it). The default is [`cpu_default`]'s choice.
//! - **CUDA**: one variant per phase. A variant of the computation is a final-phase variant with
//!   the earlier phases at their defaults (each phase's first variant, of its strongest schedule);
//!   [`VariantSet::combination`] puts any phase's variant among the defaults.

use crate::CodegenError;
use crate::analysis::Analysis;
use crate::params::{CpuParams, LoopSchedule};
use crate::passes::{self, PhaseVariants};
use crate::schedule::ScheduleElem;
use crate::target::Platform;
use crate::variant::Variant;

/// Every phase's variants of one computation on one platform.
#[derive(Debug, Clone)]
pub struct VariantSet {
    platform: Platform,
    passes: Vec<PhaseVariants>,
    /// Per phase, its variants over all its schedules' spaces, strongest schedule first.
    phases: Vec<Vec<Variant>>,
}

impl VariantSet {
    /// Runs the passes on every phase of `analysis` for `platform`.
    pub fn new(analysis: &Analysis, platform: &Platform) -> Result<VariantSet, CodegenError> {
        let passes = passes::run(analysis, platform)?;
        let mut phases: Vec<Vec<Variant>> = passes
            .iter()
            .map(|p| {
                p.spaces
                    .iter()
                    .flat_map(|s| s.variants.iter().cloned())
                    .collect()
            })
            .collect();
        if let Some(i) = phases.iter().position(Vec::is_empty) {
            return Err(CodegenError::EmitVariant {
                what: format!("phase {i}"),
                message: format!("no {} variant survives pruning", platform.kind()),
            });
        }
        add_gemm_family(analysis, platform, &mut phases)?;
        Ok(VariantSet {
            platform: platform.clone(),
            passes,
            phases,
        })
    }

    pub fn platform(&self) -> &Platform {
        &self.platform
    }

    /// What each pass computed, per phase (for `surge variants` and `--pass`).
    pub fn passes(&self) -> &[PhaseVariants] {
        &self.passes
    }

    /// Every phase's variant list.
    pub fn phases(&self) -> &[Vec<Variant>] {
        &self.phases
    }

    /// The variants of phase `i`.
    pub fn phase(&self, i: usize) -> &[Variant] {
        &self.phases[i]
    }

    /// The computation's variants: the final phase's (see the module notes).
    pub fn variants(&self) -> &[Variant] {
        self.phases
            .last()
            .expect("an analysis has at least one phase")
    }

    /// The default variant of the computation.
    pub fn default_variant(&self) -> &Variant {
        match self.platform {
            Platform::Cpu(_) => cpu_default(self.variants()).expect("a phase has variants"),
            Platform::Cuda(_) => &self.variants()[0],
        }
    }

    /// Each phase's default variant.
    pub fn defaults(&self) -> Vec<Variant> {
        self.phases.iter().map(|p| p[0].clone()).collect()
    }

    /// The variant of the computation with this id, or `None`.
    pub fn find(&self, id: &str) -> Option<&Variant> {
        self.variants().iter().find(|v| v.id() == id)
    }

    /// A variant of any phase with this id: (phase, variant).
    pub fn find_in_phases(&self, id: &str) -> Option<(usize, &Variant)> {
        self.phases
            .iter()
            .enumerate()
            .find_map(|(i, p)| p.iter().find(|v| v.id() == id).map(|v| (i, v)))
    }

    /// One variant per phase: `v` for `phase`, every other phase at its default (CUDA).
    pub fn combination(&self, phase: usize, v: &Variant) -> Vec<Variant> {
        let mut list = self.defaults();
        list[phase] = v.clone();
        list
    }

    /// Variants of all phases together.
    pub fn total(&self) -> usize {
        self.phases.iter().map(Vec::len).sum()
    }
}

/// A one-phase computation that is a dense contraction, on the machine this runs on, also gets
/// every variant of the machine's GEMM space (`crate::gemm`), after the phase's own.
fn add_gemm_family(
    analysis: &Analysis,
    platform: &Platform,
    phases: &mut [Vec<Variant>],
) -> Result<(), CodegenError> {
    let Platform::Cpu(machine) = platform else {
        return Ok(());
    };
    let [phase] = &analysis.phases[..] else {
        return Ok(());
    };
    if machine.name != "host" || phase.contraction.is_none() {
        return Ok(());
    }
    let list = &mut phases[0];
    let schedule = list[0].schedule.clone();
    let family = crate::gemm::variants(&crate::gemm::Machine::query())?;
    list.extend(
        family
            .iter()
            .map(|g| crate::gemm::to_variant(g, platform, &schedule)),
    );
    Ok(())
}

/// The CPU default: the outer level independent, every inner level sequential and unrolled, all
/// cores, static schedule with the largest chunk (what a careful programmer writes first). A
/// dense contraction's default is its GEMM family's (`gemm::default_variant`): the naive loops
/// ran a 256³ mat-mat in 22 ms here, a packed GEMM variant in 0.4 ms.
pub fn cpu_default(variants: &[Variant]) -> Option<&Variant> {
    if variants.iter().any(crate::gemm::is_gemm) {
        let bits = crate::gemm::Machine::query().simd_bits;
        let (kernels, owners): (Vec<crate::gemm::GemmVariant>, Vec<&Variant>) = variants
            .iter()
            .filter_map(|v| crate::gemm::from_variant(v, bits).map(|g| (g, v)))
            .unzip();
        if let Some(best) = crate::gemm::default_variant(&kernels) {
            return kernels.iter().position(|g| g == best).map(|i| owners[i]);
        }
    }
    let score = |v: &Variant| -> (i64, i64, i64, i64, i64) {
        let elems = v.schedule.elems();
        let shape = i64::from(elems.first() == Some(&ScheduleElem::Independent))
            + elems
                .iter()
                .skip(1)
                .filter(|e| **e == ScheduleElem::Sequential)
                .count() as i64;
        let Ok(p) = CpuParams::of(v) else {
            return (shape, 0, 0, 0, 0);
        };
        let outer = p.levels.first().and_then(|l| l.parallel);
        let sched = i64::from(matches!(outer, Some((LoopSchedule::Static, _))));
        let chunk = outer.map_or(0, |(_, c)| c as i64);
        let unroll = p.levels.iter().filter(|l| l.unroll).count() as i64;
        (shape, p.threads as i64, sched, chunk, unroll)
    };
    variants.iter().max_by_key(|v| score(v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{
        BinaryOp, Computation, Elem, InputDecl, Lambda, Node, NodeId, Op, ScalarExpr, Type,
    };
    use crate::policy::PValue;
    use crate::target::{CpuMachine, CudaDevice};

    /// `reduce(add, map(x * x, s))` over 100 f64s: one phase, map.reduce.
    fn sum_of_squares() -> Computation {
        let f64s = Type::scalar_seq(Elem::F64);
        let s = Type::Scalar(Elem::F64);
        let v = |n: u64| Box::new(ScalarExpr::Value(NodeId(n)));
        let nodes = vec![
            Node {
                op: Op::Input { buffer: 0 },
                ty: f64s.clone(),
                loc: None,
            },
            Node {
                op: Op::Param,
                ty: s.clone(),
                loc: None,
            },
            Node {
                op: Op::Scalar {
                    expr: ScalarExpr::Binary(BinaryOp::Mul, v(1), v(1)),
                },
                ty: s.clone(),
                loc: None,
            },
            Node {
                op: Op::Map {
                    f: Lambda {
                        params: vec![NodeId(1)],
                        body: NodeId(2),
                    },
                    inputs: vec![NodeId(0)],
                },
                ty: f64s,
                loc: None,
            },
            Node {
                op: Op::Param,
                ty: s.clone(),
                loc: None,
            },
            Node {
                op: Op::Param,
                ty: s.clone(),
                loc: None,
            },
            Node {
                op: Op::Scalar {
                    expr: ScalarExpr::Binary(BinaryOp::Add, v(4), v(5)),
                },
                ty: s.clone(),
                loc: None,
            },
            Node {
                op: Op::Reduce {
                    op: Lambda {
                        params: vec![NodeId(4), NodeId(5)],
                        body: NodeId(6),
                    },
                    input: NodeId(3),
                    prefix: None,
                },
                ty: s,
                loc: None,
            },
        ];
        Computation {
            inputs: vec![InputDecl {
                name: "s".into(),
                elem: Elem::F64,
                len: 100,
            }],
            nodes,
            root: NodeId(7),
        }
    }

    #[test]
    fn cpu_and_cuda_sets_agree_with_the_passes_and_find_by_id() {
        let c = sum_of_squares();
        let a = crate::analysis::analyze(&c).unwrap();
        for platform in [
            Platform::Cpu(CpuMachine::haswell32()),
            Platform::Cuda(CudaDevice::builtin("h200").unwrap()),
        ] {
            let set = VariantSet::new(&a, &platform).unwrap();
            let passes = passes::run(&a, &platform).unwrap();
            assert_eq!(
                set.total(),
                passes.iter().map(|p| p.total_variants()).sum::<usize>()
            );
            let d = set.default_variant().clone();
            assert_eq!(set.find(&d.id()), Some(&d));
            assert_eq!(
                set.find_in_phases(&d.id()).map(|x| x.0),
                Some(set.phases().len() - 1)
            );
            assert!(set.find("cpu:host/nope/").is_none());
            let last = set.phases().len() - 1;
            assert_eq!(set.combination(last, &d)[last], d);
        }
    }

    #[test]
    fn the_cpu_default_uses_every_core_with_a_static_schedule() {
        let c = sum_of_squares();
        let a = crate::analysis::analyze(&c).unwrap();
        let set = VariantSet::new(&a, &Platform::Cpu(CpuMachine::haswell32())).unwrap();
        let d = set.default_variant();
        let threads = |v: &Variant| match v.get("threads") {
            Some(PValue::Int(t)) => *t,
            _ => 0,
        };
        let most = set.variants().iter().map(threads).max().unwrap();
        assert_eq!(threads(d), most, "{d}");
        assert_eq!(d.get("sched1"), Some(&PValue::Str("static".into())), "{d}");
    }
}
