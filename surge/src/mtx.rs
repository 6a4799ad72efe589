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
    parse_header_line(&name, &String::from_utf8_lossy(&first))
}

/// Reads a whole `.mtx` file into CSR; see the module docs for the conventions.
pub fn read_mtx(path: &Path) -> Result<CsrMatrix, MtxError> {
    let name = path.display().to_string();
    let bytes = fs::read(path).map_err(|e| MtxError::whole(&name, format!("cannot read: {e}")))?;
    // Lossy (copy-free when valid): stray Latin-1 in comments is harmless, and a bad
    // byte in a data line still fails as an unparsable field.
    parse_mtx(&name, &String::from_utf8_lossy(&bytes))
}

/// Parses Matrix Market text; `name` is only used in error messages.
pub fn parse_mtx(name: &str, text: &str) -> Result<CsrMatrix, MtxError> {
    if text.is_empty() {
        return Err(empty_file(name));
    }
    let header_end = text.find('\n').unwrap_or(text.len());
    let header = parse_header_line(name, &text[..header_end])?;
    if header.field == Field::Complex {
        return Err(MtxError::at(
            name,
            1,
            "matrix is complex, but Surge's computations are real; complex matrices are not supported",
        ));
    }

    let mut lines = Lines {
        text,
        pos: header_end + 1,
        line: 1,
    };
    let mut f = [""; 4];
    let Some((size_ln, n)) = lines.next_data(&mut f) else {
        return Err(MtxError::at(
            name,
            lines.line,
            "missing size line after the header",
        ));
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
            p.coordinate(&mut lines, size_ln, declared)?;
        }
        Format::Array => p.array(&mut lines, size_ln)?,
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

/// Cursor over the lines after the header. Line and field splitting are fused into one
/// byte scan because this is the parser's hot loop.
struct Lines<'t> {
    text: &'t str,
    /// Byte offset of the next unread line (may exceed `text.len()` once exhausted).
    pos: usize,
    /// 1-based number of the last line read; after exhaustion, the file's last line.
    line: usize,
}

impl<'t> Lines<'t> {
    /// Skips blank and `%` comment lines; for the next data line stores up to 4
    /// whitespace-separated fields in `out` and returns (line number, total field count).
    fn next_data(&mut self, out: &mut [&'t str; 4]) -> Option<(usize, usize)> {
        let (text, b) = (self.text, self.text.as_bytes());
        let blank = |c: u8| matches!(c, b' ' | b'\t' | b'\r' | b'\x0c');
        while self.pos < b.len() {
            self.line += 1;
            let (mut i, mut n) = (self.pos, 0);
            loop {
                while i < b.len() && blank(b[i]) {
                    i += 1;
                }
                if i == b.len() || b[i] == b'\n' {
                    break;
                }
                if n == 0 && b[i] == b'%' {
                    i = text[i..].find('\n').map_or(b.len(), |k| i + k);
                    break;
                }
                let start = i;
                while i < b.len() && !blank(b[i]) && b[i] != b'\n' {
                    i += 1;
                }
                if n < out.len() {
                    // Split points are ASCII bytes, hence char boundaries.
                    out[n] = &text[start..i];
                }
                n += 1;
            }
            self.pos = i + 1;
            if n > 0 {
                return Some((self.line, n));
            }
        }
        None
    }

    /// Single-pass fast path for the usual entry line `<digits> <digits>[ <value>]`
    /// (then optional blanks/CR and a newline): returns 1-based (row, col, value token).
    /// Any other shape returns None without consuming anything; the caller then rereads
    /// the line with `next_data`, which handles it exactly and reports errors.
    fn fast_entry(&mut self, with_value: bool) -> Option<(u64, u64, &'t str)> {
        let b = self.text.as_bytes();
        let is_blank = |c: u8| c == b' ' || c == b'\t';
        let mut i = self.pos;
        let row = scan_digits(b, &mut i)?;
        let sep = i;
        while i < b.len() && is_blank(b[i]) {
            i += 1;
        }
        let col = if i > sep {
            scan_digits(b, &mut i)?
        } else {
            return None;
        };
        let mut value = "";
        if with_value {
            let sep = i;
            while i < b.len() && is_blank(b[i]) {
                i += 1;
            }
            let start = i;
            while i < b.len() && !matches!(b[i], b' ' | b'\t' | b'\r' | b'\n' | b'\x0c') {
                i += 1;
            }
            if sep == start || start == i {
                return None;
            }
            value = &self.text[start..i];
        }
        while i < b.len() && (is_blank(b[i]) || b[i] == b'\r') {
            i += 1;
        }
        if i < b.len() {
            if b[i] != b'\n' {
                return None;
            }
            i += 1;
        }
        self.pos = i;
        self.line += 1;
        Some((row, col, value))
    }
}

/// Scans up to 18 ASCII digits at `b[*i..]` (18 cannot overflow u64). None if there
/// are no digits or more than 18, so callers fall back to `str::parse`.
fn scan_digits(b: &[u8], i: &mut usize) -> Option<u64> {
    let start = *i;
    let mut v = 0u64;
    while let Some(&c) = b.get(*i) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        v = v.wrapping_mul(10).wrapping_add(d as u64);
        *i += 1;
    }
    (*i > start && *i - start <= 18).then_some(v)
}

