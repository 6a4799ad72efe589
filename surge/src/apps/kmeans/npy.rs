//! The `.npy` format (NumPy's own, version 1.0–3.0): a 2-D C-order array of little-endian f64.

use super::data::Points;

/// Parses a `.npy` file's bytes; the message says what is unsupported or malformed.
pub fn read(b: &[u8]) -> Result<Points, String> {
    let (major, rest) = (b.get(6).copied(), &b[b.len().min(8)..]);
    let (hlen, rest) = match major {
        Some(1) if rest.len() >= 2 => (u16::from_le_bytes([rest[0], rest[1]]) as usize, &rest[2..]),
        Some(2 | 3) if rest.len() >= 4 => (
            u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize,
            &rest[4..],
        ),
        _ => return Err("a .npy file with an unknown version or a truncated header".into()),
    };
    let header = rest
        .get(..hlen)
        .and_then(|h| std::str::from_utf8(h).ok())
        .ok_or(".npy header truncated")?;
    let body = &rest[hlen..];
    let field = |key: &str| -> Option<&str> {
        let at = header.find(&format!("'{key}'"))? + key.len() + 2;
        let v = header[at..].trim_start().strip_prefix(':')?.trim_start();
        Some(v)
    };
    let descr = field("descr").ok_or(".npy header without 'descr'")?;
    if !descr.starts_with("'<f8'") {
        return Err(format!(
            ".npy of {}: only little-endian f64 ('<f8') is read",
            descr.split(',').next().unwrap_or(descr)
        ));
    }
    if field("fortran_order").is_some_and(|v| v.starts_with("True")) {
        return Err(".npy in Fortran order: save it C-ordered (np.ascontiguousarray)".into());
    }
    let shape = field("shape").ok_or(".npy header without 'shape'")?;
    let inner = shape
        .strip_prefix('(')
        .and_then(|s| s.split(')').next())
        .ok_or(".npy shape is not a tuple")?;
    let dims: Vec<usize> = inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse()
                .map_err(|_| format!(".npy shape `{inner}` is not numbers"))
        })
        .collect::<Result<_, _>>()?;
    let [n, d] = dims[..] else {
        return Err(format!(
            ".npy of shape ({inner}): points need a 2-D array (n, d)"
        ));
    };
    if body.len() != n * d * 8 {
        return Err(format!(
            ".npy of shape ({n}, {d}) holds {} bytes of data, not {}",
            body.len(),
            n * d * 8
        ));
    }
    let data: Vec<f64> = body
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    if let Some(i) = data.iter().position(|v| !v.is_finite()) {
        return Err(format!(
            "point {} holds a non-finite value {}",
            i / d.max(1),
            data[i]
        ));
    }
    Points::new(d, data).map_err(|e| e.to_string())
}
