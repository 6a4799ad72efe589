//! Remembered counters of sub-nests (see `plan/factor.rs` for the keys), per worker thread.
//!
//! An entry is a *delta*: the counters a sub-nest `lo..hi` adds, laid out as
//! `[survivors, visited[lo..hi].., rejected[cols]..]` (`cols`: the constraints that levels
//! `lo..hi` can reject, `plan::Columns`). A table whose hit rate stays low is
//! switched off (remembering is only ever a speed choice: the counts are the same), and one
//! that grows too large is emptied. A table is open addressing over one arena of entries (key
//! words, then delta words), so a lookup touches one slot and one run of adjacent words.

use crate::stats::Counters;
use crate::value::Value;

const K: u64 = 0x517c_c1b7_2722_0a95;

/// A multiply-rotate hash of a key of machine words (the std hasher is much slower here).
#[inline]
fn mix(words: &[u64]) -> u64 {
    let mut h: u64 = 0;
    for &w in words {
        h = (h.rotate_left(5) ^ w).wrapping_mul(K);
    }
    h ^ (h >> 29)
}

/// The home slot of a key, keeping locality in its last two words. Keys list their slots
/// outer loop first (`plan/factor.rs`), so the last two words are usually the two innermost
/// iterators, which a loop sweeps in order: keys that differ only in the low bits of those
/// words (a tile of 8 × 4 values) share a hash of the rest and land in one run of 32
/// adjacent slots, so a sweep reads consecutive slots instead of one random slot per
/// lookup (and finds its entries, inserted in the same order, adjacent in the arena). The
/// high bits are hashed, so no more than 32 keys of one prefix share a run.
///
/// Also a tag (see [`Table`]): the hash's high bits, which tell tiles apart, mixed with the
/// low bits of the last two words, which tell the keys of one tile apart.
#[inline]
fn hash(key: &[u64]) -> (u64, u32) {
    let n = key.len();
    if n < 3 {
        let h = mix(key);
        return (h, (h >> 32) as u32);
    }
    let (x, y) = (key[n - 2], key[n - 1]);
    let mut h = mix(&key[..n - 2]);
    h = (h.rotate_left(5) ^ (x >> 3)).wrapping_mul(K);
    h = (h.rotate_left(5) ^ (y >> 2)).wrapping_mul(K);
    let tag = ((h >> 32) as u32) ^ ((x as u32) << 16) ^ (y as u32);
    ((h ^ (h >> 29)).wrapping_add(((x & 7) << 2) | (y & 3)), tag)
}

/// Lanes of [`Table::find`]'s guess.
const LANES: usize = 4;

/// A key's lane: the low bits of its last word.
#[inline]
fn lane(key: &[u64]) -> usize {
    key.last().map_or(0, |&w| w as usize % LANES)
}

/// Word-by-word equality of two keys of one length (`==` on slices calls `memcmp`, slow
/// for a few words).
#[inline]
fn same(a: &[u64], b: &[u64]) -> bool {
    a.iter().zip(b).fold(true, |acc, (x, y)| acc & (x == y))
}

/// Lookups after which a table with a hit rate under 1/4 is switched off.
const PROBATION: u64 = 2048;
/// Entries after which a table is emptied.
const MAX_ENTRIES: usize = 1 << 18;

/// One table, open addressing with linear probing. An entry is its key followed by its delta,
/// stored end to end in `arena`; a slot holds entry index + 1 (0: empty) in its low 32 bits
/// and the key's tag (`hash`) in its high bits, and a probe reads an entry's key only when the
/// tags match (a miss or a neighbour in the probe run costs no arena read). A table's keys all
/// have one length and its deltas one length (set by the first entry: the same slots and the
/// same levels each time; a key of another length, possible when a slot changes type, is
/// simply not remembered). So a hit reads one slot and one run of adjacent words, and an entry
/// costs no allocation of its own.
#[derive(Default)]
struct Table {
    slots: Vec<u64>,
    arena: Vec<u64>,
    key_len: usize,
    width: usize,
    entries: usize,
    /// Where the entry last found or added starts in the arena, per [`lane`].
    last: [usize; LANES],
    lookups: u64,
    hits: u64,
    off: bool,
}

impl Table {
    fn stride(&self) -> usize {
        self.key_len + self.width
    }

