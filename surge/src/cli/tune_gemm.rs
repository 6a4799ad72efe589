//! `surge tune gemm`: the generated GEMM family tuned per shape (`surge::apps::gemm_tuning`)
//! through the same campaign as every other workload. From Rust, the store selects a variant
//! for a shape with `Tuned::load(&gemm_tuning::workload(), &backend).select(&input)`.

use super::CliError;
use super::tune::{TuneArgs, campaign, failure, options, print_done, run_campaign, usage};
use std::time::Instant;
use surge::apps::gemm_tuning;
use surge::tune::TuningBackend;
use surge::tune::cpu::CpuBackend;
use surge::tune::filtered::FilteredBackend;

/// Options that mean nothing for the generated shapes.
fn refuse_foreign(args: &TuneArgs) -> Result<(), CliError> {
    if let Some(p) = args.platform.as_deref().filter(|p| *p != "cpu") {
        return Err(usage(format!(
            "`surge tune gemm` tunes the CPU GEMM family (--platform {p}): the CUDA GEMM is \
             tuned by `surge bench gemm --on cuda`"
        )));
    }
    if args.inputs.is_some() || args.test.is_some() {
        return Err(usage(
            "`surge tune gemm` generates its shapes (square, rank-k, panel, tall-skinny; \
             --scale small|full); it takes no --inputs or --test",
        ));
    }
    if args.incremental || args.potential.is_some() || args.format.is_some() {
        return Err(usage(
            "`surge tune gemm` takes none of --incremental, --potential, --format",
        ));
    }
    Ok(())
}

pub fn run(args: &TuneArgs) -> Result<(), CliError> {
    refuse_foreign(args)?;
    let opts = options(args)?;
    let small = args.scale == "small";
    let started = Instant::now();
    let make = |test: bool| -> Result<Vec<_>, CliError> {
        gemm_tuning::shapes(small, test)
            .map_err(failure)?
            .iter()
            .map(gemm_tuning::input)
            .collect::<surge::Result<Vec<_>>>()
            .map_err(failure)
    };
    let (train, test) = (make(false)?, make(true)?);
    let cpu = CpuBackend::new();
    let backend = FilteredBackend::new(&cpu, gemm_tuning::is_family, "the generated GEMM family");
    eprintln!("compiling the GEMM family's kernels (one rustc call the first time)");
    let nv = backend.variants(&train[0]).map_err(failure)?.len() as u64;
    let workload = gemm_tuning::workload();
    let sets = (&train[..], &test[..], None);
    let campaign = campaign(args, &opts, &workload, &backend, sets, started);
    let done = run_campaign(&campaign, &mut surge::tune::Local, args.json, nv).map_err(failure)?;
    print_done(
        args,
        &campaign,
        &done,
        Some(
            &"Tuned::load(&gemm_tuning::workload(), &backend).select(&input) (from Rust)"
                .to_string(),
        ),
    );
    Ok(())
}
