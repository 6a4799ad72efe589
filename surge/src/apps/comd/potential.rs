//! EAM potential files, read as CoMD 1.1 reads them (`eam.c`, `eamReadFuncfl` and
//! `eamReadSetfl`): DYNAMO's single-element **funcfl** format (`Cu_u6.eam`) and the
//! single-element case of its **setfl** format (`Cu01.eam.alloy`).
//!
//! Header lines are read one by one; the tables follow in free format, any number of values
//! per line. A malformed file is an [`SurgeError::Input`] naming the file and the line: a
//! missing or short header line, a non-number, a table cut short, numbers left over after the
//! last table, or a setfl file with more than one element. (CoMD itself ignores left-over
//! numbers and extra header fields; extra header fields are ignored here too.)

use super::table::Table;
use super::units::{AMU_TO_INTERNAL_MASS, BOHR_TO_ANGS, HARTREE_TO_EV};
use crate::{Result, SurgeError};
use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// `Z²/r` in hartree·bohr to eV·Å (CoMD's `hartreeToEv * bohrToAngs`, about 14.3996).
const Z2_TO_EV_ANGS: f64 = HARTREE_TO_EV * BOHR_TO_ANGS;

/// The smallest table CoMD's reader and interpolation can use (`φ₀ = 2φ₁ − φ₂`).
const MIN_TABLE: usize = 3;

/// The two file formats CoMD reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// funcfl: F(ρ̄), Z(r) and ρ(r) tables; `φ = 27.2·0.529·Z²/r`.
    Funcfl,
    /// setfl with one element: F(ρ̄), ρ(r) and r·φ(r) tables.
    Setfl,
}

impl Format {
    /// Both formats.
    pub const ALL: [Format; 2] = [Format::Funcfl, Format::Setfl];

    /// The name CoMD's `--potType` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Funcfl => "funcfl",
            Format::Setfl => "setfl",
        }
    }

    /// CoMD's default potential file for this format.
    pub fn default_file(self) -> &'static str {
        match self {
            Format::Funcfl => "Cu_u6.eam",
            Format::Setfl => "Cu01.eam.alloy",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = SurgeError;
    fn from_str(s: &str) -> Result<Format> {
        Format::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| {
                SurgeError::Usage(format!(
                    "unknown EAM potential format `{s}`; CoMD reads funcfl and setfl"
                ))
            })
    }
}

/// A single-element EAM potential: the embedding energy F(ρ̄) (eV), the electron density
/// ρ(r) and the pair potential φ(r) (eV), r in Å, each a [`Table`] starting at 0.
#[derive(Debug, Clone, PartialEq)]
pub struct EamPotential {
    /// The species name: funcfl's first comment word, setfl's first element name (CoMD leaves
    /// it empty for setfl).
    pub name: String,
    pub atomic_number: i64,
    /// Mass in amu, as in the file.
    pub mass_amu: f64,
    /// Lattice constant in Å, as in the file.
    pub lattice_constant: f64,
    /// Lattice type as in the file (`FCC`, `fcc`).
    pub lattice_type: String,
    /// Cutoff radius in Å, the header's `rcutoff`.
    pub cutoff: f64,
    /// F(ρ̄).
    pub embedding: Table,
    /// ρ(r).
    pub density: Table,
    /// φ(r), with φ(0) extrapolated linearly from φ(dr) and φ(2·dr).
    pub pair: Table,
}

impl EamPotential {
    /// Reads a potential file; errors name the file and the line.
    pub fn read(path: &Path, format: Format) -> Result<EamPotential> {
        let source = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| SurgeError::Input {
            input: source.clone(),
            message: format!("cannot read this {format} potential file: {e}"),
        })?;
        EamPotential::parse(&text, format, &source)
    }

    /// Parses a potential file's text; `source` names it in errors.
    pub fn parse(text: &str, format: Format, source: &str) -> Result<EamPotential> {
        let mut reader = Reader::new(text, source);
        match format {
            Format::Funcfl => parse_funcfl(&mut reader),
            Format::Setfl => parse_setfl(&mut reader),
        }
    }

    /// The mass in CoMD's internal unit, eV·fs²/Å².
    pub fn mass(&self) -> f64 {
        self.mass_amu * AMU_TO_INTERNAL_MASS
    }
}

/// funcfl: a comment, `Z mass a type`, `nrho drho nr dr rcutoff`, then F(ρ̄), Z(r), ρ(r).
fn parse_funcfl(r: &mut Reader<'_>) -> Result<EamPotential> {
    let (_, comment) = r.line("the comment")?;
    let name = comment
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string();
    let species = species(r)?;
    let grid = grid(r)?;
    let embedding = r.table(grid.nrho, "F(rhobar)")?;
    let z = r.table(grid.nr, "Z(r)")?;
    let density = r.table(grid.nr, "rho(r)")?;
    r.end(&grid)?;
    let pair = pair_from_z(z, grid.dr);
    Ok(potential(name, species, &grid, &embedding, &density, &pair))
}

