//! `mpirun -np R surge tune APP ...`: the campaign fanned out over the ranks
//! (`surge::mpi::campaign`): every rank builds the same inputs, rank 0 hands them out, journals
//! the records, trains, writes the store and evaluates; the other ranks measure.

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
    let train = load_inputs(app, args.inputs.as_ref(), scale, Set::Training)?;
    let variants = backend.variants(&train[0]).map_err(failure)?;
    if !root {
        campaign::serve(&world, backend, &train, &variants, &opts.training).map_err(failure)?;
        return Ok(());
    }
    let test = load_inputs(app, args.test.as_ref(), scale, Set::Test)?;
    let nv = variants.len() as u64;
    let selection = match args.selection_rows {
        0 => None,
        rows => Some(app.selection_input(rows).map_err(failure)?),
    };
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
            "measured on {} ranks (rank 0 coordinating, the others measuring)",
            world.size()
        );
        print_training(&campaign, &done);
        print_evaluation(&campaign, &done);
    }
    Ok(())
}
