//! Remembered counters of sub-nests (see `plan/factor.rs` for the keys), per worker thread.
//!
//! An entry is a *delta*: the counters a sub-nest `lo..hi` adds, laid out as
//! `[survivors, visited[lo..hi].., rejected[..]..]`. A table whose hit rate stays low is
//! switched off (remembering is only ever a speed choice: the counts are the same), and one
//! that grows too large is emptied.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::stats::Counters;
use crate::value::Value;

/// A multiply-rotate hasher for keys of machine words (the std hasher is much slower here).
#[derive(Default)]
pub(super) struct WordHasher(u64);

const K: u64 = 0x517c_c1b7_2722_0a95;

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for ch in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(ch);
            self.write_u64(u64::from_le_bytes(w));
        }
        for &b in chunks.remainder() {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(K);
    }
}

type Hashed = BuildHasherDefault<WordHasher>;

/// Keys of up to `INLINE` words are stored in place (no pointer to follow on a lookup).
const INLINE: usize = 8;

/// An inline key, compared word by word (a derived `==` on the array calls `memcmp`).
#[derive(Clone, Copy)]
struct Small([u64; INLINE]);

impl std::hash::Hash for Small {
    fn hash<H: Hasher>(&self, h: &mut H) {
        for w in self.0 {
            h.write_u64(w);
        }
    }
}

impl PartialEq for Small {
    fn eq(&self, o: &Small) -> bool {
        self.0
            .iter()
            .zip(&o.0)
            .fold(true, |acc, (a, b)| acc & (a == b))
    }
}

impl Eq for Small {}

#[derive(Default)]
struct Map {
    small: HashMap<Small, Box<[u64]>, Hashed>,
    large: HashMap<Box<[u64]>, Box<[u64]>, Hashed>,
}

impl Map {
    fn len(&self) -> usize {
        self.small.len() + self.large.len()
    }

    fn get(&self, key: &[u64]) -> Option<&[u64]> {
        let v = if key.len() <= INLINE {
            let mut k = [0; INLINE];
            k[..key.len()].copy_from_slice(key);
            self.small.get(&Small(k))
        } else {
            self.large.get(key)
        };
        v.map(|v| &v[..])
    }

    fn insert(&mut self, key: &[u64], delta: Box<[u64]>) {
        if key.len() <= INLINE {
            let mut k = [0; INLINE];
            k[..key.len()].copy_from_slice(key);
            self.small.insert(Small(k), delta);
        } else {
            self.large.insert(key.into(), delta);
        }
    }
}

/// Lookups after which a table with a hit rate under 1/4 is switched off.
const PROBATION: u64 = 2048;
/// Entries after which a table is emptied.
const MAX_ENTRIES: usize = 1 << 18;

#[derive(Default)]
struct Table {
    map: Map,
    lookups: u64,
    hits: u64,
    off: bool,
}

/// One worker's tables: per level, the sub-nest from it (`rest`) and its cut block (`block`).
pub(crate) struct Memo {
    rest: Vec<Table>,
    block: Vec<Table>,
    key: Vec<u64>,
}

/// Which table.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    Rest,
    Block,
}

impl Memo {
    pub(crate) fn new(levels: usize) -> Memo {
        Memo {
            rest: (0..levels).map(|_| Table::default()).collect(),
            block: (0..levels).map(|_| Table::default()).collect(),
            key: Vec::new(),
        }
    }

    fn table(&mut self, kind: Kind, d: usize) -> &mut Table {
        match kind {
            Kind::Rest => &mut self.rest[d],
            Kind::Block => &mut self.block[d],
        }
    }

    /// Build the key of `slots` in `env` into the key buffer; false when a value cannot be a
    /// key (only ints, bools, None, floats and ranges can) or the table is off. The first word
    /// holds 3 bits of type per slot, so the payload words that follow are unambiguous.
    pub(super) fn prepare(&mut self, kind: Kind, d: usize, slots: &[u32], env: &[Value]) -> bool {
        if self.table(kind, d).off || slots.len() > 21 {
            return false;
        }
        self.key.clear();
        self.key.push(0);
        let mut sig: u64 = 0;
        for &s in slots {
            let tag = match &env[s as usize] {
                Value::Int(i) => {
                    self.key.push(*i as u64);
                    1
                }
                Value::Bool(b) => {
                    self.key.push(u64::from(*b));
                    2
                }
                Value::None => 3,
                Value::Float(f) => {
                    self.key.push(f.to_bits());
                    4
                }
                Value::Range(r) => {
                    self.key
                        .extend([r.start as u64, r.stop as u64, r.step as u64]);
                    5
                }
                _ => return false,
            };
            sig = (sig << 3) | tag;
        }
        self.key[0] = sig;
        true
    }

    /// The delta stored under the prepared key.
    pub(super) fn get(&mut self, kind: Kind, d: usize) -> Option<&[u64]> {
        let Memo { rest, block, key } = self;
        let t = match kind {
            Kind::Rest => &mut rest[d],
            Kind::Block => &mut block[d],
        };
        t.lookups += 1;
        if t.map.get(key).is_some() {
            t.hits += 1;
            return t.map.get(key);
        }
        if t.lookups >= PROBATION && t.hits * 4 < t.lookups {
            t.off = true;
            t.map = Map::default();
        }
        None
    }

    /// Store `delta` under the prepared key.
    pub(super) fn put(&mut self, kind: Kind, d: usize, delta: Box<[u64]>) {
        let Memo { rest, block, key } = self;
        let t = match kind {
            Kind::Rest => &mut rest[d],
            Kind::Block => &mut block[d],
        };
        if t.off {
            return;
        }
        if t.map.len() >= MAX_ENTRIES {
            t.map = Map::default();
        }
        t.map.insert(key, delta);
    }
}

/// The counters `c` holds for levels `lo..hi`, as a delta.
pub(super) fn delta_of(c: &Counters, lo: usize, hi: usize) -> Box<[u64]> {
    let mut v = Vec::with_capacity(1 + hi - lo + c.rejected.len());
    v.push(c.survivors);
    v.extend_from_slice(&c.visited[lo..hi]);
    v.extend_from_slice(&c.rejected);
    v.into()
}

/// Add `k` times `delta` (of levels starting at `lo`) to `c`; survivors only when `survivors`.
pub(super) fn add_delta(c: &mut Counters, lo: usize, delta: &[u64], k: u64, survivors: bool) {
    let nv = delta.len() - 1 - c.rejected.len();
    if survivors {
        c.survivors += k * delta[0];
    }
    for (a, b) in c.visited[lo..lo + nv].iter_mut().zip(&delta[1..1 + nv]) {
        *a += k * b;
    }
    for (a, b) in c.rejected.iter_mut().zip(&delta[1 + nv..]) {
        *a += k * b;
    }
}
