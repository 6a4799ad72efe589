//! A variant's parameters, typed and decoded once (errors name the variant and the parameter),
//! instead of strings re-read where they are used. CPU variants decode to [`CpuParams`] (what the
//! host skeletons and the CPU emitter read), CUDA variants to [`CudaParams`] (what the CUDA
//! emitter reads). Whether values *fit together* (a block shape, a resource for a schedule) is
//! checked by their consumer, which knows the schedule and the device.

use crate::CodegenError;
use crate::policy::PValue;
use crate::policy::bcsr::BcsrShape;
use crate::policy::sell::SellShape;
use crate::schedule::ScheduleElem;
use crate::variant::Variant;

/// Loop schedule of a parallel CPU level (OpenMP's: `static`, `dynamic`, `guided`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopSchedule {
    Static,
    Dynamic,
    Guided,
}

/// One schedule level of a CPU variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuLevel {
    /// `sched<d>` and `chunk<d>` of a parallel level; `None` for a sequential one.
    pub parallel: Option<(LoopSchedule, usize)>,
    /// `unroll<d>`: four accumulators over four contiguous quarters (changes the emitted code).
    pub unroll: bool,
}

/// A CPU variant's parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuParams {
    pub threads: usize,
    /// `nesting = 1`: nested parallelism allowed (an inner parallel level under an outer one).
    pub nesting: bool,
    /// `layout1 = diagonals`.
    pub diagonals: bool,
    /// `layout1 = sell_<C>_<σ>`: the SELL-C-σ layout's shape.
    pub sell: Option<SellShape>,
    /// `layout1 = bcsr_<r>_<c>`: the register-blocked layout's block shape.
    pub bcsr: Option<BcsrShape>,
    /// `layout1 = lanes`: the rows, each row's sum in four partial sums (`f64` SpMV only).
    pub lanes: bool,
    pub levels: Vec<CpuLevel>,
}

/// Reads one variant's parameters with errors naming it.
struct Reader<'a> {
    v: &'a Variant,
}

impl Reader<'_> {
    fn bad(&self, message: String) -> CodegenError {
        CodegenError::Variant {
            id: self.v.id(),
            message,
        }
    }
    fn int(&self, k: &str) -> Result<Option<i64>, CodegenError> {
        match self.v.get(k) {
            None => Ok(None),
            Some(PValue::Int(i)) => Ok(Some(*i)),
            Some(other) => Err(self.bad(format!("parameter `{k}` = {other} is not an integer"))),
        }
    }
    fn positive(&self, k: &str) -> Result<usize, CodegenError> {
        match self.int(k)? {
            Some(i) if i > 0 => Ok(i as usize),
            Some(i) => Err(self.bad(format!("parameter `{k}` = {i} is not a positive integer"))),
            None => Err(self.bad(format!("parameter `{k}` is missing"))),
        }
    }
    fn flag(&self, k: &str) -> Result<bool, CodegenError> {
        Ok(self.int(k)?.is_some_and(|i| i != 0))
    }
    fn text(&self, k: &str) -> Result<Option<String>, CodegenError> {
        match self.v.get(k) {
            None => Ok(None),
            Some(PValue::Str(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.bad(format!("parameter `{k}` = {other} is not a name"))),
        }
    }
}

