//! Policies: the tunable parameters of a (expression sequence, platform, schedule) triple
//! (dissertation Section 5.2.3, Table 5.4, Algorithm 3, Table 5.5) and their value ranges.
//!
//! Parameters are *global* (affect the whole computation: block shape, logical warp size, thread
//! count, nesting) or *local* to one nesting level (named with the level's 1-based depth as a
//! suffix, `grain_size1`, `enable_unroll2`, as Table 5.5 subscripts them).
//!
//! Value ranges (chosen small, each a real alternative for code generation):
//!
//! | parameter | short | values | why |
//! | --- | --- | --- | --- |
//! | `block_size_x` | `bx` | 64, 128, 256, 512, 1024 | two warps up to the per-block limit |
//! | `block_size_y` | `by` | 1, 2, 4 | rows of a block that cooperates per element |
//! | `logical_warp_size` | `lw` | powers of two up to the device's warp size | CSR-vector style sub-warps |
//! | `grain_size` | `grain` | 1, 4 | elements per resource per step |
//! | `execution_resource` | `res` | thread, warp, block (cooperative levels: warp, block) | Figure 5.3 |
//! | `block_reduce_algo` | `reduce` | raking, warp_reductions | CUB's block reduction algorithms |
//! | `block_scan_algo` | `scan` | raking, warp_scans | CUB's block scan algorithms |
//! | `block_scan_grain_size` | `scan_grain` | 1, 4 | items per thread in the block scan |
//! | `enable_unroll` | `unroll` | 0, 1 | unroll the sequential loop by 4 or not |
//! | `num_threads` | `threads` | 1, cores/2, cores (deduplicated) | serial baseline, half, all |
//! | `enable_nesting` | `nesting` | 0, 1 | nested rayon parallelism |
//! | `schedule` | `sched` | static, dynamic, guided | rayon counterparts of OpenMP's loop schedules |
//! | `chunk_size` | `chunk` | 64, L1d bytes / 8 | small chunks vs an L1-sized chunk of doubles |
//! | `layout` | `layout` | rows, diagonals, lanes, sell_8_1, sell_8_256, sell_8_4096, sell_16_1, sell_16_256, sell_16_4096, bcsr_2_2, bcsr_3_3, bcsr_4_2 | CPU, SpMV-shaped phases only: CSR rows, blocks of rows stored by diagonal (`analysis::DiagonalPattern`), SELL-C-σ chunks of C rows sorted within windows of σ rows ([`sell`]; σ = 4096 sorts the rows of matrices of a few thousand rows whole: on power-law graphs it cut the padding from 1.39-1.54 to 1.04-1.06 of the nonzeros and took the SELL-8 kernel from 2.3-2.4 to 3.5 GFLOP/s), or register blocks of r×c values, zeros filled ([`bcsr`]; only `reduce(+, map(*, ..), +0.0)` over floats, `analysis::BlockedPattern`, run while `x` is finite); `lanes`: the CSR rows with each row's products in four partial sums, element k into sum k mod 4 (a reassociated sum, within the oracle's tolerance; the `f64` SpMV form with `u32` indices only, the others run as rows) |

pub mod bcsr;
pub mod sell;

use crate::ir::OpKind;
use crate::schedule::{Schedule, ScheduleElem};
use crate::target::Platform;
use serde::Serialize;
use std::fmt;

/// A parameter value: an integer or a symbolic name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(untagged)]
pub enum PValue {
    Int(i64),
    Str(String),
}

impl fmt::Display for PValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PValue::Int(i) => write!(f, "{i}"),
            PValue::Str(s) => f.write_str(s),
        }
    }
}

impl PValue {
    /// Integers parse as [`PValue::Int`], identifiers (`[a-z_][a-z0-9_]*`) as [`PValue::Str`].
    pub fn parse(s: &str) -> Option<PValue> {
        if let Ok(i) = s.parse::<i64>() {
            return Some(PValue::Int(i));
        }
        let mut chars = s.chars();
        let ok = chars
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
            && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        ok.then(|| PValue::Str(s.to_string()))
    }
    pub fn to_beast(&self) -> surge_beast::Value {
        match self {
            PValue::Int(i) => (*i).into(),
            PValue::Str(s) => s.as_str().into(),
        }
    }
}

/// Whether a parameter affects the whole computation or one nesting level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    Global,
    /// 1-based nesting depth.
    Local(usize),
}

