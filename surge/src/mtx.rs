//! Strict Matrix Market (`.mtx`) reader and writer producing CSR matrices with `f64` values.
//!
//! Strict on purpose: a malformed benchmark input must fail loudly with `file:line`, not
//! silently turn into a different matrix. Conventions (all per the Matrix Market spec
//! unless noted):
//!
//! * Header `%%MatrixMarket matrix <format> <field> <symmetry>` on line 1, words
//!   case-insensitive; `double` is accepted as a synonym of `real`.
//! * `%` comment lines and blank lines may appear anywhere after the header (tolerated
//!   because real-world files contain them, e.g. a second `%%GraphBLAS` line).
//! * `pattern` entries become `1.0`; `integer` values must be integers; NaN/inf are
//!   rejected (Surge must never let NaN inputs propagate silently).
//! * Coordinate format: duplicate entries are summed; explicit zeros are kept as
//!   structural entries (benchmarks rely on the file's sparsity pattern).
//! * Array format: only nonzero values are stored in the CSR result.
//! * Symmetric / skew-symmetric / hermitian files must store only the lower triangle;
//!   the reader expands them to full storage (skew mirrors with the negated value;
//!   hermitian on a real field behaves like symmetric). A skew-symmetric diagonal entry
//!   is an error.
//! * Complex matrices are rejected: Surge computes with real values only.

use std::fs;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;

/// Storage layout declared in the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    Coordinate,
    Array,
}

/// Value type declared in the header (`double` parses as `Real`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    Real,
    Integer,
    Pattern,
    Complex,
}

/// Symmetry declared in the header; anything but `General` stores the lower triangle only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Symmetry {
    General,
    Symmetric,
    SkewSymmetric,
    Hermitian,
}

/// The parsed `%%MatrixMarket` banner line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Header {
    pub format: Format,
    pub field: Field,
    pub symmetry: Symmetry,
}

/// A matrix in CSR form with f64 values, rows sorted by column, duplicates summed,
/// symmetric storage expanded.
#[derive(Debug, Clone, PartialEq)]
pub struct CsrMatrix {
    pub rows: usize,
    pub cols: usize,
    /// `rows + 1` offsets into `col_indices`/`values`; u64 so nnz is not capped at 4G.
    pub row_offsets: Vec<u64>,
    pub col_indices: Vec<u32>,
    pub values: Vec<f64>,
}

/// A reader/writer error; `line` is 1-based and absent for whole-file problems (I/O).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}: {message}", line_suffix(.line))]
pub struct MtxError {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

fn line_suffix(line: &Option<usize>) -> String {
    match line {
        Some(l) => format!(":{l}"),
        None => String::new(),
    }
}

impl MtxError {
    fn at(file: &str, line: usize, message: impl Into<String>) -> Self {
        MtxError {
            file: file.to_string(),
            line: Some(line),
            message: message.into(),
        }
    }

    fn whole(file: &str, message: impl Into<String>) -> Self {
        MtxError {
            file: file.to_string(),
            line: None,
            message: message.into(),
        }
    }
}

/// Name used in errors from [`CsrMatrix::from_triplets`], which has no file.
const TRIPLETS: &str = "<triplets>";

impl CsrMatrix {
    /// Number of stored entries (explicit zeros included).
    pub fn nnz(&self) -> usize {
        self.values.len()
    }

    /// Entries stored in row `i`; panics if `i >= rows`.
    pub fn row_len(&self, i: usize) -> usize {
        (self.row_offsets[i + 1] - self.row_offsets[i]) as usize
    }

    /// Builds a CSR matrix from 0-based `(row, col, value)` triplets: validates indices,
    /// sorts each row by column and sums duplicates.
    pub fn from_triplets(
        rows: usize,
        cols: usize,
        triplets: &[(usize, usize, f64)],
    ) -> Result<CsrMatrix, MtxError> {
        check_cols(cols).map_err(|m| MtxError::whole(TRIPLETS, m))?;
        let mut entries = Vec::with_capacity(triplets.len());
        for (k, &(i, j, v)) in triplets.iter().enumerate() {
            if i >= rows {
                return Err(MtxError::whole(
                    TRIPLETS,
                    format!("triplet {k}: row index {i} out of range (matrix has {rows} rows)"),
                ));
            }
            if j >= cols {
                return Err(MtxError::whole(
                    TRIPLETS,
                    format!(
                        "triplet {k}: column index {j} out of range (matrix has {cols} columns)"
                    ),
                ));
            }
            entries.push((i, j as u32, v));
        }
        build_csr(TRIPLETS, rows, cols, entries)
    }