/// Fast path for the overwhelmingly common all-digit token; anything else (signs,
/// huge numbers, garbage) returns None and goes through `str::parse`.
fn parse_digits(s: &str) -> Option<u64> {
    let mut i = 0;
    let v = scan_digits(s.as_bytes(), &mut i)?;
    (i == s.len()).then_some(v)
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
    fn coordinate(
        &mut self,
        lines: &mut Lines<'_>,
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
        let cap = declared.min(lines.text.len() / 4 + 1);
        self.entries
            .reserve(if mirrored { cap.saturating_mul(2) } else { cap });
        let too_many = |ln: usize| {
            MtxError::at(
                name,
                ln,
                format!(
                    "more entries than the {declared} declared on the size line (line {size_ln})"
                ),
            )
        };
        let mut found = 0usize;
        let mut f = [""; 4];
        loop {
            let (ln, r, c, value) = match lines.fast_entry(want == 3) {
                Some((r, c, value)) => (lines.line, r, c, value),
                None => match lines.next_data(&mut f) {
                    None => break,
                    Some((ln, n)) => {
                        if found == declared {
                            return Err(too_many(ln));
                        }
                        if n != want {
                            return Err(MtxError::at(
                                name,
                                ln,
                                format!("expected {want} fields, found {n}"),
                            ));
                        }
                        let r = parse_u64(name, ln, f[0], "row index")?;
                        let c = parse_u64(name, ln, f[1], "column index")?;
                        (ln, r, c, f[2])
                    }
                },
            };
            if found == declared {
                return Err(too_many(ln));
            }
            let r = check_index(name, ln, r, "row", self.rows)?;
            let c = check_index(name, ln, c, "column", self.cols)?;
            let v = self.value(ln, value)?;
            self.push(ln, r, c, v)?;
            found += 1;
        }
        if found < declared {
            return Err(MtxError::at(
                name,
                lines.line,
                format!(
                    "found {found} entries, but the size line (line {size_ln}) declares {declared}"
                ),
            ));
        }
        Ok(())
    }

    /// Column-major values; non-general files list the lower triangle column by column
    /// (skew-symmetric without the diagonal). Zeros are dropped.
    fn array(&mut self, lines: &mut Lines<'_>, size_ln: usize) -> Result<(), MtxError> {
        let name = self.name;
        let (rows, cols, sym) = (self.rows, self.cols, self.header.symmetry);
        let declared = match sym {
            Symmetry::General => rows.checked_mul(cols),
            Symmetry::Symmetric | Symmetry::Hermitian => rows
                .checked_add(1)
                .and_then(|r1| rows.checked_mul(r1))
                .map(|x| x / 2),
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
        while let Some((ln, n)) = lines.next_data(&mut f) {
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
                lines.line,
                format!(
                    "found {found} values, but the size line (line {size_ln}) implies {declared}"
                ),
            ));
        }
        Ok(())
    }

    #[inline]
    fn value(&self, ln: usize, s: &str) -> Result<f64, MtxError> {
        let field = self.header.field;
        let v = match field {
            Field::Pattern => return Ok(1.0),
            // parse_digits covers up to 18 digits, so the value fits i64 exactly.
            Field::Integer => match parse_digits(s) {
                Some(v) => Some(v as f64),
                None => s.parse::<i64>().ok().map(|v| v as f64),
            },
            Field::Real | Field::Complex => s.parse::<f64>().ok().filter(|v| v.is_finite()),
        };
        v.ok_or_else(|| value_error(self.name, ln, s, field))
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

fn parse_u64(name: &str, ln: usize, s: &str, what: &str) -> Result<u64, MtxError> {
    match parse_digits(s) {
        Some(v) => Ok(v),
        None => s
            .parse::<u64>()
            .map_err(|_| MtxError::at(name, ln, format!("invalid {what} '{s}'"))),
    }
}

/// Checks a 1-based index against its bound and returns it 0-based.
#[inline]
fn check_index(name: &str, ln: usize, i: u64, what: &str, bound: usize) -> Result<usize, MtxError> {
    if i == 0 || i > bound as u64 {
        return Err(index_error(name, ln, i, what, bound));
    }
    Ok(i as usize - 1)
}

// Error construction is kept out of line so the per-entry hot path stays small.
#[cold]
fn index_error(name: &str, ln: usize, i: u64, what: &str, bound: usize) -> MtxError {
    let message = if i == 0 {
        format!("{what} index 0 is invalid (Matrix Market indices are 1-based)")
    } else {
        format!("{what} index {i} out of range (matrix has {bound} {what}s)")
    };
    MtxError::at(name, ln, message)
}

#[cold]
fn value_error(name: &str, ln: usize, s: &str, field: Field) -> MtxError {
    let message = match field {
        Field::Integer => format!("invalid integer value '{s}'"),
        _ if s.parse::<f64>().is_ok() => {
            format!("value '{s}' is not a finite number (NaN/inf are not allowed)")
        }
        _ => format!("invalid real value '{s}'"),
    };
    MtxError::at(name, ln, message)
}

/// Counting sort by row (stable, so duplicates are summed in input order), then a
/// per-row sort by column with duplicate merging.
fn build_csr(
    name: &str,
    rows: usize,
    cols: usize,
    entries: Vec<(usize, u32, f64)>,
) -> Result<CsrMatrix, MtxError> {
    // Fail with an error rather than abort on absurd row counts from a size line.
    let too_big = || MtxError::whole(name, format!("cannot allocate row offsets for {rows} rows"));
    let len = rows.checked_add(1).ok_or_else(too_big)?;
    let mut start: Vec<usize> = Vec::new();
    start.try_reserve_exact(len).map_err(|_| too_big())?;
    start.resize(len, 0);
    let mut row_offsets: Vec<u64> = Vec::new();
    row_offsets.try_reserve_exact(len).map_err(|_| too_big())?;

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
