//! Enumeration: the loop nest interpreter, parallel splitting and streaming.
//!
//! The outer loops are expanded sequentially into work items (environments bound down to some
//! depth) until there are enough items to keep the threads busy; rayon then runs the items'
//! sub-nests in parallel, each with its own counters, summed at the end. Ordered streaming
//! processes items in chunks and hands points to the consumer in item order, so the output
//! is the same as a single-threaded run.
//!
//! Here: run options, points and the public entry points (`count`, `for_each`, `par_for_each`,
//! `collect`, `points`); `interp` holds the interpreter.

mod closed;
mod count;
mod interp;
mod memo;

use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::mpsc;
use std::time::Instant;

use rayon::prelude::*;

use self::interp::{CountVis, FnVis};
use self::memo::Memo;

use super::error::BeastError;
use super::plan::Plan;
use super::stats::{Counters, Stats};
use super::value::Value;

/// How to run an enumeration.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    /// Worker threads; 0 means one per available core.
    pub threads: usize,
    /// Stop after this many survivors (streaming only).
    pub limit: Option<u64>,
}

impl RunOptions {
    pub fn threads(threads: usize) -> RunOptions {
        RunOptions {
            threads,
            limit: None,
        }
    }

    fn resolved_threads(&self) -> usize {
        if self.threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            self.threads
        }
    }
}

/// A surviving point: iterator values in declaration order, borrowed from the enumerator.
#[derive(Clone, Copy, Debug)]
pub struct Point<'a> {
    names: &'a [String],
    values: &'a [Value],
}

impl<'a> Point<'a> {
    pub fn names(&self) -> &'a [String] {
        self.names
    }

    pub fn values(&self) -> &'a [Value] {
        self.values
    }

    pub fn get(&self, name: &str) -> Option<&'a Value> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| &self.values[i])
    }

    /// The integer value of iterator `name` (None if absent or not an int).
    pub fn int(&self, name: &str) -> Option<i64> {
        self.get(name).and_then(Value::as_i64)
    }

    /// One JSON object, fields in declaration order (a JSON Lines record).
    pub fn to_json_line(&self) -> String {
        let mut s = String::from("{");
        for (i, (n, v)) in self.names.iter().zip(self.values).enumerate() {
            if i > 0 {
                s.push(',');
            }
            s.push_str(&serde_json::Value::String(n.clone()).to_string());
            s.push(':');
            s.push_str(&v.to_json().to_string());
        }
        s.push('}');
        s
    }

    pub fn to_owned(&self) -> Vec<Value> {
        self.values.to_vec()
    }
}

impl Plan {
    /// Count survivors (with full statistics), in parallel.
    pub fn count(&self, run: &RunOptions) -> Result<Stats, BeastError> {
        let t0 = Instant::now();
        let threads = run.resolved_threads();
        let mut c = self.new_counters();
        if let Some(mut env) = self.start(&mut c)? {
            if threads <= 1 {
                self.count_item(0, &mut env, &mut c, &mut Memo::new(self.levels.len()))?;
            } else {
                let (items, depth) = self.split(env, &mut c, threads, self.shortcut)?;
                let pool = Self::pool(threads)?;
                let memos: Vec<std::sync::Mutex<Memo>> = (0..threads)
                    .map(|_| std::sync::Mutex::new(Memo::new(self.levels.len())))
                    .collect();
                let zero = || (self.new_counters(), None::<(usize, BeastError)>);
                let (sum, err) = pool.install(|| {
                    items
                        .into_par_iter()
                        // Work is very uneven between items (the first outer values carry most
                        // of it): make every item stealable on its own.
                        .with_max_len(1)
                        .enumerate()
                        .map(|(i, mut env)| {
                            let mut c = self.new_counters();
                            // Each worker only ever locks its own tables.
                            let w = rayon::current_thread_index().unwrap_or(0) % threads;
                            let mut memo = memos[w].lock().unwrap_or_else(|p| p.into_inner());
                            let e = self
                                .count_item(depth, &mut env, &mut c, &mut memo)
                                .err()
                                .map(|e| (i, e));
                            (c, e)
                        })
                        .reduce(zero, |(mut a, ea), (b, eb)| {
                            a.merge(&b);
                            let e = match (ea, eb) {
                                (Some(x), Some(y)) => Some(if x.0 <= y.0 { x } else { y }),
                                (x, y) => x.or(y),
                            };
                            (a, e)
                        })
                });
                if let Some((_, e)) = err {
                    return Err(e);
                }
                c.merge(&sum);
            }
        }
        Ok(Stats::from_counters(
            self,
            &c,
            t0.elapsed().as_secs_f64(),
            threads,
            true,
        ))
    }

    /// Count the nest from level `d` (fast or scanning, as planned).
    fn count_item(
        &self,
        d: usize,
        env: &mut [Value],
        c: &mut Counters,
        memo: &mut Memo,
    ) -> Result<(), BeastError> {
        if self.fast_count {
            self.count_from(d, self.levels.len(), env, c, memo)
        } else {
            self.run_from(d, env, c, &mut CountVis).map(|_| ())
        }
    }