impl CpuParams {
    /// Decodes a CPU variant's parameters.
    pub fn of(v: &Variant) -> Result<CpuParams, CodegenError> {
        let r = Reader { v };
        let threads = r.positive("threads")?;
        let nesting = r.flag("nesting")?;
        let mut levels = Vec::new();
        for (i, e) in v.schedule.elems().iter().enumerate() {
            let d = i + 1;
            let parallel = match e {
                ScheduleElem::Sequential => None,
                _ => Some((
                    r.schedule(&format!("sched{d}"))?,
                    r.positive(&format!("chunk{d}"))?,
                )),
            };
            let unroll = r.flag(&format!("unroll{d}"))?;
            levels.push(CpuLevel { parallel, unroll });
        }
        let layout = r.text("layout1")?;
        let lanes = layout.as_deref() == Some("lanes");
        let (diagonals, sell, bcsr) = match layout.as_deref() {
            None | Some("rows" | "lanes") => (false, None, None),
            Some("diagonals") => (true, None, None),
            Some(other) => match (SellShape::parse(other), BcsrShape::parse(other)) {
                (Some(s), _) => (false, Some(s), None),
                (None, Some(b)) => (false, None, Some(b)),
                (None, None) => {
                    let shapes: Vec<String> = SellShape::all()
                        .iter()
                        .map(|s| s.to_string())
                        .chain(BcsrShape::all().iter().map(|s| s.to_string()))
                        .collect();
                    return Err(r.bad(format!(
                        "`layout1` = {other} is not rows, diagonals, lanes or one of {}",
                        shapes.join(", ")
                    )));
                }
            },
        };
        Ok(CpuParams {
            threads,
            nesting,
            diagonals,
            sell,
            bcsr,
            lanes,
            levels,
        })
    }

    /// The `unroll<d>` flags of levels 1..=4: the parameters that shape the emitted code.
    pub fn unroll_flags(&self) -> Vec<bool> {
        (0..4)
            .map(|i| self.levels.get(i).is_some_and(|l| l.unroll))
            .collect()
    }
}

impl Reader<'_> {
    fn schedule(&self, k: &str) -> Result<LoopSchedule, CodegenError> {
        match self.text(k)?.as_deref() {
            Some("static") => Ok(LoopSchedule::Static),
            Some("dynamic") => Ok(LoopSchedule::Dynamic),
            Some("guided") => Ok(LoopSchedule::Guided),
            other => Err(self.bad(format!(
                "`{k}` = {other:?} is not static, dynamic or guided"
            ))),
        }
    }
}

/// A CUDA variant's parameters. Those a schedule does not use are `None`; the emitter asks for
/// the ones its schedule needs ([`CudaParams::need`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CudaParams {
    pub id: String,
    pub bx: i64,
    pub by: i64,
    /// Logical warp size.
    pub lw: i64,
    /// Elements per resource per step of an independent outer level.
    pub grain1: Option<i64>,
    pub unroll1: Option<bool>,
    pub unroll2: Option<bool>,
    /// Execution resource of level 1 and 2: `thread`, `warp` or `block`.
    pub res1: Option<String>,
    pub res2: Option<String>,
    /// Block algorithm of a cooperative reduce (`raking`, `warp_reductions`) or scan (`raking`,
    /// `warp_scans`).
    pub reduce2: Option<String>,
    pub scan2: Option<String>,
    pub scan_grain2: Option<i64>,
    /// Block algorithm of a root reduction's one level.
    pub reduce1: Option<String>,
    /// Block algorithm and items per thread of a root scan's one level.
    pub scan1: Option<String>,
    pub scan_grain1: Option<i64>,
}

impl CudaParams {
    /// Decodes a CUDA variant's parameters.
    pub fn of(v: &Variant) -> Result<CudaParams, CodegenError> {
        let r = Reader { v };
        let need = |k: &str| {
            r.int(k)?
                .ok_or_else(|| r.bad(format!("parameter `{k}` is missing")))
        };
        Ok(CudaParams {
            id: v.id(),
            bx: need("bx")?,
            by: need("by")?,
            lw: need("lw")?,
            grain1: r.int("grain1")?,
            unroll1: r.int("unroll1")?.map(|i| i != 0),
            unroll2: r.int("unroll2")?.map(|i| i != 0),
            res1: r.text("res1")?,
            res2: r.text("res2")?,
            reduce2: r.text("reduce2")?,
            scan2: r.text("scan2")?,
            scan_grain2: r.int("scan_grain2")?,
            reduce1: r.text("reduce1")?,
            scan1: r.text("scan1")?,
            scan_grain1: r.int("scan_grain1")?,
        })
    }