/// The parameter kinds of Table 5.4: (long name, short name used in variant ids, platform).
pub const KINDS: [(&str, &str, &str); 19] = [
    ("block_size_x", "bx", "cuda"),
    ("block_size_y", "by", "cuda"),
    ("logical_warp_size", "lw", "cuda"),
    ("grain_size", "grain", "cuda"),
    ("block_reduce_algo", "reduce", "cuda"),
    ("block_scan_algo", "scan", "cuda"),
    ("block_scan_grain_size", "scan_grain", "cuda"),
    ("num_threads", "threads", "cpu"),
    ("enable_nesting", "nesting", "cpu"),
    ("schedule", "sched", "cpu"),
    ("chunk_size", "chunk", "cpu"),
    ("execution_resource", "res", "cuda"),
    ("enable_unroll", "unroll", "both"),
    ("layout", "layout", "cpu"),
    // The GEMM family of a dense contraction (`crate::gemm`): micro-kernel, blocking, threading.
    ("gemm_kernel", "gemm", "cpu"),
    ("gemm_kc", "kc", "cpu"),
    ("gemm_mc", "mc", "cpu"),
    ("gemm_nc", "nc", "cpu"),
    ("gemm_parallel", "gpar", "cpu"),
];

/// The long name of a short one.
pub fn long_name(short: &str) -> Option<&'static str> {
    KINDS.iter().find(|k| k.1 == short).map(|k| k.0)
}

fn short_name(long: &str) -> &'static str {
    KINDS
        .iter()
        .find(|k| k.0 == long)
        .map(|k| k.1)
        .expect("a known parameter kind")
}

/// One inferred parameter with its value range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Param {
    /// Long kind name, e.g. `grain_size`.
    pub kind: &'static str,
    pub scope: Scope,
    pub values: Vec<PValue>,
}

impl Param {
    fn suffix(&self) -> String {
        match self.scope {
            Scope::Global => String::new(),
            Scope::Local(d) => d.to_string(),
        }
    }
    /// `grain_size1`, `block_size_x`.
    pub fn name(&self) -> String {
        format!("{}{}", self.kind, self.suffix())
    }
    /// `grain1`, `bx`: the name in variant ids and BEAST spaces.
    pub fn short(&self) -> String {
        format!("{}{}", short_name(self.kind), self.suffix())
    }
}

/// Global parameters G(E, B, s) (Table 5.4).
pub fn global_parameters(platform: &Platform) -> Vec<&'static str> {
    match platform {
        Platform::Cuda(_) => vec!["block_size_x", "block_size_y", "logical_warp_size"],
        Platform::Cpu(_) => vec!["num_threads", "enable_nesting"],
    }
}

/// The parameter-set table of Algorithm 3: local parameters of operator `op` under schedule
/// element `elem` on `platform`.
pub fn parameter_set(op: OpKind, elem: ScheduleElem, platform: &Platform) -> Vec<&'static str> {
    use ScheduleElem::*;
    match (platform, elem) {
        (_, Sequential) => vec!["enable_unroll"],
        (Platform::Cuda(_), Independent) => vec!["grain_size", "execution_resource"],
        (Platform::Cuda(_), Cooperative) => match op {
            OpKind::Scan => vec![
                "execution_resource",
                "block_scan_algo",
                "block_scan_grain_size",
            ],
            _ => vec!["execution_resource", "block_reduce_algo"],
        },
        (Platform::Cpu(_), Independent | Cooperative) => vec!["schedule", "chunk_size"],
    }
}

fn ints(v: &[i64]) -> Vec<PValue> {
    v.iter().map(|&i| PValue::Int(i)).collect()
}
fn strs(v: &[&str]) -> Vec<PValue> {
    v.iter().map(|s| PValue::Str((*s).to_string())).collect()
}

