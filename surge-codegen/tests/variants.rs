//! Schedule lattice properties, golden schedules/parameters/counts, and variant-id round trips.

use proptest::prelude::*;
use std::collections::BTreeSet;
use surge_codegen::ir::OpKind;
use surge_codegen::passes::run_phase;
use surge_codegen::policy::{Param, infer};
use surge_codegen::schedule::{self, Schedule, ScheduleElem};
use surge_codegen::target::{CpuMachine, CudaDevice, Platform};
use surge_codegen::variant::Variant;

fn cuda() -> Platform {
    Platform::Cuda(CudaDevice::builtin("h200").unwrap())
}
fn cpu() -> Platform {
    Platform::Cpu(CpuMachine::haswell32())
}

fn op() -> impl Strategy<Value = OpKind> {
    prop::sample::select(OpKind::data_parallel().collect::<Vec<_>>())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Every schedule of every sequence (depth ≤ 4) reaches all-sequential, is valid for its
    /// sequence, and strength is a partial order on the set.
    #[test]
    fn lattice(ops in prop::collection::vec(op(), 1..=4)) {
        let all = schedule::enumerate(&ops).unwrap();
        let depth = schedule::strongest(&ops).unwrap().depth();
        let bottom = Schedule::all_sequential(depth);
        for s in &all {
            prop_assert!(s.check(&ops).is_ok(), "{s} invalid");
            prop_assert!(s.at_least(&bottom));
            prop_assert!(s == &bottom || s.weaker().contains(&bottom), "{s} does not reach {bottom}");
            // reflexive
            prop_assert!(s.at_least(s));
            for t in &all {
                // antisymmetric
                if s.at_least(t) && t.at_least(s) { prop_assert_eq!(s, t); }
                // at_least agrees with reachability by rewrite rules
                prop_assert_eq!(s.at_least(t), s == t || s.weaker().contains(t));
                for u in &all {
                    // transitive
                    if s.at_least(t) && t.at_least(u) { prop_assert!(s.at_least(u)); }
                }
            }
        }
        // w(s) of the strongest is every other schedule
        prop_assert_eq!(all.len(), 1 << schedule::strongest(&ops).unwrap().parallel_levels());
    }

    /// Platform rewriting only weakens, yields a schedule that passes, and keeps valid ones.
    #[test]
    fn platform_rewriting(elems in prop::collection::vec(prop::sample::select(ScheduleElem::ALL.to_vec()), 1..=4)) {
        let s = Schedule(elems);
        for p in [cuda(), cpu()] {
            let r = schedule::platform_rewrite(&s, &p);
            prop_assert!(s.at_least(&r), "{s} -> {r} is not weaker");
            prop_assert!(schedule::satisfies(&r, &p));
            if schedule::satisfies(&s, &p) { prop_assert_eq!(&r, &s); }
            // nearest: no strictly stronger passing schedule between r and s
            for w in s.weaker() {
                if schedule::satisfies(&w, &p) && w.at_least(&r) { prop_assert_eq!(&w, &r); }
            }
        }
    }
}

#[test]
fn spmv_schedules_figure_5_2() {
    let set: BTreeSet<String> = schedule::enumerate(&[OpKind::Map, OpKind::Reduce])
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        set,
        [
            "independent.cooperative",
            "independent.sequential",
            "sequential.cooperative",
            "sequential.sequential"
        ]
        .into_iter()
        .map(String::from)
        .collect()
    );
}

fn params(p: &Platform) -> Vec<(String, Vec<String>)> {
    let ops = [OpKind::Map, OpKind::Reduce];
    schedule::enumerate(&ops)
        .unwrap()
        .into_iter()
        .map(|s| {
            let names = infer(&ops, &s, p).iter().map(Param::name).collect();
            (s.to_string(), names)
        })
        .collect()
}

fn owned(v: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
    v.iter()
        .map(|(s, ps)| (s.to_string(), ps.iter().map(|p| p.to_string()).collect()))
        .collect()
}