    /// Stream survivors in deterministic order (the single-threaded order, whatever the thread
    /// count). `f` returns false to stop. At most `run.limit` points are delivered.
    pub fn for_each<F>(&self, run: &RunOptions, mut f: F) -> Result<Stats, BeastError>
    where
        F: FnMut(Point<'_>) -> bool,
    {
        let t0 = Instant::now();
        let threads = run.resolved_threads();
        let names: &[String] = &self.iter_names;
        let ni = names.len();
        let limit = run.limit.unwrap_or(u64::MAX);
        let mut delivered: u64 = 0;
        let mut c = self.new_counters();
        let mut complete = true;
        if limit == 0 {
            return Ok(Stats::from_counters(self, &c, 0.0, threads, false));
        }
        if let Some(mut env) = self.start(&mut c)? {
            if threads <= 1 {
                let mut vis = FnVis {
                    f: |p: &[Value]| {
                        delivered += 1;
                        f(Point { names, values: p }) && delivered < limit
                    },
                };
                complete = self.run_from(0, &mut env, &mut c, &mut vis)?;
            } else {
                let (items, depth) = self.split(env, &mut c, threads, self.levels.len())?;
                let pool = Self::pool(threads)?;
                'chunks: for chunk in items.chunks(4 * threads) {
                    let cap = limit - delivered;
                    let results: Vec<(Vec<Value>, Counters, Result<bool, BeastError>)> = pool
                        .install(|| {
                            chunk
                                .par_iter()
                                .with_max_len(1)
                                .map(|env| {
                                    let mut env = env.clone();
                                    let mut c = self.new_counters();
                                    let mut buf: Vec<Value> = Vec::new();
                                    let mut n: u64 = 0;
                                    let mut vis = FnVis {
                                        f: |p: &[Value]| {
                                            buf.extend_from_slice(p);
                                            n += 1;
                                            n < cap
                                        },
                                    };
                                    let r = self.run_from(depth, &mut env, &mut c, &mut vis);
                                    (buf, c, r)
                                })
                                .collect()
                        });
                    for (buf, ci, r) in results {
                        c.merge(&ci);
                        r?;
                        for p in buf.chunks(ni.max(1)) {
                            let p = if ni == 0 { &p[..0] } else { p };
                            delivered += 1;
                            if !f(Point { names, values: p }) || delivered >= limit {
                                complete = false;
                                break 'chunks;
                            }
                        }
                    }
                }
            }
        }
        Ok(Stats::from_counters(
            self,
            &c,
            t0.elapsed().as_secs_f64(),
            threads,
            complete,
        ))
    }

    /// Stream survivors to `f` from all threads at once, in no particular order.
    pub fn par_for_each<F>(&self, run: &RunOptions, f: F) -> Result<Stats, BeastError>
    where
        F: Fn(Point<'_>) + Sync,
    {
        let t0 = Instant::now();
        let threads = run.resolved_threads();
        let names: &[String] = &self.iter_names;
        let limit = run.limit.unwrap_or(u64::MAX);
        let sent = AtomicU64::new(0);
        let emit = |p: &[Value]| {
            if sent.fetch_add(1, AtomicOrdering::Relaxed) < limit {
                f(Point { names, values: p });
                true
            } else {
                false
            }
        };
        let mut c = self.new_counters();
        if let Some(mut env) = self.start(&mut c)? {
            if threads <= 1 {
                self.run_from(0, &mut env, &mut c, &mut FnVis { f: emit })?;
            } else {
                let (items, depth) = self.split(env, &mut c, threads, self.levels.len())?;
                let pool = Self::pool(threads)?;
                let results: Vec<(Counters, Result<bool, BeastError>)> = pool.install(|| {
                    items
                        .into_par_iter()
                        .with_max_len(1)
                        .map(|mut env| {
                            let mut c = self.new_counters();
                            let r = self.run_from(depth, &mut env, &mut c, &mut FnVis { f: emit });
                            (c, r)
                        })
                        .collect()
                });
                for (ci, r) in results {
                    c.merge(&ci);
                    r?;
                }
            }
        }
        let complete = sent.load(AtomicOrdering::Relaxed) <= limit;
        Ok(Stats::from_counters(
            self,
            &c,
            t0.elapsed().as_secs_f64(),
            threads,
            complete,
        ))
    }

    /// All survivors, in deterministic order (only for spaces that fit in memory).
    pub fn collect(&self, run: &RunOptions) -> Result<(Vec<Vec<Value>>, Stats), BeastError> {
        let mut out = Vec::new();
        let stats = self.for_each(run, |p| {
            out.push(p.to_owned());
            true
        })?;
        Ok((out, stats))
    }

    /// A streaming iterator over survivors (deterministic order), produced by a background
    /// thread through a bounded channel; dropping the iterator stops the enumeration.
    pub fn points(&self, run: &RunOptions) -> Points {
        let (tx, rx) = mpsc::sync_channel::<Msg>(1024);
        let plan = self.clone();
        let run = *run;
        let handle = std::thread::spawn(move || {
            let r = plan.for_each(&run, |p| tx.send(Msg::Point(p.to_owned())).is_ok());
            let _ = tx.send(Msg::Done(Box::new(r)));
        });
        Points {
            rx,
            stats: None,
            handle: Some(handle),
        }
    }
}

#[derive(Debug)]
enum Msg {
    Point(Vec<Value>),
    Done(Box<Result<Stats, BeastError>>),
}

/// Iterator returned by [`Plan::points`]; yields iterator values in declaration order.
#[derive(Debug)]
pub struct Points {
    rx: mpsc::Receiver<Msg>,
    stats: Option<Stats>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Points {
    /// Statistics, once the iterator is exhausted.
    pub fn stats(&self) -> Option<&Stats> {
        self.stats.as_ref()
    }
}

impl Iterator for Points {
    type Item = Result<Vec<Value>, BeastError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.rx.recv() {
            Ok(Msg::Point(p)) => Some(Ok(p)),
            Ok(Msg::Done(r)) => {
                if let Some(h) = self.handle.take() {
                    let _ = h.join();
                }
                match *r {
                    Ok(s) => {
                        self.stats = Some(s);
                        None
                    }
                    Err(e) => Some(Err(e)),
                }
            }
            Err(_) => None,
        }
    }
}
