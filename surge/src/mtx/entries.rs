//! Entry lines: the line and field scanner (the parser's hot loop, with its all-digit fast
//! paths) and the entry parser that validates indices and values and expands symmetric storage.

use super::header::symmetry_word;
use super::{Field, Header, MtxError, Symmetry};

/// Cursor over the lines after the header. Line and field splitting are fused into one
/// byte scan because this is the parser's hot loop.
pub(super) struct Lines<'t> {
    pub(super) text: &'t str,
    /// Byte offset of the next unread line (may exceed `text.len()` once exhausted).
    pub(super) pos: usize,
    /// 1-based number of the last line read; after exhaustion, the file's last line.
    pub(super) line: usize,
}

impl<'t> Lines<'t> {
    /// Skips blank and `%` comment lines; for the next data line stores up to 4
    /// whitespace-separated fields in `out` and returns (line number, total field count).
    pub(super) fn next_data(&mut self, out: &mut [&'t str; 4]) -> Option<(usize, usize)> {
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

pub(super) struct EntryParser<'a> {
    pub(super) name: &'a str,
    pub(super) header: Header,
    pub(super) rows: usize,
    pub(super) cols: usize,
    /// 0-based (row, col, value), expanded for symmetry.
    pub(super) entries: Vec<(usize, u32, f64)>,
}

impl EntryParser<'_> {
    pub(super) fn coordinate(
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
    pub(super) fn array(&mut self, lines: &mut Lines<'_>, size_ln: usize) -> Result<(), MtxError> {
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
