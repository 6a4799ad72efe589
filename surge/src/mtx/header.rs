//! The `%%MatrixMarket` banner line.

use super::{Field, Format, Header, MtxError, Symmetry};

pub(super) fn empty_file(name: &str) -> MtxError {
    MtxError::at(
        name,
        1,
        "empty file: expected a '%%MatrixMarket matrix ...' header",
    )
}

pub(super) fn symmetry_word(s: Symmetry) -> &'static str {
    match s {
        Symmetry::General => "general",
        Symmetry::Symmetric => "symmetric",
        Symmetry::SkewSymmetric => "skew-symmetric",
        Symmetry::Hermitian => "hermitian",
    }
}

pub(super) fn parse_header_line(name: &str, line: &str) -> Result<Header, MtxError> {
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