/// setfl: three comments, `1 element`, `nrho drho nr dr rcutoff`, `Z mass a type`, then
/// F(ρ̄), ρ(r), r·φ(r).
fn parse_setfl(r: &mut Reader<'_>) -> Result<EamPotential> {
    for what in ["comment 1", "comment 2", "comment 3"] {
        r.line(what)?;
    }
    let name = elements(r)?;
    let grid = grid(r)?;
    let species = species(r)?;
    let embedding = r.table(grid.nrho, "F(rhobar)")?;
    let density = r.table(grid.nr, "rho(r)")?;
    let r_phi = r.table(grid.nr, "r*phi(r)")?;
    r.end(&grid)?;
    let pair = pair_from_r_phi(r_phi, grid.dr);
    Ok(potential(name, species, &grid, &embedding, &density, &pair))
}

fn potential(
    name: String,
    s: Species,
    g: &Grid,
    embedding: &[f64],
    density: &[f64],
    pair: &[f64],
) -> EamPotential {
    EamPotential {
        name,
        atomic_number: s.atomic_number,
        mass_amu: s.mass_amu,
        lattice_constant: s.lattice_constant,
        lattice_type: s.lattice_type,
        cutoff: g.cutoff,
        embedding: Table::new(embedding, 0.0, g.drho),
        density: Table::new(density, 0.0, g.dr),
        pair: Table::new(pair, 0.0, g.dr),
    }
}

/// φ from funcfl's Z: `φ_i = Z_i·(Z_i/r_i)·(hartree·bohr)` at `r_i = i·dr`, i ≥ 1.
fn pair_from_z(mut z: Vec<f64>, dr: f64) -> Vec<f64> {
    for (i, v) in z.iter_mut().enumerate().skip(1) {
        let r = i as f64 * dr;
        *v *= *v / r;
        *v *= Z2_TO_EV_ANGS;
    }
    extrapolate_origin(z)
}

/// φ from setfl's r·φ: `φ_i = (rφ)_i / r_i` at `r_i = i·dr`, i ≥ 1.
fn pair_from_r_phi(mut r_phi: Vec<f64>, dr: f64) -> Vec<f64> {
    for (i, v) in r_phi.iter_mut().enumerate().skip(1) {
        *v /= i as f64 * dr;
    }
    extrapolate_origin(r_phi)
}

/// φ is undefined at r = 0; CoMD extrapolates linearly: `φ₀ = φ₁ + (φ₁ − φ₂)`.
fn extrapolate_origin(mut phi: Vec<f64>) -> Vec<f64> {
    phi[0] = phi[1] + (phi[1] - phi[2]);
    phi
}

/// The species line: `atomic-number mass lattice-constant lattice-type`.
#[derive(Debug)]
struct Species {
    atomic_number: i64,
    mass_amu: f64,
    lattice_constant: f64,
    lattice_type: String,
}

fn species(r: &mut Reader<'_>) -> Result<Species> {
    const LAYOUT: &str = "atomic-number mass lattice-constant lattice-type";
    let (line, text) = r.line(LAYOUT)?;
    let [z, mass, lat, kind] = r.fields(line, text, LAYOUT)?;
    let atomic_number = z.parse().map_err(|_| {
        r.error(
            line,
            format!("`{z}` is not a whole number (the atomic number)"),
        )
    })?;
    Ok(Species {
        atomic_number,
        mass_amu: r.positive(line, mass, "the mass")?,
        lattice_constant: r.positive(line, lat, "the lattice constant")?,
        lattice_type: kind.to_string(),
    })
}

/// The grid line: `nrho drho nr dr rcutoff`.
#[derive(Debug)]
struct Grid {
    nrho: usize,
    drho: f64,
    nr: usize,
    dr: f64,
    cutoff: f64,
    /// Where it is, for messages about the table sizes.
    line: usize,
}

fn grid(r: &mut Reader<'_>) -> Result<Grid> {
    const LAYOUT: &str = "nrho drho nr dr rcutoff";
    let (line, text) = r.line(LAYOUT)?;
    let [nrho, drho, nr, dr, cutoff] = r.fields(line, text, LAYOUT)?;
    Ok(Grid {
        nrho: r.count(line, nrho, "nrho")?,
        drho: r.positive(line, drho, "drho")?,
        nr: r.count(line, nr, "nr")?,
        dr: r.positive(line, dr, "dr")?,
        cutoff: r.positive(line, cutoff, "rcutoff")?,
        line,
    })
}

