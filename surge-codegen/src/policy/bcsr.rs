//! The register-blocked rows layout's policy values (`layout1 = bcsr_<r>_<c>`, BCSR r×c): rows
//! in blocks of `r`, each block row's elements in `r × c` blocks of values (explicit zeros where
//! the matrix has none), one column index per block. The shapes are those the shared FE
//! matrices fill best (block fill, stored values per nonzero, of whole matrices: bcsstk16 1.20
//! at 2×2 and 1.02 at 3×3, bcsstk38 1.22 and 1.33, nasa2910 1.30 and 1.55, orani678 1.28 at 2×2;
//! 4×2 puts a block row in one AVX2 vector of `f64` at 1.4-1.5 on the first three; 4×4 and 2×4
//! filled no matrix better than 4×2 or 2×2). One value of `layout1`, as SELL's shapes are.

use std::fmt;

/// The shapes, `(r, c)`: what the CPU emitter generates a kernel for (`bcsr<r>x<c>`).
pub const BCSR_SHAPES: [(usize, usize); 3] = [(2, 2), (3, 3), (4, 2)];

/// One BCSR shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BcsrShape {
    /// Rows per block.
    pub r: usize,
    /// Columns per block.
    pub c: usize,
}

impl BcsrShape {
    /// Every shape of the variant space, in the order of `layout1`'s values.
    pub fn all() -> Vec<BcsrShape> {
        BCSR_SHAPES
            .iter()
            .map(|&(r, c)| BcsrShape { r, c })
            .collect()
    }

    /// `bcsr_3_3` as a `layout1` value: a shape of the space, or `None`.
    pub fn parse(name: &str) -> Option<BcsrShape> {
        let rest = name.strip_prefix("bcsr_")?;
        let (r, c) = rest.split_once('_')?;
        let shape = BcsrShape {
            r: r.parse().ok()?,
            c: c.parse().ok()?,
        };
        BcsrShape::all().contains(&shape).then_some(shape)
    }

    /// Its position in [`BCSR_SHAPES`] (the kernel table's index).
    pub fn index(&self) -> usize {
        BCSR_SHAPES
            .iter()
            .position(|&(r, c)| (r, c) == (self.r, self.c))
            .expect("internal: a BCSR shape outside BCSR_SHAPES")
    }

    /// Values per block.
    pub fn area(&self) -> usize {
        self.r * self.c
    }
}

impl fmt::Display for BcsrShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bcsr_{}_{}", self.r, self.c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_only_shapes_of_the_space_parse() {
        for (k, s) in BcsrShape::all().into_iter().enumerate() {
            assert_eq!(BcsrShape::parse(&s.to_string()), Some(s));
            assert_eq!(s.index(), k);
        }
        assert_eq!(BcsrShape::all().len(), 3);
        assert_eq!(BcsrShape::parse("bcsr_2_2"), Some(BcsrShape { r: 2, c: 2 }));
        assert_eq!(BcsrShape::parse("bcsr_5_5"), None);
        assert_eq!(BcsrShape::parse("bcsr_2"), None);
        assert_eq!(BcsrShape::parse("sell_8_1"), None);
    }
}