    /// All entries as 0-based `(row, col, value)` in row-major, column-sorted order.
    pub fn to_triplets(&self) -> Vec<(usize, usize, f64)> {
        let mut out = Vec::with_capacity(self.nnz());
        for r in 0..self.rows {
            let (s, e) = (
                self.row_offsets[r] as usize,
                self.row_offsets[r + 1] as usize,
            );
            for k in s..e {
                out.push((r, self.col_indices[k] as usize, self.values[k]));
            }
        }
        out
    }
}

/// Column indices are u32 in Surge's CSR.
fn check_cols(cols: usize) -> Result<(), String> {
    if cols as u64 > u32::MAX as u64 {
        return Err(format!(
            "matrix has {cols} columns; at most {} are supported (u32 column indices)",
            u32::MAX
        ));
    }
    Ok(())
}

/// Reads only the banner line, so callers can inspect large files cheaply.
pub fn read_header(path: &Path) -> Result<Header, MtxError> {
    let name = path.display().to_string();
    let file =
        fs::File::open(path).map_err(|e| MtxError::whole(&name, format!("cannot open: {e}")))?;
    let mut first = Vec::new();
    BufReader::new(file)
        .read_until(b'\n', &mut first)
        .map_err(|e| MtxError::whole(&name, format!("cannot read: {e}")))?;
    if first.is_empty() {
        return Err(empty_file(&name));
    }
    let line = std::str::from_utf8(&first)
        .map_err(|_| MtxError::at(&name, 1, "header line is not valid UTF-8"))?;
    parse_header_line(&name, line)
}

/// Reads a whole `.mtx` file into CSR; see the module docs for the conventions.
pub fn read_mtx(path: &Path) -> Result<CsrMatrix, MtxError> {
    let name = path.display().to_string();
    let bytes = fs::read(path).map_err(|e| MtxError::whole(&name, format!("cannot read: {e}")))?;
    let text = match std::str::from_utf8(&bytes) {
        Ok(t) => t,
        Err(e) => {
            let line = 1 + bytes[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            return Err(MtxError::at(&name, line, "invalid UTF-8"));
        }
    };
    parse_mtx(&name, text)
}

/// Parses Matrix Market text; `name` is only used in error messages.
pub fn parse_mtx(name: &str, text: &str) -> Result<CsrMatrix, MtxError> {
    let mut lines = text.split('\n').enumerate().map(|(i, l)| (i + 1, l));
    let header = match lines.next() {
        Some((_, l)) if !text.is_empty() => parse_header_line(name, l)?,
        _ => return Err(empty_file(name)),
    };
    if header.field == Field::Complex {
        return Err(MtxError::at(
            name,
            1,
            "matrix is complex, but Surge's computations are real; complex matrices are not supported",
        ));
    }

    let mut f = [""; 4];
    let (size_ln, n) = loop {
        match lines.next() {
            None => {
                return Err(MtxError::at(
                    name,
                    last_line(text),
                    "missing size line after the header",
                ));
            }
            Some((ln, l)) => {
                let n = split_fields(l, &mut f);
                if n > 0 {
                    break (ln, n);
                }
            }
        }
    };
    let want = match header.format {
        Format::Coordinate => 3,
        Format::Array => 2,
    };
    if n != want {
        let what = match header.format {
            Format::Coordinate => "rows columns entries",
            Format::Array => "rows columns",
        };
        return Err(MtxError::at(
            name,
            size_ln,
            format!("size line: expected {want} fields ({what}), found {n}"),
        ));
    }
    let size = |s: &str, what: &str| {
        s.parse::<usize>()
            .map_err(|_| MtxError::at(name, size_ln, format!("size line: invalid {what} '{s}'")))
    };
    let rows = size(f[0], "row count")?;
    let cols = size(f[1], "column count")?;
    check_cols(cols).map_err(|m| MtxError::at(name, size_ln, m))?;
    if header.symmetry != Symmetry::General && rows != cols {
        return Err(MtxError::at(
            name,
            size_ln,
            format!(
                "a {} matrix must be square, but the size line declares {rows}x{cols}",
                symmetry_word(header.symmetry)
            ),
        ));
    }

    let mut p = EntryParser {
        name,
        header,
        rows,
        cols,
        entries: Vec::new(),
    };
    match header.format {
        Format::Coordinate => {
            let declared = size(f[2], "entry count")?;
            p.coordinate(lines, text, size_ln, declared)?;
        }
        Format::Array => p.array(lines, text, size_ln)?,
    }
    build_csr(name, rows, cols, p.entries)
}

/// Writes `coordinate real general` with shortest round-trip value formatting, so
/// `read_mtx(write_mtx(m)) == m` exactly.
pub fn write_mtx(path: &Path, m: &CsrMatrix) -> Result<(), MtxError> {
    let name = path.display().to_string();
    let nnz = m.values.len();
    if m.row_offsets.len() != m.rows + 1
        || m.col_indices.len() != nnz
        || m.row_offsets.first() != Some(&0)
        || m.row_offsets.last() != Some(&(nnz as u64))
        || m.row_offsets.windows(2).any(|w| w[0] > w[1])
    {
        return Err(MtxError::whole(
            &name,
            "refusing to write an inconsistent CSR matrix",
        ));
    }
    for r in 0..m.rows {
        for k in m.row_offsets[r] as usize..m.row_offsets[r + 1] as usize {
            let (c, v) = (m.col_indices[k] as usize, m.values[k]);
            if c >= m.cols {
                return Err(MtxError::whole(
                    &name,
                    format!("column index {c} out of range in row {r}"),
                ));
            }
            if !v.is_finite() {
                return Err(MtxError::whole(
                    &name,
                    format!("value {v} at ({r}, {c}) is not finite"),
                ));
            }
        }
    }
    let io = |e: std::io::Error| MtxError::whole(&name, format!("cannot write: {e}"));
    let file = fs::File::create(path).map_err(io)?;
    let mut w = BufWriter::new(file);
    writeln!(w, "%%MatrixMarket matrix coordinate real general").map_err(io)?;
    writeln!(w, "{} {} {}", m.rows, m.cols, nnz).map_err(io)?;
    for r in 0..m.rows {
        for k in m.row_offsets[r] as usize..m.row_offsets[r + 1] as usize {
            let v = m.values[k];
            let a = v.abs();
            // Both `{}` and `{:e}` print the shortest string that parses back exactly;
            // `{:e}` avoids 300-digit output for huge/tiny magnitudes.
            if v == 0.0 || (1e-5..1e16).contains(&a) {
                writeln!(w, "{} {} {v}", r + 1, m.col_indices[k] as u64 + 1).map_err(io)?;
            } else {
                writeln!(w, "{} {} {v:e}", r + 1, m.col_indices[k] as u64 + 1).map_err(io)?;
            }
        }
    }
    w.flush().map_err(io)
}

fn empty_file(name: &str) -> MtxError {
    MtxError::at(
        name,
        1,
        "empty file: expected a '%%MatrixMarket matrix ...' header",
    )
}

fn symmetry_word(s: Symmetry) -> &'static str {
    match s {
        Symmetry::General => "general",
        Symmetry::Symmetric => "symmetric",
        Symmetry::SkewSymmetric => "skew-symmetric",
        Symmetry::Hermitian => "hermitian",
    }
}

fn parse_header_line(name: &str, line: &str) -> Result<Header, MtxError> {
    let line = line.strip_prefix('\u{feff}').unwrap_or(line);
    let mut words = line.split_ascii_whitespace();
    if !words
        .next()
        .is_some_and(|b| b.eq_ignore_ascii_case("%%MatrixMarket"))
    {
        return Err(MtxError::at(
            name,
            1,
            "missing header: the first line must be '%%MatrixMarket matrix <format> <field> <symmetry>'",
        ));
    }
    let w: Vec<&str> = words.collect();
    if w.len() != 4 {
        return Err(MtxError::at(
            name,
            1,
            format!(
                "garbled header: expected '%%MatrixMarket matrix <format> <field> <symmetry>', found {} word(s) after the banner",
                w.len()
            ),
        ));
    }
    let lower: Vec<String> = w.iter().map(|s| s.to_ascii_lowercase()).collect();
    if lower[0] != "matrix" {
        return Err(MtxError::at(
            name,
            1,
            format!("unsupported object '{}' (expected 'matrix')", w[0]),
        ));
    }
    let format = match lower[1].as_str() {
        "coordinate" => Format::Coordinate,
        "array" => Format::Array,
        _ => {
            return Err(MtxError::at(
                name,
                1,
                format!("unknown format '{}' (expected coordinate or array)", w[1]),
            ));
        }
    };
    let field = match lower[2].as_str() {
        "real" | "double" => Field::Real,
        "integer" => Field::Integer,
        "pattern" => Field::Pattern,
        "complex" => Field::Complex,
        _ => {
            return Err(MtxError::at(
                name,
                1,
                format!(
                    "unknown field '{}' (expected real, double, integer, pattern or complex)",
                    w[2]
                ),
            ));
        }
    };
    let symmetry = match lower[3].as_str() {
        "general" => Symmetry::General,
        "symmetric" => Symmetry::Symmetric,
        "skew-symmetric" => Symmetry::SkewSymmetric,
        "hermitian" => Symmetry::Hermitian,
        _ => {
            return Err(MtxError::at(
                name,
                1,
                format!(
                    "unknown symmetry '{}' (expected general, symmetric, skew-symmetric or hermitian)",
                    w[3]
                ),
            ));
        }
    };
    if field == Field::Pattern && format == Format::Array {
        return Err(MtxError::at(
            name,
            1,
            "field 'pattern' is not allowed with format 'array'",
        ));
    }
    if field == Field::Pattern && matches!(symmetry, Symmetry::SkewSymmetric | Symmetry::Hermitian)
    {
        return Err(MtxError::at(
            name,
            1,
            format!("field 'pattern' cannot be {}", symmetry_word(symmetry)),
        ));
    }
    Ok(Header {
        format,
        field,
        symmetry,
    })
}

/// Stores up to 4 whitespace-separated fields and returns how many there are in total;
/// 0 for blank and `%` comment lines. Hand-rolled because it is the parser's hot loop.
fn split_fields<'a>(line: &'a str, out: &mut [&'a str; 4]) -> usize {
    let b = line.as_bytes();
    let is_ws = |c: u8| matches!(c, b' ' | b'\t' | b'\r' | b'\x0c');
    let (mut i, mut n) = (0, 0);
    loop {
        while i < b.len() && is_ws(b[i]) {
            i += 1;
        }
        if i == b.len() {
            return n;
        }
        if n == 0 && b[i] == b'%' {
            return 0;
        }
        let start = i;
        while i < b.len() && !is_ws(b[i]) {
            i += 1;
        }
        if n < out.len() {
            // Split points are ASCII bytes, hence char boundaries.
            out[n] = &line[start..i];
        }
        n += 1;
    }
}

/// Fast path for plain digit strings (the overwhelmingly common case); anything else
/// (signs, overflow, garbage) returns None and goes through `str::parse` for exact
/// semantics and error reporting.
fn parse_digits(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.is_empty() || b.len() > 19 {
        return None;
    }
    let mut v = 0u64;
    for &c in b {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + d as u64;
    }
    Some(v)
}

/// 1-based number of the last line (a trailing newline does not start a new line).
fn last_line(text: &str) -> usize {
    let newlines = text.bytes().filter(|&b| b == b'\n').count();
    if text.ends_with('\n') {
        newlines.max(1)
    } else {
        newlines + 1
    }
}

struct EntryParser<'a> {
    name: &'a str,
    header: Header,
    rows: usize,
    cols: usize,
    /// 0-based (row, col, value), expanded for symmetry.
    entries: Vec<(usize, u32, f64)>,
}