/// setfl's element line, `1 name`: CoMD 1.1 refuses alloys. Returns the element's name.
fn elements(r: &mut Reader<'_>) -> Result<String> {
    const LAYOUT: &str = "nelements element...";
    let (line, text) = r.line(LAYOUT)?;
    let [count] = r.fields(line, text, LAYOUT)?;
    match count.parse::<u64>() {
        Ok(1) => Ok(text
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_string()),
        Ok(n) => Err(r.error(
            line,
            format!("{n} elements: CoMD 1.1 reads single-element setfl files only, not alloys"),
        )),
        Err(_) => Err(r.error(
            line,
            format!("`{count}` is not a whole number (the number of elements)"),
        )),
    }
}

/// A potential file being read: header lines one at a time, then the numbers of the tables
/// in free format across line breaks. It knows the current line's number for messages.
struct Reader<'a> {
    source: &'a str,
    lines: Vec<&'a str>,
    /// Lines consumed so far, which is the 1-based number of the current line.
    consumed: usize,
    /// The current line's tokens not yet read (tables only).
    tokens: std::str::SplitWhitespace<'a>,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str, source: &'a str) -> Reader<'a> {
        Reader {
            source,
            lines: text.lines().collect(),
            consumed: 0,
            tokens: "".split_whitespace(),
        }
    }

    /// An input error at `line` of this file.
    fn error(&self, line: usize, message: impl fmt::Display) -> SurgeError {
        SurgeError::Input {
            input: self.source.to_string(),
            message: format!("line {line}: {message}"),
        }
    }

    /// The next header line and its number; `what` says what it should hold.
    fn line(&mut self, what: &str) -> Result<(usize, &'a str)> {
        let n = self.consumed + 1;
        let Some(text) = self.lines.get(self.consumed) else {
            let message = format!("missing (`{what}`): the file has {} lines", n - 1);
            return Err(self.error(n, message));
        };
        self.consumed = n;
        Ok((n, text))
    }

    /// The first `N` whitespace-separated fields of a header line (more are ignored).
    fn fields<const N: usize>(
        &self,
        line: usize,
        text: &'a str,
        layout: &str,
    ) -> Result<[&'a str; N]> {
        let mut words = text.split_whitespace();
        let mut out = [""; N];
        for slot in &mut out {
            *slot = words.next().ok_or_else(|| {
                self.error(
                    line,
                    format!("expected `{layout}`, found `{}`", text.trim()),
                )
            })?;
        }
        Ok(out)
    }

    /// A finite number > 0.
    fn positive(&self, line: usize, token: &str, name: &str) -> Result<f64> {
        match token.parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
            _ => Err(self.error(line, format!("{name} = `{token}`: expected a number > 0"))),
        }
    }

    /// A table size: a whole number of at least [`MIN_TABLE`].
    fn count(&self, line: usize, token: &str, name: &str) -> Result<usize> {
        match token.parse::<usize>() {
            Ok(n) if n >= MIN_TABLE => Ok(n),
            _ => Err(self.error(
                line,
                format!("{name} = `{token}`: expected a whole number of at least {MIN_TABLE}"),
            )),
        }
    }

    /// The next number token of the tables, with its line, across line breaks.
    fn token(&mut self) -> Option<(usize, &'a str)> {
        loop {
            if let Some(t) = self.tokens.next() {
                return Some((self.consumed, t));
            }
            let text = self.lines.get(self.consumed)?;
            self.consumed += 1;
            self.tokens = text.split_whitespace();
        }
    }

    /// `count` numbers of the table `what`.
    fn table(&mut self, count: usize, what: &str) -> Result<Vec<f64>> {
        let mut values = Vec::with_capacity(count.min(1 << 16));
        while values.len() < count {
            let Some((line, token)) = self.token() else {
                let read = values.len();
                let message =
                    format!("the file ends inside the {what} table: {read} of its {count} values");
                return Err(self.error(self.lines.len(), message));
            };
            match token.parse::<f64>() {
                Ok(v) if v.is_finite() => values.push(v),
                _ => {
                    let k = values.len() + 1;
                    let message = format!(
                        "`{token}` is not a finite number (value {k} of {count} of the {what} table)"
                    );
                    return Err(self.error(line, message));
                }
            }
        }
        Ok(values)
    }

    /// Checks that nothing follows the last table.
    fn end(&mut self, grid: &Grid) -> Result<()> {
        match self.token() {
            None => Ok(()),
            Some((line, token)) => Err(self.error(
                line,
                format!(
                    "`{token}` follows the last table; the header on line {} says nrho = {}, nr = {}",
                    grid.line, grid.nrho, grid.nr
                ),
            )),
        }
    }
}
