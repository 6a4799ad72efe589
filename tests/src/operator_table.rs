//! The operator table: one row per DSEL operator, each a small program that uses it the way real
//! pipelines do (as a phase, inside a `map`, feeding a reduction). The conformance macro runs
//! every row on every backend through compiled kernels, every variant, against the interpreter.
//!
//! Adding an operator adds one row here. A row whose operator a backend's emitter does not
//! generate yet is listed in that backend's [`not_emitted`]: its run must then fail with the
//! emitter's error naming the operator, so the list has to shrink when the emitter learns it.

use surge::prelude::*;

/// One operator's conformance program.
#[derive(Debug, Clone, Copy)]
pub struct OperatorRow {
    /// The operator's IR name (`OpKind::name`).
    pub op: &'static str,
    pub build: fn() -> surge::Result<Computation>,
}

fn input(name: &str, n: usize, seed: u64) -> surge::Result<Seq<f64>> {
    Seq::input(name, crate::conformance::values(n, seed))
}

/// `n` values spread over `0..len`.
fn indices(n: usize, len: usize) -> Vec<u32> {
    (0..n)
        .map(|i| ((i * 7919 + 3) % len.max(1)) as u32)
        .collect()
}

fn row_map() -> surge::Result<Computation> {
    let s = input("s", 103, 1)?;
    Computation::new(&map(|x| x.clone() * x + 1.0, &s)?)
}

fn row_reduce() -> surge::Result<Computation> {
    let s = input("s", 1001, 2)?;
    Computation::new(&reduce(add, &s)?)
}

fn row_scan() -> surge::Result<Computation> {
    let s = input("s", 517, 3)?;
    Computation::new(&scan(add, &s)?)
}

fn row_gather() -> surge::Result<Computation> {
    let s = input("s", 50, 4)?;
    let idx = Seq::input("idx", indices(77, 50))?;
    Computation::new(&map(|x| x * 2.0, &gather(&s, &idx)?)?)
}

fn row_index() -> surge::Result<Computation> {
    let s = input("s", 60, 5)?;
    let rows = split(&s, 6u64)?;
    Computation::new(&map(|row: Seq<f64>| at(&row, 2u32), &rows)?)
}

fn row_length() -> surge::Result<Computation> {
    let s = input("s", 10, 6)?;
    let off = Seq::input("off", vec![0u32, 3, 3, 10])?;
    let rows = nest(&s, &off)?;
    Computation::new(&map(|row: Seq<f64>| len(&row), &rows)?)
}

fn row_range() -> surge::Result<Computation> {
    let r = range_step(3i64, 200i64, 7i64)?;
    Computation::new(&map(|i| i.clone() * i - 5i64, &r)?)
}

fn row_replicate() -> surge::Result<Computation> {
    let s = input("s", 40, 7)?;
    let c = replicate::<f64>(0.5, 40u64)?;
    Computation::new(&map(|(x, y)| x * y, (&s, &c))?)
}

fn row_zip() -> surge::Result<Computation> {
    let (a, b) = (input("a", 33, 8)?, input("b", 33, 9)?);
    Computation::new(&map(|(x, y)| x - y, &zip(&a, &b)?)?)
}

fn row_join() -> surge::Result<Computation> {
    let (a, b) = (input("a", 7, 10)?, input("b", 5, 11)?);
    Computation::new(&map(|(x, y)| x * y, &join(&a, &b)?)?)
}

fn row_split() -> surge::Result<Computation> {
    let s = input("s", 101, 12)?;
    let tiles = split(&s, 8u64)?;
    Computation::new(&map(|t: Seq<f64>| reduce_prefix(add, &t, 0.0), &tiles)?)
}

fn row_striding() -> surge::Result<Computation> {
    let s = input("s", 100, 13)?;
    Computation::new(&map(|x| x + 1.0, &striding(&s, 3u64)?)?)
}