    /// Where the delta stored under `key` starts in the arena.
    #[inline]
    fn find(&mut self, key: &[u64]) -> Option<usize> {
        if self.entries == 0 || key.len() != self.key_len {
            return None;
        }
        let stride = self.stride();
        // The entries after the last one found or added with the same low bits in the last
        // key word first: a loop sweeping the innermost key words asks for them in the order
        // it once added them.
        let lane = lane(key);
        let last = self.last[lane];
        for lo in [last + stride, last + 2 * stride] {
            if lo + stride <= self.arena.len() && same(&self.arena[lo..lo + self.key_len], key) {
                self.last[lane] = lo;
                return Some(lo + self.key_len);
            }
        }
        let mask = self.slots.len() - 1;
        let (h, tag) = hash(key);
        let mut i = h as usize & mask;
        loop {
            let s = self.slots[i];
            if s == 0 {
                return None;
            }
            if (s >> 32) as u32 == tag {
                let lo = ((s as u32) as usize - 1) * stride;
                if same(&self.arena[lo..lo + self.key_len], key) {
                    self.last[lane] = lo;
                    return Some(lo + self.key_len);
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// Put entry `at` (already in the arena) into the slots.
    fn place(&mut self, at: usize) {
        let mask = self.slots.len() - 1;
        let lo = at * self.stride();
        let (h, tag) = hash(&self.arena[lo..lo + self.key_len]);
        let mut i = h as usize & mask;
        while self.slots[i] != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = (u64::from(tag) << 32) | (at as u64 + 1);
    }

    fn insert(&mut self, key: &[u64], delta: &[u64]) {
        if self.entries == 0 {
            self.key_len = key.len();
            self.width = delta.len();
        } else if key.len() != self.key_len || delta.len() != self.width {
            return;
        }
        if self.entries >= MAX_ENTRIES {
            // Emptied, keeping the allocations (a full table is emptied many times).
            self.slots.fill(0);
            self.arena.clear();
            self.entries = 0;
        }
        if 2 * (self.entries + 1) > self.slots.len() {
            let cap = (2 * self.slots.len()).max(1024);
            self.slots = vec![0; cap];
            for at in 0..self.entries {
                self.place(at);
            }
        }
        self.last[lane(key)] = self.arena.len();
        self.arena.extend_from_slice(key);
        self.arena.extend_from_slice(delta);
        self.place(self.entries);
        self.entries += 1;
    }
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
        if let Some(at) = t.find(key) {
            t.hits += 1;
            return Some(&t.arena[at..at + t.width]);
        }
        if t.lookups >= PROBATION && t.hits * 4 < t.lookups {
            *t = Table {
                off: true,
                ..Table::default()
            };
        }
        None
    }

    /// Store `delta` under the prepared key.
    pub(super) fn put(&mut self, kind: Kind, d: usize, delta: &[u64]) {
        let Memo { rest, block, key } = self;
        let t = match kind {
            Kind::Rest => &mut rest[d],
            Kind::Block => &mut block[d],
        };
        if !t.off {
            t.insert(key, delta);
        }
    }
}

/// The counters `c` holds for levels `lo..hi`, as a delta: survivors, visited per level,
/// then the rejections of the constraints in `cols` (those levels `lo..hi` can reject,
/// `Columns::of`; every other rejection counter of `c` is zero).
pub(super) fn delta_of(c: &Counters, lo: usize, hi: usize, cols: &[usize]) -> Box<[u64]> {
    debug_assert_eq!(
        c.rejected
            .iter()
            .enumerate()
            .filter(|(i, _)| !cols.contains(i))
            .map(|(_, r)| r)
            .sum::<u64>(),
        0,
        "a rejection outside the columns of levels {lo}..{hi}"
    );
    let mut v = Vec::with_capacity(1 + hi - lo + cols.len());
    v.push(c.survivors);
    v.extend_from_slice(&c.visited[lo..hi]);
    v.extend(cols.iter().map(|&ci| c.rejected[ci]));
    v.into()
}

/// Add `k` times `delta` (of levels starting at `lo`, rejections in `cols`) to `c`; survivors
/// only when `survivors`.
pub(super) fn add_delta(
    c: &mut Counters,
    lo: usize,
    delta: &[u64],
    cols: &[usize],
    k: u64,
    survivors: bool,
) {
    let nv = delta.len() - 1 - cols.len();
    if survivors {
        c.survivors += k * delta[0];
    }
    for (a, b) in c.visited[lo..lo + nv].iter_mut().zip(&delta[1..1 + nv]) {
        *a += k * b;
    }
    for (&ci, b) in cols.iter().zip(&delta[1 + nv..]) {
        c.rejected[ci] += k * b;
    }
}
