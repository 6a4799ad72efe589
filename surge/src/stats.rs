//! Summary statistics of measured times and rates, shared by `bench` and `tune`.
//!
//! Every median here sorts with [`f64::total_cmp`], so a NaN never panics and sorts after
//! every number (a negative NaN before them), and the median of an even count is the mean of
//! the two middle values.

/// The median of `v` (NaN when `v` is empty); `v` is left as it was.
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    median_in_place(&mut s)
}

/// The median of `v` (NaN when `v` is empty), sorting `v` in place to find it.
pub fn median_in_place(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    median_of_sorted(v)
}

/// The median of `v`, already sorted (by [`f64::total_cmp`]); NaN when `v` is empty.
pub fn median_of_sorted(v: &[f64]) -> f64 {
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The `q` quantile of `v` (0: the least; the element at `floor(q · len)` in sorted order; NaN
/// when `v` is empty); `v` is left as it was.
pub fn quantile(v: &[f64], q: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => f64::NAN,
        n => s[((q * n as f64) as usize).min(n - 1)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_counts_take_the_middle_value() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[5.0]), 5.0);
        assert_eq!(median_of_sorted(&[1.0, 2.0, 9.0]), 2.0);
    }

    #[test]
    fn even_counts_average_the_two_middle_values() {
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median_of_sorted(&[1.0, 2.0]), 1.5);
    }

    #[test]
    fn empty_is_nan() {
        assert!(median(&[]).is_nan());
        assert!(median_in_place(&mut []).is_nan());
        assert!(median_of_sorted(&[]).is_nan());
    }

    #[test]
    fn nan_sorts_last_and_does_not_panic() {
        // total_cmp: a (positive) NaN sorts after every number.
        assert_eq!(median(&[f64::NAN, 1.0, 2.0]), 2.0);
        assert!(median(&[f64::NAN, f64::NAN, 1.0]).is_nan());
        // Even count with the NaN in the middle pair: the mean is NaN.
        assert!(median(&[f64::NAN, 1.0]).is_nan());
    }

    #[test]
    fn in_place_sorts_and_plain_leaves_the_input() {
        let v = [3.0, 1.0, 2.0];
        assert_eq!(median(&v), 2.0);
        assert_eq!(v, [3.0, 1.0, 2.0]);
        let mut w = [3.0, 1.0, 2.0];
        assert_eq!(median_in_place(&mut w), 2.0);
        assert_eq!(w, [1.0, 2.0, 3.0]);
    }
}
