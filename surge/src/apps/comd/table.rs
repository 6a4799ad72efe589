//! CoMD's tabulated functions and their interpolation (CoMD 1.1 `eam.c`,
//! `initInterpolationObject` and `interpolate`): not splines, but a quadratic through three
//! table points for the value and a linear blend of two central differences for the
//! derivative. The arithmetic is CoMD's, operation for operation, so that energies agree with
//! CoMD's printed digits.

/// A function tabulated on the uniform grid `x_k = x0 + k·dx`, `k = 0..n`.
///
/// As CoMD does, the table is padded with one copy of its first value below it and copies of
/// its last value above it (`t₋₁ = t₀`, `t_n = t_{n+1} = t_{n−1}`). CoMD reads one entry past
/// that padding when an argument lies beyond the table's end; here that entry is one more copy
/// of the last value instead of whatever memory follows.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// `t₋₁, t₀, …, t_{n−1}, t_n, t_{n+1}, t_{n+2}`.
    padded: Vec<f64>,
    n: usize,
    x0: f64,
    inv_dx: f64,
}

impl Table {
    /// A table of `values` at `x0, x0 + dx, …`. `values` must not be empty.
    pub fn new(values: &[f64], x0: f64, dx: f64) -> Table {
        assert!(
            !values.is_empty(),
            "an interpolation table needs at least one value"
        );
        let (first, last) = (values[0], values[values.len() - 1]);
        let mut padded = Vec::with_capacity(values.len() + 4);
        padded.push(first);
        padded.extend_from_slice(values);
        padded.extend_from_slice(&[last, last, last]);
        Table {
            padded,
            n: values.len(),
            x0,
            inv_dx: 1.0 / dx,
        }
    }

    /// The tabulated values `t₀ … t_{n−1}` (without the padding).
    pub fn values(&self) -> &[f64] {
        &self.padded[1..=self.n]
    }

    /// The number of tabulated values.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether the table has no values (never: [`Table::new`] refuses that).
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The padded values `t₋₁, t₀, …, t_{n+2}` that [`Table::eval`] reads (`t_k` at `k + 1`).
    pub fn padded(&self) -> &[f64] {
        &self.padded
    }

    /// `1/dx`, as CoMD stores it.
    pub fn inv_dx(&self) -> f64 {
        self.inv_dx
    }

    /// The grid's origin (0 for CoMD's tables).
    pub fn x0(&self) -> f64 {
        self.x0
    }

    /// The grid spacing, as CoMD recovers it: `1 / (1 / dx)`.
    pub fn dx(&self) -> f64 {
        1.0 / self.inv_dx
    }

    /// The interpolated value `f(x)` and derivative `f′(x)`.
    ///
    /// With `s = (x − x0)/dx` (x clamped below at x0), `i = ⌊s⌋` and `p = s − ⌊s⌋`:
    /// `f = t_i + ½p(t_{i+1} − t_{i−1} + p(t_{i+1} + t_{i−1} − 2t_i))` and
    /// `f′ = ½(g₁ + p(g₂ − g₁))/dx` with `g₁ = t_{i+1} − t_{i−1}`, `g₂ = t_{i+2} − t_i`.
    /// Beyond the table (`i > n`) CoMD's quirk is kept: `i = n` and `s = n·dx`.
    pub fn eval(&self, x: f64) -> (f64, f64) {
        let (i, p) = self.locate(x);
        let w = &self.padded[i..i + 4];
        let (tm, t0, t1, t2) = (w[0], w[1], w[2], w[3]);
        let g1 = t1 - tm;
        let g2 = t2 - t0;
        let f = t0 + 0.5 * p * (g1 + p * (t1 + tm - 2.0 * t0));
        let df = 0.5 * (g1 + p * (g2 - g1)) * self.inv_dx;
        (f, df)
    }

    /// The interval index `i` and the fractional position `p ∈ [0, 1)` of `x`, as CoMD
    /// computes them.
    fn locate(&self, x: f64) -> (usize, f64) {
        let x = if x < self.x0 { self.x0 } else { x };
        let mut s = (x - self.x0) * self.inv_dx;
        let mut i = s.floor();
        if i > self.n as f64 {
            i = self.n as f64;
            s = self.n as f64 / self.inv_dx;
        }
        // A NaN argument gives i = 0 and a NaN result.
        (i as usize, s - s.floor())
    }
}
