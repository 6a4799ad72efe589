//! `surge tune comd --potential FILE`: CoMD's force tuned two-level (algorithm, then variant)
//! on generated configurations (`surge::apps::comd::tuning`), through the same campaign as
//! every other workload; `surge run comd --tuned` uses the store.

use super::CliError;
use super::tune::{TuneArgs, campaign, failure, options, print_done, run_campaign, usage};
use std::time::Instant;
use surge::apps::comd::{EamPotential, Format, tuning};
use surge::tune::TuningBackend;
use surge::tune::algorithms::AlgorithmBackend;
use surge::tune::cpu::CpuBackend;

/// The potential `--potential`/`--format` name.
fn potential(args: &TuneArgs) -> Result<EamPotential, CliError> {
    let Some(path) = &args.potential else {
        return Err(usage(
            "`surge tune comd` needs --potential FILE, an EAM potential in funcfl or setfl \
             format (CoMD ships pots/Cu_u6.eam and pots/Cu01.eam.alloy)",
        ));
    };
    let format: Format = match &args.format {
        Some(f) => f.parse()?,
        None => super::comd_args::default_format(path),
    };
    Ok(EamPotential::read(path, format)?)
}

/// Options that mean nothing for CoMD's generated configurations.
fn refuse_foreign(args: &TuneArgs) -> Result<(), CliError> {
    if let Some(p) = args.platform.as_deref().filter(|p| *p != "cpu") {
        return Err(usage(format!(
            "`surge tune comd` tunes on the CPU only (--platform {p}); `surge run comd \
             --platform cuda` runs the programs' default CUDA variants"
        )));
    }
    if args.inputs.is_some() || args.test.is_some() {
        return Err(usage(
            "`surge tune comd` generates its configurations (--scale small|full); it takes no \
             --inputs or --test",
        ));
    }
    if args.incremental {
        return Err(usage("`surge tune comd` does not take --incremental"));
    }
    Ok(())
}

pub fn run(args: &TuneArgs) -> Result<(), CliError> {
    refuse_foreign(args)?;
    let opts = options(args)?;
    let pot = potential(args)?;
    let small = args.scale == "small";
    let started = Instant::now();
    let make = |test: bool| {
        tuning::configs(&pot, small, test)
            .into_iter()
            .map(|c| tuning::input(&pot, c))
            .collect::<surge::Result<Vec<_>>>()
            .map_err(failure)
    };
    let (train, test) = (make(false)?, make(true)?);
    let cpu = CpuBackend::new();
    let backend = AlgorithmBackend::new(&cpu);
    eprintln!("compiling both algorithms' variants (two rustc calls the first time)");
    let nv = backend.variants(&train[0]).map_err(failure)?.len() as u64;
    let workload = tuning::workload();
    let sets = (&train[..], &test[..], None);
    let campaign = campaign(args, &opts, &workload, &backend, sets, started);
    let done = run_campaign(&campaign, &mut surge::tune::Local, args.json, nv).map_err(failure)?;
    print_done(
        args,
        &campaign,
        &done,
        Some(&"surge run comd --potential FILE --tuned".to_string()),
    );
    Ok(())
}