    /// The parameters of a one-level (root reduction or scan) variant as the inner level under
    /// a sequential outer level of one element: level 1's resource, unrolling, block algorithm
    /// and scan grain become level 2's.
    pub fn as_inner_level(&self) -> CudaParams {
        CudaParams {
            grain1: None,
            unroll1: Some(false),
            unroll2: self.unroll1,
            res2: self.res1.clone(),
            reduce2: self.reduce1.clone(),
            scan2: self.scan1.clone(),
            scan_grain2: self.scan_grain1,
            ..self.clone()
        }
    }

    /// An error naming this variant.
    pub fn bad(&self, message: String) -> CodegenError {
        CodegenError::Variant {
            id: self.id.clone(),
            message,
        }
    }

    /// A parameter the schedule needs, or an error saying it is missing.
    pub fn need<T: Clone>(&self, value: &Option<T>, name: &str) -> Result<T, CodegenError> {
        value
            .clone()
            .ok_or_else(|| self.bad(format!("parameter `{name}` is missing")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_parameters_decode_once_with_errors_naming_the_parameter() {
        let v: Variant = "cpu:haswell32/independent.sequential/threads=32,nesting=0,sched1=dynamic,chunk1=64,unroll2=1,layout1=diagonals"
            .parse()
            .unwrap();
        let p = CpuParams::of(&v).unwrap();
        assert_eq!(p.threads, 32);
        assert!(!p.nesting && p.diagonals);
        assert_eq!(p.levels[0].parallel, Some((LoopSchedule::Dynamic, 64)));
        assert_eq!(
            p.levels[1],
            CpuLevel {
                parallel: None,
                unroll: true
            }
        );
        assert_eq!(p.unroll_flags(), [false, true, false, false]);
        assert_eq!(p.sell, None);
        let sell: Variant = "cpu:haswell32/independent.sequential/threads=2,nesting=0,sched1=static,chunk1=64,unroll2=0,layout1=sell_16_256"
            .parse()
            .unwrap();
        let p = CpuParams::of(&sell).unwrap();
        assert_eq!(
            p.sell,
            Some(SellShape {
                chunk: 16,
                sigma: 256
            })
        );
        assert!(!p.diagonals);
        assert_eq!(p.bcsr, None);
        let bcsr: Variant = "cpu:haswell32/independent.sequential/threads=2,nesting=0,sched1=static,chunk1=64,unroll2=0,layout1=bcsr_3_3"
            .parse()
            .unwrap();
        let p = CpuParams::of(&bcsr).unwrap();
        assert_eq!(p.bcsr, Some(BcsrShape { r: 3, c: 3 }));
        assert_eq!((p.sell, p.diagonals), (None, false));
        let odd: Variant = "cpu:haswell32/independent.sequential/threads=2,nesting=0,sched1=static,chunk1=64,unroll2=0,layout1=sell_12_1"
            .parse()
            .unwrap();
        let e = CpuParams::of(&odd).unwrap_err().to_string();
        assert!(
            e.contains("`layout1` = sell_12_1 is not rows, diagonals, lanes or one of sell_8_1"),
            "{e}"
        );
        assert!(
            e.contains("sell_16_4096, bcsr_2_2, bcsr_3_3, bcsr_4_2"),
            "{e}"
        );
        let bad: Variant = "cpu:haswell32/independent/threads=2,sched1=sideways,chunk1=4"
            .parse()
            .unwrap();
        let e = CpuParams::of(&bad).unwrap_err().to_string();
        assert!(
            e.contains("`sched1` = Some(\"sideways\") is not static, dynamic or guided"),
            "{e}"
        );
    }

    #[test]
    fn cuda_parameters_decode_and_missing_ones_are_named_when_needed() {
        let v: Variant = "cuda:h200/independent.cooperative/bx=128,by=1,lw=8,grain1=4,res1=warp,res2=warp,reduce2=raking"
            .parse()
            .unwrap();
        let p = CudaParams::of(&v).unwrap();
        assert_eq!((p.bx, p.by, p.lw, p.grain1), (128, 1, 8, Some(4)));
        assert_eq!(p.reduce2.as_deref(), Some("raking"));
        let e = p
            .need(&p.scan_grain2, "scan_grain2")
            .unwrap_err()
            .to_string();
        assert!(e.ends_with("parameter `scan_grain2` is missing"), "{e}");
    }
}