impl EntryParser<'_> {
    fn coordinate<'t>(
        &mut self,
        lines: impl Iterator<Item = (usize, &'t str)>,
        text: &str,
        size_ln: usize,
        declared: usize,
    ) -> Result<(), MtxError> {
        let name = self.name;
        let want = if self.header.field == Field::Pattern {
            2
        } else {
            3
        };
        let mirrored = self.header.symmetry != Symmetry::General;
        // Each entry line needs at least 4 bytes, which bounds a bogus declared count.
        let cap = declared.min(text.len() / 4 + 1);
        self.entries
            .reserve(if mirrored { cap.saturating_mul(2) } else { cap });
        let mut found = 0usize;
        let mut f = [""; 4];
        for (ln, line) in lines {
            let n = split_fields(line, &mut f);
            if n == 0 {
                continue;
            }
            if found == declared {
                return Err(MtxError::at(
                    name,
                    ln,
                    format!(
                        "more entries than the {declared} declared on the size line (line {size_ln})"
                    ),
                ));
            }
            if n != want {
                return Err(MtxError::at(
                    name,
                    ln,
                    format!("expected {want} fields, found {n}"),
                ));
            }
            let r = parse_index(name, ln, f[0], "row", self.rows)?;
            let c = parse_index(name, ln, f[1], "column", self.cols)?;
            let v = self.value(ln, f[2])?;
            self.push(ln, r, c, v)?;
            found += 1;
        }
        if found < declared {
            return Err(MtxError::at(
                name,
                last_line(text),
                format!(
                    "found {found} entries, but the size line (line {size_ln}) declares {declared}"
                ),
            ));
        }
        Ok(())
    }

    /// Column-major values; non-general files list the lower triangle column by column
    /// (skew-symmetric without the diagonal). Zeros are dropped.
    fn array<'t>(
        &mut self,
        lines: impl Iterator<Item = (usize, &'t str)>,
        text: &str,
        size_ln: usize,
    ) -> Result<(), MtxError> {
        let name = self.name;
        let (rows, cols, sym) = (self.rows, self.cols, self.header.symmetry);
        let declared = match sym {
            Symmetry::General => rows.checked_mul(cols),
            Symmetry::Symmetric | Symmetry::Hermitian => rows.checked_mul(rows + 1).map(|x| x / 2),
            Symmetry::SkewSymmetric => rows.checked_mul(rows.saturating_sub(1)).map(|x| x / 2),
        }
        .ok_or_else(|| {
            MtxError::at(name, size_ln, format!("array size {rows}x{cols} overflows"))
        })?;
        let first_row = |j: usize| match sym {
            Symmetry::General => 0,
            Symmetry::Symmetric | Symmetry::Hermitian => j,
            Symmetry::SkewSymmetric => j + 1,
        };
        let (mut i, mut j) = (first_row(0), 0usize);
        let mut found = 0usize;
        let mut f = [""; 4];
        for (ln, line) in lines {
            let n = split_fields(line, &mut f);
            if n == 0 {
                continue;
            }
            if found == declared {
                return Err(MtxError::at(
                    name,
                    ln,
                    format!(
                        "more values than the {declared} implied by the size line (line {size_ln})"
                    ),
                ));
            }
            if n != 1 {
                return Err(MtxError::at(
                    name,
                    ln,
                    format!("expected 1 field, found {n}"),
                ));
            }
            let v = self.value(ln, f[0])?;
            if v != 0.0 {
                self.push(ln, i, j, v)?;
            }
            found += 1;
            i += 1;
            if i >= rows {
                j += 1;
                i = first_row(j);
            }
        }
        if found < declared {
            return Err(MtxError::at(
                name,
                last_line(text),
                format!(
                    "found {found} values, but the size line (line {size_ln}) implies {declared}"
                ),
            ));
        }
        Ok(())
    }

    fn value(&self, ln: usize, s: &str) -> Result<f64, MtxError> {
        let name = self.name;
        match self.header.field {
            Field::Pattern => Ok(1.0),
            Field::Integer => match parse_digits(s) {
                Some(v) if v <= i64::MAX as u64 => Ok(v as f64),
                _ => s
                    .parse::<i64>()
                    .map(|v| v as f64)
                    .map_err(|_| MtxError::at(name, ln, format!("invalid integer value '{s}'"))),
            },
            Field::Real | Field::Complex => {
                let v = s
                    .parse::<f64>()
                    .map_err(|_| MtxError::at(name, ln, format!("invalid real value '{s}'")))?;
                if v.is_finite() {
                    Ok(v)
                } else {
                    Err(MtxError::at(
                        name,
                        ln,
                        format!("value '{s}' is not a finite number (NaN/inf are not allowed)"),
                    ))
                }
            }
        }
    }

    /// Adds a 0-based entry, mirroring it per the symmetry.
    fn push(&mut self, ln: usize, r: usize, c: usize, v: f64) -> Result<(), MtxError> {
        let sym = self.header.symmetry;
        if sym != Symmetry::General {
            if r < c {
                return Err(MtxError::at(
                    self.name,
                    ln,
                    format!(
                        "entry ({}, {}) is above the diagonal; a {} file must store only the lower triangle",
                        r + 1,
                        c + 1,
                        symmetry_word(sym)
                    ),
                ));
            }
            if r == c && sym == Symmetry::SkewSymmetric {
                return Err(MtxError::at(
                    self.name,
                    ln,
                    format!(
                        "diagonal entry ({}, {}) in a skew-symmetric matrix (its diagonal is zero and must not be stored)",
                        r + 1,
                        c + 1
                    ),
                ));
            }
        }
        // c < cols <= u32::MAX (checked on the size line); mirrored r < rows == cols.
        self.entries.push((r, c as u32, v));
        if r != c {
            match sym {
                Symmetry::General => {}
                Symmetry::Symmetric | Symmetry::Hermitian => self.entries.push((c, r as u32, v)),
                Symmetry::SkewSymmetric => self.entries.push((c, r as u32, -v)),
            }
        }
        Ok(())
    }
}

