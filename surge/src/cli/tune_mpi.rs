//! `mpirun -np R surge tune APP ...`: the campaign fanned out over the ranks
//! (`surge::mpi::campaign`): every rank builds the same inputs, rank 0 hands them out, journals
//! the records, trains and writes the store; the test inputs are handed out the same way, and
//! rank 0 sums their scores up; every rank measures.

use super::CliError;
use super::tune::{
    TuneArgs, backend_with_cores, failure, load_inputs, options, print_evaluation, print_training,
    run_campaign, usage,
};
use std::time::Instant;
use surge::apps::App;
use surge::mpi::campaign::{self, Ranks};
use surge::mpi::world::World;
use surge::tune::inputs::Set;
use surge::tune::trace;

pub fn run(args: &TuneArgs) -> Result<(), CliError> {
    let world = World::init()?;
    let root = world.is_root();
    // A refusal every rank finds alike is said once, by rank 0.
    let said_once = |e: CliError| {
        if root {
            e
        } else {
            CliError {
                code: e.code,
                message: String::new(),
            }
        }
    };
    if args.incremental {
        return Err(said_once(usage(
            "--incremental has no distributed form: under mpirun, surge tune measures every \
             training input (exhaustive), fanned out over the ranks",
        )));
    }
    let app: App = args
        .app
        .parse()
        .map_err(|e: surge::SurgeError| said_once(e.into()))?;
    let opts = options(args).map_err(said_once)?;
    // Each rank times its variants on its share of the node: ranks that mpirun left unbound
    // would each see every core and run their variants on all of them at once.
    let backend =
        backend_with_cores(args, app, Some(world.threads_per_rank())).map_err(said_once)?;
    let backend: &dyn surge::tune::TuningBackend = backend.as_ref();
    campaign::check_platforms(&world, &backend.platform(), args.allow_mixed_machines)
        .map_err(|e| said_once(failure(e)))?;
    let scale = super::tune::scale(args);
    let started = Instant::now();
    let who = format!("rank {}", world.rank());
    let train = load_inputs(app, args.inputs.as_ref(), scale, Set::Training)?;
    let t = trace::stage(&who, "loading the training inputs", started);
    let variants = backend.variants(&train[0]).map_err(failure)?;
    let t = trace::stage(&who, "the variants (compiling the kernels)", t);
    if !root {
        // Rank 0 waits for this rank's records and scores: a failure here ends the job.
        return serve(
            &world,
            args,
            app,
            &opts.training,
            backend,
            &train,
            &variants,
        )
        .or_else(|e| {
            eprintln!("error: rank {}: {}", world.rank(), e.message);
            use mpi::traits::Communicator as _;
            world.comm().abort(i32::from(e.code))
        });
    }
    let test = load_inputs(app, args.test.as_ref(), scale, Set::Test)?;
    let t = trace::stage(&who, "loading the test inputs", t);
    let nv = variants.len() as u64;
    let selection = match args.selection_rows {
        0 => None,
        rows => Some(app.selection_input(rows).map_err(failure)?),
    };
    trace::stage(&who, "making the selection input", t);
    let workload = app.workload();
    let sets = (&train[..], &test[..], selection.as_ref());
    let campaign = super::tune::campaign(args, &opts, &workload, backend, sets, started);
    let mut ranks = Ranks {
        world: &world,
        stop_after: args.stop_after,
    };
    let done = run_campaign(&campaign, &mut ranks, args.json, nv);
    let done = match done {
        Ok(d) => d,
        Err(e) => {
            // The other ranks wait for work that will not come: end the job, as a rank that
            // dies would (the journal keeps what was measured: `--resume`).
            let e = failure(e);
            eprintln!("error: {}", e.message);
            use mpi::traits::Communicator as _;
            world.comm().abort(i32::from(e.code));
        }
    };
    let mut summary = done.summary.clone();
    summary["ranks"] = serde_json::json!(world.size());
    if args.json {
        super::print_json(&summary);
    } else {
        println!(
            "measured on {} ranks (rank 0 handing the inputs out and measuring too)",
            world.size()
        );
        print_training(&campaign, &done);
        print_evaluation(&campaign, &done);
    }
    Ok(())
}

/// A rank other than 0: measures the training inputs rank 0 hands out, loads the test inputs
/// (while rank 0 trains the model), then scores the test inputs rank 0 hands out.
fn serve(
    world: &World,
    args: &TuneArgs,
    app: App,
    cfg: &surge::tune::TrainingConfig,
    backend: &dyn surge::tune::TuningBackend,
    train: &[surge::tune::TuneInput],
    variants: &[String],
) -> Result<(), CliError> {
    let who = format!("rank {}", world.rank());
    let t = Instant::now();
    campaign::serve(world, backend, train, variants, cfg).map_err(failure)?;
    let t = trace::stage(&who, "measuring the training inputs", t);
    let test = load_inputs(app, args.test.as_ref(), super::tune::scale(args), Set::Test)?;
    let t = trace::stage(&who, "loading the test inputs", t);
    campaign::serve_tests(world, &app.workload(), backend, &test, cfg).map_err(failure)?;
    trace::stage(&who, "scoring the test inputs", t);
    Ok(())
}
