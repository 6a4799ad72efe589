//! A built computation: the lowered IR plus the data bound to its inputs.

use crate::Result;
use crate::dsel::node::lower;
use crate::dsel::{Element, Scalar, Seq, Sym};
use surge_codegen::analysis::{self, Analysis, Features};
use surge_codegen::data::Buffer;
use surge_codegen::ir;
use surge_codegen::ir::Value;
use surge_codegen::variant_set::VariantSet;

/// One nested data-parallel computation, ready to analyze or run.
#[derive(Debug, Clone)]
pub struct Computation {
    ir: ir::Computation,
    buffers: Vec<Buffer>,
    /// Unique per construction: the inputs never change after it, so data layouts built from
    /// them (the CPU backend's diagonal copy) can be kept under this key. A clone has equal
    /// inputs and keeps it.
    id: u64,
    /// The analysis, computed on first use: a tuned run asks for the features (which need it)
    /// once per selection, and analysing the IR again was half of a 20 µs feature pass.
    analysis: std::sync::OnceLock<Analysis>,
    /// The inferred features, computed on first use: they depend on the IR and the inputs'
    /// lengths and offsets, which never change after construction. A tuning input computes
    /// them when it is built (for its work), and selection asks again: the type inference
    /// under them cost 5-38 µs, up to 0.14 of one SpMV on the smaller `matrices-large`.
    features: std::sync::OnceLock<Features>,
}

fn next_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Computation {
    /// Builds the computation whose result is `root` (a `Seq` or `Scalar` handle).
    ///
    /// A lambda's parameter used outside its lambda (a closure that stored its argument, or a
    /// value computed from it, somewhere that outlives the call) is an error naming the line
    /// that used it and the lambda's line.
    ///
    /// A program without a data-parallel operator (an input returned as it is, scalar code over
    /// `len` and `at` of the inputs) is given one that computes the same result
    /// ([`ir::anchored`]: a copy, or one element), so that every backend runs it natively.
    #[track_caller]
    pub fn new<S: Sym>(root: &S) -> Result<Self> {
        let (ir, buffers) = lower(&root.to_node())?;
        Ok(Computation {
            ir: ir::anchored(&ir).unwrap_or(ir),
            buffers,
            id: next_id(),
            analysis: std::sync::OnceLock::new(),
            features: std::sync::OnceLock::new(),
        })
    }

    /// A computation from raw IR and buffers (validated; anchored as in [`new`](Self::new)).
    pub fn from_ir(ir: ir::Computation, buffers: Vec<Buffer>) -> Result<Self> {
        ir.validate()?;
        analysis::check_buffers(&ir, &buffers)?;
        Ok(Computation {
            ir: ir::anchored(&ir).unwrap_or(ir),
            buffers,
            id: next_id(),
            analysis: std::sync::OnceLock::new(),
            features: std::sync::OnceLock::new(),
        })
    }

    pub fn ir(&self) -> &ir::Computation {
        &self.ir
    }
    pub fn buffers(&self) -> &[Buffer] {
        &self.buffers
    }
    /// The input buffers, given back (to rebind them to another computation of the same
    /// structure without copying: `Computation::from_ir`).
    pub fn into_buffers(self) -> Vec<Buffer> {
        self.buffers
    }
    /// This computation's identity (see the field); equal only for clones.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Phases, expression sequences and fusion groups.
    pub fn analyze(&self) -> Result<Analysis> {
        Ok(self.analysis()?.clone())
    }

    /// The analysis, computed once per computation (and clone).
    fn analysis(&self) -> Result<&Analysis> {
        if let Some(a) = self.analysis.get() {
            return Ok(a);
        }
        let a = analysis::analyze(&self.ir)?;
        Ok(self.analysis.get_or_init(|| a))
    }

    /// The computation's variants on `platform` (every phase's pruned space, the default, lookup
    /// by id): what `Kernels`, `surge variants`, `surge emit`, bench and the tuners enumerate.
    pub fn variants(&self, platform: &surge_codegen::target::Platform) -> Result<VariantSet> {
        Ok(VariantSet::new(self.analysis()?, platform)?)
    }

    /// The inferred input features (length, aspect ratio, average row length), computed once
    /// per computation (and clone).
    pub fn features(&self) -> Result<Features> {
        if let Some(f) = self.features.get() {
            return Ok(f.clone());
        }
        let f = analysis::features(&self.ir, self.analysis()?, &self.buffers)?;
        Ok(self.features.get_or_init(|| f).clone())
    }

    /// Evaluates with the reference interpreter (the correctness oracle; slow).
    pub fn interpret(&self) -> Result<Value> {
        Ok(surge_codegen::ir::interpret(&self.ir, &self.buffers)?)
    }
}

/// Evaluating a handle with the reference interpreter into plain Rust values.
pub trait Interpret {
    type Output;
    #[track_caller]
    fn interpret(&self) -> Result<Self::Output>;
}

fn unexpected(what: &str) -> ! {
    panic!("internal: interpreter returned a value that is not {what}")
}

fn scalar_of<T: Element>(v: &Value) -> T {
    v.as_scalar()
        .and_then(T::from_value)
        .unwrap_or_else(|| unexpected(T::ELEM.name()))
}

impl<T: Element> Interpret for Scalar<T> {
    type Output = T;
    #[track_caller]
    fn interpret(&self) -> Result<T> {
        Ok(scalar_of(&Computation::new(self)?.interpret()?))
    }
}

impl<T: Element> Interpret for Seq<T> {
    type Output = Vec<T>;
    #[track_caller]
    fn interpret(&self) -> Result<Vec<T>> {
        let v = Computation::new(self)?.interpret()?;
        Ok(v.as_seq()
            .unwrap_or_else(|| unexpected("a sequence"))
            .iter()
            .map(scalar_of)
            .collect())
    }
}

impl<T: Element> Interpret for Seq<Seq<T>> {
    type Output = Vec<Vec<T>>;
    #[track_caller]
    fn interpret(&self) -> Result<Vec<Vec<T>>> {
        let v = Computation::new(self)?.interpret()?;
        let rows = v.as_seq().unwrap_or_else(|| unexpected("a sequence"));
        Ok(rows
            .iter()
            .map(|r| {
                r.as_seq()
                    .unwrap_or_else(|| unexpected("a row"))
                    .iter()
                    .map(scalar_of)
                    .collect()
            })
            .collect())
    }
}