/// Parses a 1-based index and returns it 0-based.
fn parse_index(
    name: &str,
    ln: usize,
    s: &str,
    what: &str,
    bound: usize,
) -> Result<usize, MtxError> {
    let i = match parse_digits(s) {
        Some(v) if v <= usize::MAX as u64 => v as usize,
        _ => s
            .parse::<usize>()
            .map_err(|_| MtxError::at(name, ln, format!("invalid {what} index '{s}'")))?,
    };
    if i == 0 {
        return Err(MtxError::at(
            name,
            ln,
            format!("{what} index 0 is invalid (Matrix Market indices are 1-based)"),
        ));
    }
    if i > bound {
        return Err(MtxError::at(
            name,
            ln,
            format!("{what} index {i} out of range (matrix has {bound} {what}s)"),
        ));
    }
    Ok(i - 1)
}

/// Counting sort by row (stable, so duplicates are summed in input order), then a
/// per-row sort by column with duplicate merging.
fn build_csr(
    name: &str,
    rows: usize,
    cols: usize,
    entries: Vec<(usize, u32, f64)>,
) -> Result<CsrMatrix, MtxError> {
    let too_big = |_| MtxError::whole(name, format!("cannot allocate row offsets for {rows} rows"));
    let mut start: Vec<usize> = Vec::new();
    start.try_reserve_exact(rows + 1).map_err(too_big)?;
    start.resize(rows + 1, 0);
    let mut row_offsets: Vec<u64> = Vec::new();
    row_offsets.try_reserve_exact(rows + 1).map_err(too_big)?;

    for &(r, _, _) in &entries {
        start[r + 1] += 1;
    }
    for r in 0..rows {
        start[r + 1] += start[r];
    }
    let n = entries.len();
    let mut col_indices = vec![0u32; n];
    let mut values = vec![0f64; n];
    {
        let mut next = start[..rows].to_vec();
        for (r, c, v) in entries {
            let p = next[r];
            col_indices[p] = c;
            values[p] = v;
            next[r] = p + 1;
        }
    }

    row_offsets.push(0);
    let mut w = 0usize;
    let mut scratch: Vec<(u32, f64)> = Vec::new();
    for r in 0..rows {
        let (s, e) = (start[r], start[r + 1]);
        if col_indices[s..e].windows(2).all(|p| p[0] < p[1]) {
            if w != s {
                col_indices.copy_within(s..e, w);
                values.copy_within(s..e, w);
            }
            w += e - s;
        } else {
            scratch.clear();
            scratch.extend(
                col_indices[s..e]
                    .iter()
                    .copied()
                    .zip(values[s..e].iter().copied()),
            );
            scratch.sort_by_key(|&(c, _)| c);
            let row_w = w;
            for &(c, v) in &scratch {
                if w > row_w && col_indices[w - 1] == c {
                    values[w - 1] += v;
                } else {
                    col_indices[w] = c;
                    values[w] = v;
                    w += 1;
                }
            }
        }
        row_offsets.push(w as u64);
    }
    col_indices.truncate(w);
    values.truncate(w);
    Ok(CsrMatrix {
        rows,
        cols,
        row_offsets,
        col_indices,
        values,
    })
}
