//! Reading: the banner, the size line, then the entries into CSR.

use super::CsrMatrix;
use super::csr::{build_csr, check_cols};
use super::entries::{EntryParser, Lines};
use super::header::{empty_file, parse_header_line, symmetry_word};
use super::{Field, Format, Header, MtxError, Symmetry};
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::Path;

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
