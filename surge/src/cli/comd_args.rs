//! The options of `surge run comd`, as CoMD's command line has them (CoMD 1.1 `mycommand.c`;
//! its short names in brackets).

use super::CliError;
use std::path::PathBuf;
use surge::apps::comd::{EamPotential, Format, MdConfig};

#[derive(Debug, Default, clap::Args)]
#[command(next_help_heading = "comd (CoMD's EAM molecular dynamics)")]
pub struct ComdArgs {
    /// comd: the EAM potential file (CoMD's `-d`/`-p`), e.g. CoMD's pots/Cu_u6.eam.
    #[arg(long, value_name = "FILE")]
    pub potential: Option<PathBuf>,
    /// comd: its format, funcfl or setfl (`-t`). Default: setfl for a file named *.alloy or
    /// *.setfl, else funcfl.
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,
    /// comd: FCC unit cells along each axis (default 20: 32000 atoms); --nx/--ny/--nz override
    /// one axis (`-x -y -z`).
    #[arg(long, value_name = "N")]
    pub cells: Option<usize>,
    /// comd: unit cells along x (overrides --cells).
    #[arg(long, value_name = "N")]
    pub nx: Option<usize>,
    /// comd: unit cells along y (overrides --cells).
    #[arg(long, value_name = "N")]
    pub ny: Option<usize>,
    /// comd: unit cells along z (overrides --cells).
    #[arg(long, value_name = "N")]
    pub nz: Option<usize>,
    /// comd: the lattice constant in Å (`-l`; default: the potential file's, 3.615 for copper).
    #[arg(long, value_name = "A", allow_negative_numbers = true)]
    pub lattice: Option<f64>,
    /// comd: the initial temperature in K (`-T`; default 600).
    #[arg(long, value_name = "T", allow_negative_numbers = true)]
    pub temperature: Option<f64>,
    /// comd: the largest random displacement of each coordinate in Å (`-r`; default 0).
    #[arg(long, value_name = "D", allow_negative_numbers = true)]
    pub delta: Option<f64>,
    /// comd: time steps (`-N`; default 100).
    #[arg(long, value_name = "S")]
    pub steps: Option<usize>,
    /// comd: the time step in fs (`-D`; default 1).
    #[arg(long, value_name = "FS", allow_negative_numbers = true)]
    pub dt: Option<f64>,
    /// comd: steps between printed lines (`-n`; default 10); the last step is printed too.
    #[arg(long, value_name = "K")]
    pub print_rate: Option<usize>,
}

impl ComdArgs {
    /// Whether any comd option was given.
    pub fn given(&self) -> bool {
        let numbers = [self.lattice, self.temperature, self.delta, self.dt];
        let counts = [
            self.cells,
            self.nx,
            self.ny,
            self.nz,
            self.steps,
            self.print_rate,
        ];
        self.potential.is_some()
            || self.format.is_some()
            || numbers.iter().any(Option::is_some)
            || counts.iter().any(Option::is_some)
    }

    /// The run's parameters: CoMD's defaults, overridden by the options given.
    pub fn config(&self) -> MdConfig {
        let d = MdConfig::default();
        let cells = self.cells.map_or(d.cells, |n| [n; 3]);
        MdConfig {
            cells: [
                self.nx.unwrap_or(cells[0]),
                self.ny.unwrap_or(cells[1]),
                self.nz.unwrap_or(cells[2]),
            ],
            lattice: self.lattice,
            temperature: self.temperature.unwrap_or(d.temperature),
            delta: self.delta.unwrap_or(d.delta),
            steps: self.steps.unwrap_or(d.steps),
            dt: self.dt.unwrap_or(d.dt),
            print_rate: self.print_rate.unwrap_or(d.print_rate),
        }
    }

    /// The potential file, read in its format.
    pub fn potential(&self) -> Result<(EamPotential, PathBuf, Format), CliError> {
        let Some(path) = self.potential.clone() else {
            return Err(CliError {
                code: 2,
                message: "`surge run comd` needs --potential FILE, an EAM potential in funcfl \
                          or setfl format (CoMD ships pots/Cu_u6.eam and pots/Cu01.eam.alloy)"
                    .into(),
            });
        };
        let format = match &self.format {
            Some(f) => f.parse()?,
            None => default_format(&path),
        };
        Ok((EamPotential::read(&path, format)?, path, format))
    }
}

/// setfl for `*.alloy` and `*.setfl` files, else funcfl (CoMD's default).
pub(super) fn default_format(path: &std::path::Path) -> Format {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if ext.eq_ignore_ascii_case("alloy") || ext.eq_ignore_ascii_case("setfl") {
        Format::Setfl
    } else {
        Format::Funcfl
    }
}
