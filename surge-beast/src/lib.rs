//! BEAST search-space engine: declarative iterators, derived values and constraints;
//! DAG-ordered, hoisted, bound-tightened, parallel enumeration. The crate's `README.md`
//! describes the concepts and the file layout.
//!
//! ```
//! # use surge_beast::*;
//! let space = Space::builder("demo")
//!     .setting("max_threads", 64)
//!     .iterator("x", "range(1, max_threads + 1)")
//!     .iterator("y", "range(x, max_threads + 1, x)")
//!     .derived("t", "x * y")
//!     .constraint("too_big", Class::Hard, "t > max_threads")
//!     .build()
//!     .unwrap();
//! let plan = space.plan(&PlanOptions::default()).unwrap();
//! let stats = plan.count(&RunOptions::threads(2)).unwrap();
//! assert!(stats.survivors > 0);
//! ```

mod enumerate;
mod error;
mod expr;
mod lex;
mod parse;
mod plan;
mod space;
mod stats;
mod toml;
mod value;

pub use self::enumerate::{Point, Points, RunOptions};
pub use self::error::BeastError;
pub use self::expr::{Builtin, EvalError, Expr, ExprKind, NativeFn, Resolved};
pub use self::lex::ParseError;
pub use self::parse::parse_expr;
pub use self::plan::{ConstraintInfo, Plan, PlanOptions};
pub use self::space::{
    Class, ConstraintDef, DerivedDef, Domain, GeneratorFn, IteratorDef, Source, Space, SpaceBuilder,
};
pub use self::stats::{LevelStats, RejectStats, Stats};
pub use self::value::{BinOp, CmpOp, PyRange, UnOp, Value};

/// Parse and evaluate a constant Python expression (no names), e.g. `"7 // -2"` -> `-4`.
/// Useful for checking the language's semantics.
pub fn eval_str(src: &str) -> Result<Value, BeastError> {
    let e = parse_expr(src).map_err(|e| BeastError::Parse {
        entry: "<expr>".into(),
        column: e.pos as usize + 1,
        message: e.message,
        file_pos: None,
    })?;
    if let Some((n, pos)) = e.names().into_iter().next() {
        return Err(BeastError::UnknownName {
            entry: "<expr>".into(),
            column: pos as usize + 1,
            name: n,
            file_pos: None,
        });
    }
    e.eval(&[]).map_err(|e| BeastError::Eval {
        entry: "<expr>".into(),
        column: e.pos as usize + 1,
        message: e.message,
    })
}