fn row_reverse() -> surge::Result<Computation> {
    let s = input("s", 41, 14)?;
    Computation::new(&map(|x| x * 3.0, &reverse(&s)?)?)
}

fn row_nest() -> surge::Result<Computation> {
    let s = input("s", 12, 15)?;
    let off = Seq::input("off", vec![0u32, 4, 4, 9, 12])?;
    let rows = nest(&s, &off)?;
    Computation::new(&map(|row: Seq<f64>| reduce_prefix(max, &row, -9.0), &rows)?)
}

fn row_reduce_by_key() -> surge::Result<Computation> {
    let s = input("s", 20, 16)?;
    let k = Seq::input("k", (0..20u32).map(|i| i / 3).collect::<Vec<_>>())?;
    Computation::new(&reduce_by_key(add, &s, &k, 0.0)?)
}

fn row_scatter() -> surge::Result<Computation> {
    let s = input("s", 10, 17)?;
    let idx = Seq::input("idx", (0..10u32).rev().collect::<Vec<_>>())?;
    let d = input("d", 12, 18)?;
    Computation::new(&scatter(&s, &idx, &d)?)
}

fn row_transpose() -> surge::Result<Computation> {
    let s = input("s", 24, 19)?;
    let cols = transpose(&split(&s, 6u64)?)?;
    Computation::new(&map(|c: Seq<f64>| reduce_prefix(add, &c, 0.0), &cols)?)
}

/// Every DSEL data-parallel operator and the value operators `index` and `length`.
pub const OPERATORS: &[OperatorRow] = &[
    OperatorRow {
        op: "map",
        build: row_map,
    },
    OperatorRow {
        op: "reduce",
        build: row_reduce,
    },
    OperatorRow {
        op: "scan",
        build: row_scan,
    },
    OperatorRow {
        op: "gather",
        build: row_gather,
    },
    OperatorRow {
        op: "index",
        build: row_index,
    },
    OperatorRow {
        op: "length",
        build: row_length,
    },
    OperatorRow {
        op: "range",
        build: row_range,
    },
    OperatorRow {
        op: "replicate",
        build: row_replicate,
    },
    OperatorRow {
        op: "zip",
        build: row_zip,
    },
    OperatorRow {
        op: "join",
        build: row_join,
    },
    OperatorRow {
        op: "split",
        build: row_split,
    },
    OperatorRow {
        op: "striding",
        build: row_striding,
    },
    OperatorRow {
        op: "reverse",
        build: row_reverse,
    },
    OperatorRow {
        op: "nest",
        build: row_nest,
    },
    OperatorRow {
        op: "reduce_by_key",
        build: row_reduce_by_key,
    },
    OperatorRow {
        op: "scatter",
        build: row_scatter,
    },
    OperatorRow {
        op: "transpose",
        build: row_transpose,
    },
];

/// The operators `backend`'s emitter does not generate yet. Every backend (the CPU, CUDA on a
/// GPU and in the emulator) generates every operator of the table; the list stays so that a
/// new operator can be declared pending on one backend while it is built.
pub fn not_emitted(_backend: &str) -> &'static [&'static str] {
    &[]
}

#[cfg(test)]
mod tests {
    use super::*;
    use surge::codegen::ir::OpKind;

    #[test]
    fn the_table_covers_every_data_parallel_operator() {
        for k in OpKind::data_parallel() {
            assert!(
                OPERATORS.iter().any(|r| r.op == k.name()),
                "operator `{k}` has no row in the operator table"
            );
        }
    }

    #[test]
    fn every_row_builds_and_interprets() {
        for row in OPERATORS {
            let c = (row.build)().unwrap_or_else(|e| panic!("{}: {e}", row.op));
            assert!(
                c.ir().nodes.iter().any(|n| n.op.kind().name() == row.op),
                "row {} does not use its operator",
                row.op
            );
            c.interpret().unwrap_or_else(|e| panic!("{}: {e}", row.op));
        }
    }
}
