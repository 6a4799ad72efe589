//! The SELL-C-σ storage layout's policy values (`layout1 = sell_<C>_<σ>`, Kreutzer et al. 2014):
//! rows in chunks of `C`, sorted by length within windows of `σ` rows. `C` is a multiple of the
//! `f64` SIMD width of AVX2 (4) and AVX-512 (8); `σ = 1` keeps the row order. The layout is one
//! value of `layout1` rather than two parameters, so that the ids of the other layouts do not
//! carry a chunk and a window they do not use.

use std::fmt;

/// Rows per chunk (`C`): what the CPU emitter generates a kernel for (`sell<C>`).
pub const SELL_CHUNKS: [usize; 2] = [8, 16];
/// Sorting windows (`σ`).
pub const SELL_SIGMAS: [usize; 3] = [1, 256, 4096];

/// One SELL-C-σ shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SellShape {
    /// Rows per chunk, one of [`SELL_CHUNKS`].
    pub chunk: usize,
    /// Rows per sorting window.
    pub sigma: usize,
}

impl SellShape {
    /// Every shape of the variant space, in the order of `layout1`'s values.
    pub fn all() -> Vec<SellShape> {
        SELL_CHUNKS
            .iter()
            .flat_map(|&chunk| {
                SELL_SIGMAS
                    .iter()
                    .map(move |&sigma| SellShape { chunk, sigma })
            })
            .collect()
    }

    /// `sell_8_256` as a `layout1` value: a shape of the space, or `None`.
    pub fn parse(name: &str) -> Option<SellShape> {
        let rest = name.strip_prefix("sell_")?;
        let (c, s) = rest.split_once('_')?;
        let shape = SellShape {
            chunk: c.parse().ok()?,
            sigma: s.parse().ok()?,
        };
        SellShape::all().contains(&shape).then_some(shape)
    }
}

impl fmt::Display for SellShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sell_{}_{}", self.chunk, self.sigma)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_only_shapes_of_the_space_parse() {
        for s in SellShape::all() {
            assert_eq!(SellShape::parse(&s.to_string()), Some(s));
            assert_eq!(s.chunk % 4, 0, "a multiple of the AVX2 width");
        }
        assert_eq!(SellShape::all().len(), 6);
        assert_eq!(SellShape::parse("sell_12_1"), None);
        assert_eq!(SellShape::parse("sell_8"), None);
        assert_eq!(SellShape::parse("rows"), None);
    }
}
