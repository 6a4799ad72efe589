//! The BCSR inspector on hand-built inputs: greedy blocks and their values, the block at the end
//! of `x`, the fill cut, invalid and unsorted rows left to the rows, the sample, the finite check.

use super::bcsr::{self, BcsrShape, MAX_FILL, all_finite};
use surge_codegen::analysis::{BlockedPattern, DiagonalPattern, DiagonalRow};
use surge_codegen::data::Buffer;
use surge_codegen::ir::{Elem, NodeId};

/// Buffers `[values, columns, offsets, x]` of CSR rows of (column, value), `x` of `cols`.
fn csr(cols: usize, rows: &[&[(u32, f64)]]) -> Vec<Buffer> {
    let (mut v, mut j, mut off) = (vec![], vec![], vec![0u64]);
    for r in rows {
        for &(c, x) in *r {
            j.push(c);
            v.push(x);
        }
        off.push(v.len() as u64);
    }
    vec![
        Buffer::F64(v),
        Buffer::U32(j),
        Buffer::U64(off),
        Buffer::F64(vec![1.0; cols]),
    ]
}

fn pattern() -> (DiagonalPattern, BlockedPattern) {
    let row = |param, buffer, elem| DiagonalRow {
        param: NodeId(param),
        buffer,
        elem,
    };
    let pat = DiagonalPattern {
        map: NodeId(10),
        reduce: NodeId(9),
        offsets: 2,
        index: 1,
        gather: NodeId(7),
        gathered: 3,
        rows: vec![row(5, 0, Elem::F64), row(6, 1, Elem::U32)],
    };
    let blocked = BlockedPattern {
        values: 0,
        elem: Elem::F64,
        products: NodeId(8),
        values_first: true,
    };
    (pat, blocked)
}

fn values(l: &bcsr::BcsrLayout) -> Vec<f64> {
    match &l.values {
        Buffer::F64(v) => v.clone(),
        other => panic!("values of {:?}", other.elem()),
    }
}

#[test]
fn blocks_are_greedy_column_major_and_zero_filled() {
    let (pat, blocked) = pattern();
    // Block row 0: columns {0, 1, 3} and {0, 1, 2}: blocks at 0 ([0, 1]) and 2 ([2, 3]).
    let b = csr(
        6,
        &[
            &[(0, 1.0), (1, 2.0), (3, 3.0)],
            &[(0, 6.0), (1, 4.0), (2, 5.0)],
        ],
    );
    let two = BcsrShape { r: 2, c: 2 };
    let l = bcsr::inspect(&pat, &blocked, &b, two).expect("a layout");
    assert_eq!((l.first.clone(), l.starts.clone()), (vec![0], vec![0, 2]));
    assert_eq!(l.cols, [0, 2]);
    // `[(b * c + k) * r + t]`: block 0 is (row 0, row 1) at columns 0 then 1.
    assert_eq!(values(&l), [1.0, 6.0, 2.0, 4.0, 0.0, 5.0, 3.0, 0.0]);
    assert_eq!((l.nnz, l.fill(), l.rest.clone()), (6, 8.0 / 6.0, vec![]));
    assert_eq!(l.gather_len, 6);
}

#[test]
fn a_block_past_the_end_of_x_moves_left_to_end_there() {
    let (pat, blocked) = pattern();
    // 3×3 over x of 5: columns 0 and 4 give blocks at 0 and at 2 (not 4: 4 + 3 > 5).
    let b = csr(5, &[&[(0, 1.0), (4, 2.0)], &[(1, 3.0)], &[(4, 4.0)]]);
    let l = bcsr::inspect(&pat, &blocked, &b, BcsrShape { r: 3, c: 3 });
    // 18 stored values for 4 elements: too poor a fill, no layout at all.
    assert!(l.is_none());
    let full: Vec<(u32, f64)> = (0..5).map(|j| (j, 1.0 + f64::from(j))).collect();
    let b = csr(5, &[&full, &full, &full]);
    let l = bcsr::inspect(&pat, &blocked, &b, BcsrShape { r: 3, c: 3 }).expect("a layout");
    assert_eq!(l.cols, [0, 2]);
    // Column 2 is in block 0; block 1's column 2 (its first) holds a zero for each row.
    let v = values(&l);
    assert_eq!(&v[9..12], &[0.0; 3]);
    assert_eq!(&v[12..18], &[4.0, 4.0, 4.0, 5.0, 5.0, 5.0]);
    assert!(l.fill() <= MAX_FILL);
}

#[test]
fn invalid_unsorted_and_poorly_filled_block_rows_and_the_tail_are_rows() {
    let (pat, blocked) = pattern();
    let dense: &[(u32, f64)] = &[(0, 1.0), (1, 1.0), (2, 1.0), (3, 1.0)];
    let b = csr(
        8,
        &[
            dense,
            dense,
            &[(1, 1.0), (0, 1.0)], // unsorted
            dense,
            &[(0, 1.0), (9, 1.0)], // outside x
            dense,
            &[(0, 1.0)], // one element per 2×2 block: fill 2
            &[(7, 1.0)],
            dense,
            dense,
            dense, // the tail
        ],
    );
    let l = bcsr::inspect(&pat, &blocked, &b, BcsrShape { r: 2, c: 2 }).expect("a layout");
    assert_eq!(l.first, [0, 8]);
    assert_eq!(l.rest, [(2, 8), (10, 11)]);
    assert_eq!((l.rest_rows(), l.nnz, l.fill()), (7, 16, 1.0));
    // The sample saw every block row: 16 of the 30 elements of whole block rows held, at fill 1.
    let s = l.sample;
    assert_eq!(s.block_rows, 5);
    assert_eq!((s.share, s.fill), (16.0 / 30.0, 1.0));
}

#[test]
fn too_little_in_good_blocks_or_too_narrow_an_x_is_no_layout() {
    let (pat, blocked) = pattern();
    let sparse: Vec<Vec<(u32, f64)>> = (0..64u32).map(|i| vec![(i * 5 % 64, 1.0)]).collect();
    let rows: Vec<&[(u32, f64)]> = sparse.iter().map(|r| r.as_slice()).collect();
    let b = csr(64, &rows);
    for s in BcsrShape::all() {
        let sm = bcsr::sample(&pat, &b, s).expect("a sample");
        assert!(sm.share < bcsr::MIN_SHARE, "{s}: {sm:?}");
        assert!(bcsr::inspect(&pat, &blocked, &b, s).is_none(), "{s}");
    }
    let b = csr(1, &[&[(0, 1.0)], &[(0, 2.0)]]);
    assert!(bcsr::sample(&pat, &b, BcsrShape { r: 2, c: 2 }).is_none());
    let b = csr(4, &[&[(0, 1.0)]]);
    assert!(bcsr::sample(&pat, &b, BcsrShape { r: 2, c: 2 }).is_none());
}

#[test]
fn only_finite_floats_are_finite() {
    let mut v = vec![1.0f64; 1000];
    assert!(all_finite(&Buffer::F64(v.clone())));
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        v[777] = bad;
        assert!(!all_finite(&Buffer::F64(v.clone())));
    }
    v[777] = -0.0;
    v[3] = f64::MAX;
    v[4] = f64::MIN_POSITIVE / 2.0;
    assert!(all_finite(&Buffer::F64(v)));
    assert!(all_finite(&Buffer::F32(vec![2.0; 300])));
    assert!(!all_finite(&Buffer::F32(vec![f32::NAN; 3])));
    assert!(!all_finite(&Buffer::U32(vec![1])));
    assert!(all_finite(&Buffer::F64(vec![])));
}