/// Table 5.5, plus `execution_resource` (Table 5.4 lists it; Table 5.5 leaves it out).
#[test]
fn spmv_parameters_table_5_5() {
    let g: &[&str] = &["block_size_x", "block_size_y", "logical_warp_size"];
    let cat =
        |rest: &[&'static str]| -> Vec<&'static str> { g.iter().chain(rest).copied().collect() };
    let ic = cat(&[
        "grain_size1",
        "execution_resource1",
        "execution_resource2",
        "block_reduce_algo2",
    ]);
    let is = cat(&["grain_size1", "execution_resource1", "enable_unroll2"]);
    let sc = cat(&[
        "enable_unroll1",
        "execution_resource2",
        "block_reduce_algo2",
    ]);
    let ss = cat(&["enable_unroll1", "enable_unroll2"]);
    assert_eq!(
        params(&cuda()),
        owned(&[
            ("independent.cooperative", &ic),
            ("independent.sequential", &is),
            ("sequential.cooperative", &sc),
            ("sequential.sequential", &ss),
        ])
    );
    assert_eq!(
        params(&cpu()),
        owned(&[
            (
                "independent.cooperative",
                &[
                    "num_threads",
                    "enable_nesting",
                    "schedule1",
                    "chunk_size1",
                    "schedule2",
                    "chunk_size2"
                ]
            ),
            (
                "independent.sequential",
                &[
                    "num_threads",
                    "enable_nesting",
                    "schedule1",
                    "chunk_size1",
                    "enable_unroll2"
                ]
            ),
            (
                "sequential.cooperative",
                &[
                    "num_threads",
                    "enable_nesting",
                    "enable_unroll1",
                    "schedule2",
                    "chunk_size2"
                ]
            ),
            (
                "sequential.sequential",
                &[
                    "num_threads",
                    "enable_nesting",
                    "enable_unroll1",
                    "enable_unroll2"
                ]
            ),
        ])
    );
}

fn count(ops: &[OpKind], p: &Platform) -> (usize, Vec<usize>) {
    let ph = run_phase(0, "", ops, p).unwrap();
    (
        ph.total_variants(),
        ph.spaces.iter().map(|s| s.variants.len()).collect(),
    )
}

/// Per-phase counts; app totals (see the schedule README's table): reduce = 2 × map.reduce,
/// scan = map.reduce + 2 × map.scan, spmv = map.reduce.
#[test]
fn golden_counts() {
    let mr = [OpKind::Map, OpKind::Reduce];
    let ms = [OpKind::Map, OpKind::Scan];
    assert_eq!(count(&mr, &cuda()), (320, vec![148, 20, 148, 4]));
    assert_eq!(count(&ms, &cuda()), (616, vec![296, 20, 296, 4]));
    assert_eq!(count(&mr, &cpu()), (184, vec![108, 36, 36, 4]));
    assert_eq!(count(&ms, &cpu()), (184, vec![108, 36, 36, 4]));
    // K20c has the same limits as H200 for these ranges.
    let k20 = Platform::Cuda(CudaDevice::builtin("k20c").unwrap());
    assert_eq!(count(&mr, &k20).0, 320);
    // The CUDA constraint rewrites a third parallel level: split (independent.independent)
    // nesting a reduce gives three levels, the third forced sequential.
    let ph = run_phase(0, "", &[OpKind::Split, OpKind::Reduce], &cuda()).unwrap();
    assert!(
        ph.schedules
            .iter()
            .all(|s| s.elems()[2] == ScheduleElem::Sequential)
    );
    assert!(ph.rewritten.len() > ph.schedules.len());
}

#[test]
fn pruning_counts_come_from_beast() {
    let ph = run_phase(0, "", &[OpKind::Map, OpKind::Reduce], &cuda()).unwrap();
    let ic = &ph.spaces[0];
    assert_eq!(ic.schedule.to_string(), "independent.cooperative");
    assert_eq!(ic.size_before, 5 * 3 * 6 * 2 * 3 * 2 * 2);
    assert!(ic.pruned_by["threads_per_block"] > 0);
    assert!(ic.pruned_by.contains_key("block_multiple_of_warp"));
    for v in &ic.variants {
        let i = |k: &str| match v.get(k).unwrap() {
            surge_codegen::policy::PValue::Int(i) => *i,
            _ => panic!(),
        };
        assert!(i("bx") * i("by") <= 1024);
        assert_eq!(i("bx") % i("lw"), 0);
        assert_eq!(v.get("res1"), v.get("res2"));
    }
}

#[test]
fn every_variant_id_round_trips() {
    for p in [cuda(), cpu()] {
        for ops in [
            vec![OpKind::Map, OpKind::Reduce],
            vec![OpKind::Map, OpKind::Scan],
        ] {
            let ph = run_phase(0, "", &ops, &p).unwrap();
            let mut ids = BTreeSet::new();
            for v in ph.spaces.iter().flat_map(|s| &s.variants) {
                let id = v.to_string();
                let back: Variant = id.parse().unwrap();
                assert_eq!(&back, v);
                assert_eq!(back.to_string(), id);
                assert!(ids.insert(id), "duplicate id");
            }
        }
    }
}

#[test]
fn bad_ids_name_the_bad_part() {
    for (bad, part) in [
        ("cuda:rtx9999/independent/bx=64", "rtx9999"),
        ("fpga:x/independent/bx=64", "fpga"),
        ("cpu:haswell32/independent.sideways/threads=1", "sideways"),
        ("cpu:haswell32/independent/speed=1", "speed"),
        ("cpu:haswell32/independent/threads=", "threads"),
        (
            "cpu:haswell32/independent/threads=1,threads=2",
            "given twice",
        ),
        ("nonsense", "PLATFORM/SCHEDULE/PARAMS"),
    ] {
        let e = bad.parse::<Variant>().unwrap_err();
        assert!(
            matches!(e, surge_codegen::CodegenError::Variant { .. }),
            "{bad}: {e:?}"
        );
        assert!(e.to_string().contains(part), "{bad}: {e}");
    }
}

/// Surge's policy spaces are shipped as BEAST TOML files (`spaces/surge_spmv_*.toml`): each must
/// be what `SpaceSpec::to_toml` generates today, and enumerate exactly the builder's survivors.
/// Set `SURGE_BLESS=1` to rewrite the files after changing the policy ranges or constraints.
#[test]
fn shipped_policy_spaces_are_current_and_equal_the_builder_spaces() {
    use surge_beast::{PlanOptions, RunOptions, Space};
    use surge_codegen::space::{SpaceSpec, schedule_space};
    let mr = [OpKind::Map, OpKind::Reduce];
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("spaces");
    for (tag, platform) in [("cuda_h200", cuda()), ("cpu_haswell32", cpu())] {
        let ph = run_phase(0, "", &mr, &platform).unwrap();
        for sched in &ph.schedules {
            let spec = SpaceSpec::new(&mr, sched, &platform);
            let text = spec.to_toml();
            let file = dir.join(format!(
                "surge_spmv_{tag}_{}.toml",
                sched.to_string().replace('.', "_")
            ));
            if std::env::var_os("SURGE_BLESS").is_some() {
                std::fs::write(&file, &text).unwrap();
            }
            let shipped = std::fs::read_to_string(&file).unwrap_or_else(|e| {
                panic!(
                    "{}: {e} (run with SURGE_BLESS=1 to write it)",
                    file.display()
                )
            });
            assert_eq!(
                shipped,
                text,
                "{} is stale (run with SURGE_BLESS=1)",
                file.display()
            );
            let from_toml = Space::from_toml_str(&text).unwrap();
            let n = from_toml
                .plan(&PlanOptions::default())
                .unwrap()
                .count(&RunOptions::threads(1))
                .unwrap()
                .survivors;
            let built = schedule_space(&mr, sched, &platform).unwrap();
            assert_eq!(n as usize, built.variants.len(), "{}", file.display());
        }
    }
}