/// r(t): the value range of a parameter kind at a schedule element on a platform.
pub fn range(kind: &str, elem: Option<ScheduleElem>, platform: &Platform) -> Vec<PValue> {
    match (kind, platform) {
        ("block_size_x", _) => ints(&[64, 128, 256, 512, 1024]),
        ("block_size_y", _) => ints(&[1, 2, 4]),
        ("logical_warp_size", Platform::Cuda(d)) => {
            let mut v = Vec::new();
            let mut w = 1;
            while w <= d.warp_size as i64 {
                v.push(w);
                w *= 2;
            }
            ints(&v)
        }
        ("grain_size" | "block_scan_grain_size", _) => ints(&[1, 4]),
        ("execution_resource", _) => match elem {
            Some(ScheduleElem::Cooperative) => strs(&["warp", "block"]),
            _ => strs(&["thread", "warp", "block"]),
        },
        ("block_reduce_algo", _) => strs(&["raking", "warp_reductions"]),
        ("block_scan_algo", _) => strs(&["raking", "warp_scans"]),
        ("enable_unroll" | "enable_nesting", _) => ints(&[0, 1]),
        ("num_threads", Platform::Cpu(m)) => {
            let c = m.cores.max(1) as i64;
            let mut v = vec![1, (c / 2).max(1), c];
            v.dedup();
            ints(&v)
        }
        ("schedule", _) => strs(&["static", "dynamic", "guided"]),
        ("layout", _) => {
            let mut v = strs(&["rows", "diagonals", "lanes"]);
            v.extend(
                sell::SellShape::all()
                    .iter()
                    .map(|s| PValue::Str(s.to_string())),
            );
            v.extend(
                bcsr::BcsrShape::all()
                    .iter()
                    .map(|s| PValue::Str(s.to_string())),
            );
            v
        }
        ("chunk_size", Platform::Cpu(m)) => {
            let l1 = (m.l1d_bytes / 8).max(65) as i64;
            ints(&[64, l1])
        }
        _ => Vec::new(),
    }
}

/// Algorithm 3, with the global parameters first: T = G(E, B, s) ∪ Get-Parameters(E, B, s).
/// `ops` holds one operator per schedule element (see [`crate::schedule::expand`]).
pub fn infer(ops: &[OpKind], schedule: &Schedule, platform: &Platform) -> Vec<Param> {
    let mut out: Vec<Param> = global_parameters(platform)
        .into_iter()
        .map(|k| Param {
            kind: k,
            scope: Scope::Global,
            values: range(k, None, platform),
        })
        .collect();
    get_parameters(ops, schedule.elems(), platform, 1, &mut out);
    out
}

/// [`infer`] for a phase with a diagonal pattern (`analysis::DiagonalPattern`): on the CPU, an
/// independent outer level over a sequential reduce also chooses its `layout1`.
pub fn infer_with(
    ops: &[OpKind],
    schedule: &Schedule,
    platform: &Platform,
    diagonal: bool,
) -> Vec<Param> {
    let mut out = infer(ops, schedule, platform);
    if diagonal
        && matches!(platform, Platform::Cpu(_))
        && schedule.elems() == [ScheduleElem::Independent, ScheduleElem::Sequential]
    {
        out.push(Param {
            kind: "layout",
            scope: Scope::Local(1),
            values: range("layout", Some(ScheduleElem::Independent), platform),
        });
    }
    out
}

/// Get-Parameters (Algorithm 3), recursive over the expression and schedule sequences.
fn get_parameters(
    ops: &[OpKind],
    s: &[ScheduleElem],
    platform: &Platform,
    depth: usize,
    out: &mut Vec<Param>,
) {
    let (Some((&o1, rest_ops)), Some((&s1, rest_s))) = (ops.split_first(), s.split_first()) else {
        return;
    };
    for k in parameter_set(o1, s1, platform) {
        out.push(Param {
            kind: k,
            scope: Scope::Local(depth),
            values: range(k, Some(s1), platform),
        });
    }
    get_parameters(rest_ops, rest_s, platform, depth + 1, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::CudaDevice;

    fn names(ps: &[Param]) -> Vec<String> {
        ps.iter().map(Param::name).collect()
    }

    #[test]
    fn table_5_5_cuda() {
        let p = Platform::Cuda(CudaDevice::builtin("h200").unwrap());
        let ops = [OpKind::Map, OpKind::Reduce];
        let s: Schedule = "independent.cooperative".parse().unwrap();
        assert_eq!(
            names(&infer(&ops, &s, &p)),
            [
                "block_size_x",
                "block_size_y",
                "logical_warp_size",
                "grain_size1",
                "execution_resource1",
                "execution_resource2",
                "block_reduce_algo2"
            ]
        );
        let s: Schedule = "sequential.sequential".parse().unwrap();
        assert_eq!(
            names(&infer(&ops, &s, &p)),
            [
                "block_size_x",
                "block_size_y",
                "logical_warp_size",
                "enable_unroll1",
                "enable_unroll2"
            ]
        );
    }

    #[test]
    fn pvalue_parse() {
        assert_eq!(PValue::parse("12"), Some(PValue::Int(12)));
        assert_eq!(PValue::parse("warp"), Some(PValue::Str("warp".into())));
        assert_eq!(PValue::parse("Bad-x"), None);
    }
}
