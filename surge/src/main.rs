//! The `surge` command-line program.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
