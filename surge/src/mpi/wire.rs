//! A `RankPart` as two flat arrays (integers and values), the form rank 0 sends it in: three
//! messages per rank (the lengths, the integers, the values), whatever MPI's datatypes.

use super::rank_part::{Neighbour, RankPart};
use crate::mtx::CsrMatrix;

/// Appends integers with their count first; the reader takes them back in the same order.
struct Writer(Vec<u64>);

impl Writer {
    fn one(&mut self, v: usize) {
        self.0.push(v as u64);
    }
    fn list<T: Copy + Into<u64>>(&mut self, v: &[T]) {
        self.one(v.len());
        self.0.extend(v.iter().map(|&x| x.into()));
    }
    fn csr(&mut self, m: &CsrMatrix, values: &mut Vec<f64>) {
        self.one(m.rows);
        self.one(m.cols);
        self.list(&m.row_offsets);
        self.list(&m.col_indices);
        values.extend_from_slice(&m.values);
    }
    fn neighbours(&mut self, n: &[Neighbour]) {
        self.one(n.len());
        for n in n {
            self.one(n.rank);
            self.one(n.at.start);
            self.one(n.at.end);
            self.list(&n.indices);
        }
    }
}

/// Reads what [`Writer`] wrote; a short or inconsistent message is an error naming it.
struct Reader<'a> {
    ints: &'a [u64],
    values: &'a [f64],
}

impl Reader<'_> {
    fn one(&mut self) -> Result<usize, String> {
        let (&v, rest) = self
            .ints
            .split_first()
            .ok_or("the part's integers end early")?;
        self.ints = rest;
        Ok(v as usize)
    }
    fn list<T: TryFrom<u64>>(&mut self) -> Result<Vec<T>, String> {
        let n = self.one()?;
        if n > self.ints.len() {
            return Err(format!(
                "a list of {n} integers where {} remain",
                self.ints.len()
            ));
        }
        let (head, rest) = self.ints.split_at(n);
        self.ints = rest;
        head.iter()
            .map(|&v| T::try_from(v).map_err(|_| format!("integer {v} out of range")))
            .collect()
    }
    fn csr(&mut self) -> Result<CsrMatrix, String> {
        let rows = self.one()?;
        let cols = self.one()?;
        let row_offsets: Vec<u64> = self.list()?;
        let col_indices: Vec<u32> = self.list()?;
        let n = col_indices.len();
        if row_offsets.len() != rows + 1 || n > self.values.len() {
            return Err(format!(
                "a block of {rows} rows with {} offsets and {n} entries",
                row_offsets.len()
            ));
        }
        let (values, rest) = self.values.split_at(n);
        self.values = rest;
        Ok(CsrMatrix {
            rows,
            cols,
            row_offsets,
            col_indices,
            values: values.to_vec(),
        })
    }
    fn neighbours(&mut self) -> Result<Vec<Neighbour>, String> {
        (0..self.one()?)
            .map(|_| {
                Ok(Neighbour {
                    rank: self.one()?,
                    at: self.one()?..self.one()?,
                    indices: self.list()?,
                })
            })
            .collect()
    }
}

/// The part as integers and values.
pub fn encode(p: &RankPart) -> (Vec<u64>, Vec<f64>) {
    let mut w = Writer(Vec::new());
    let mut values = Vec::new();
    for v in [
        p.rank,
        p.ranks,
        p.global_rows,
        p.global_cols,
        p.rows.start,
        p.rows.end,
    ] {
        w.one(v);
    }
    for v in [p.cols.start, p.cols.end, p.diagonal_nnz, p.off_diagonal_nnz] {
        w.one(v);
    }
    w.csr(&p.interior, &mut values);
    w.list(&p.interior_rows);
    w.csr(&p.boundary, &mut values);
    w.list(&p.boundary_rows);
    w.list(&p.ghosts);
    w.neighbours(&p.recv);
    w.neighbours(&p.send);
    (w.0, values)
}

/// The part [`encode`] wrote.
pub fn decode(ints: &[u64], values: &[f64]) -> Result<RankPart, String> {
    let mut r = Reader { ints, values };
    let mut h = [0usize; 10];
    for v in h.iter_mut() {
        *v = r.one()?;
    }
    let part = RankPart {
        rank: h[0],
        ranks: h[1],
        global_rows: h[2],
        global_cols: h[3],
        rows: h[4]..h[5],
        cols: h[6]..h[7],
        diagonal_nnz: h[8],
        off_diagonal_nnz: h[9],
        interior: r.csr()?,
        interior_rows: r.list()?,
        boundary: r.csr()?,
        boundary_rows: r.list()?,
        ghosts: r.list()?,
        recv: r.neighbours()?,
        send: r.neighbours()?,
    };
    if !r.ints.is_empty() || !r.values.is_empty() {
        return Err(format!(
            "{} integers and {} values left over",
            r.ints.len(),
            r.values.len()
        ));
    }
    Ok(part)
}
