//! The search-space model and its Rust builder.
//!
//! A [`Space`] is settings (named constants), iterators (loop variables with a domain),
//! derived values (named expressions) and constraints (boolean expressions that *reject* a
//! point when true, each in a [`Class`]). Expressions are Python expression text (see
//! `parse.rs`) or, from Rust, closures over named arguments.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use super::error::BeastError;
use super::expr::NativeFn;
use super::parse::parse_expr;
use super::value::Value;

/// Constraint classes (paper, Section IX-E).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    /// Hardware limits: the kernel would not compile or launch.
    Hard,
    /// Correct but guaranteed to perform poorly.
    Soft,
    /// Violates the kernel's algorithmic assumptions.
    Correctness,
}

impl Class {
    pub const ALL: [Class; 3] = [Class::Hard, Class::Soft, Class::Correctness];

    pub fn name(self) -> &'static str {
        match self {
            Class::Hard => "hard",
            Class::Soft => "soft",
            Class::Correctness => "correctness",
        }
    }

    pub fn parse(s: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.name() == s)
    }
}

/// A closure iterator (the paper's generator-based "closure iterators"): called with the
/// values of its named arguments, returns the values to iterate over.
pub type GeneratorFn = Arc<dyn Fn(&[Value]) -> Result<Vec<Value>, String> + Send + Sync>;

/// The domain of an iterator.
#[derive(Clone)]
pub enum Domain {
    /// A Python expression evaluating to a `range`, a list, or a single value, e.g.
    /// `range(dim_m, max_x + 1, dim_m)`, `[1, 2, 4]`, `0 if v == 1 else range(2)`.
    Expr(String),
    /// An explicit list of values.
    Values(Vec<Value>),
    /// A closure iterator over the values of the named arguments.
    Generator { args: Vec<String>, f: GeneratorFn },
    /// Elements of the left domain, then those of the right one not already present.
    Union(Box<Domain>, Box<Domain>),
    /// Elements of the left domain that are also in the right one.
    Intersection(Box<Domain>, Box<Domain>),
    /// Elements of the left domain that are not in the right one.
    Difference(Box<Domain>, Box<Domain>),
}

impl Domain {
    pub fn expr(src: impl Into<String>) -> Domain {
        Domain::Expr(src.into())
    }

    /// `range(start, stop, step)` whose bounds are expressions.
    pub fn range(
        start: impl Into<String>,
        stop: impl Into<String>,
        step: impl Into<String>,
    ) -> Domain {
        Domain::Expr(format!(
            "range({}, {}, {})",
            start.into(),
            stop.into(),
            step.into()
        ))
    }

    pub fn values<T: Into<Value>>(vals: impl IntoIterator<Item = T>) -> Domain {
        Domain::Values(vals.into_iter().map(Into::into).collect())
    }

    pub fn single(v: impl Into<Value>) -> Domain {
        Domain::Values(vec![v.into()])
    }

    /// A closure iterator. `f` receives the values of `args` (settings, iterators or derived
    /// values) and yields anything convertible to [`Value`].
    pub fn generator<I, T, F>(args: &[&str], f: F) -> Domain
    where
        F: Fn(&[Value]) -> I + Send + Sync + 'static,
        I: IntoIterator<Item = T>,
        T: Into<Value>,
    {
        Domain::Generator {
            args: args.iter().map(|s| s.to_string()).collect(),
            f: Arc::new(move |a: &[Value]| Ok(f(a).into_iter().map(Into::into).collect())),
        }
    }

    pub fn union(a: Domain, b: Domain) -> Domain {
        Domain::Union(Box::new(a), Box::new(b))
    }

    pub fn intersection(a: Domain, b: Domain) -> Domain {
        Domain::Intersection(Box::new(a), Box::new(b))
    }

    pub fn difference(a: Domain, b: Domain) -> Domain {
        Domain::Difference(Box::new(a), Box::new(b))
    }

    pub(super) fn expr_sources(&self) -> Vec<&str> {
        match self {
            Domain::Expr(s) => vec![s.as_str()],
            Domain::Values(_) | Domain::Generator { .. } => vec![],
            Domain::Union(a, b) | Domain::Intersection(a, b) | Domain::Difference(a, b) => {
                let mut v = a.expr_sources();
                v.extend(b.expr_sources());
                v
            }
        }
    }
}

impl fmt::Debug for Domain {
    /// The structure; a closure iterator shows its arguments and `<closure>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Domain::Expr(s) => f.debug_tuple("Expr").field(s).finish(),
            Domain::Values(v) => f.debug_tuple("Values").field(v).finish(),
            Domain::Generator { args, f: _ } => f
                .debug_struct("Generator")
                .field("args", args)
                .field("f", &format_args!("<closure>"))
                .finish(),
            Domain::Union(a, b) => f.debug_tuple("Union").field(a).field(b).finish(),
            Domain::Intersection(a, b) => f.debug_tuple("Intersection").field(a).field(b).finish(),
            Domain::Difference(a, b) => f.debug_tuple("Difference").field(a).field(b).finish(),
        }
    }
}

impl From<&str> for Domain {
    fn from(s: &str) -> Domain {
        Domain::Expr(s.to_string())
    }
}

impl From<String> for Domain {
    fn from(s: String) -> Domain {
        Domain::Expr(s)
    }
}

/// The definition of a derived value or constraint.
#[derive(Clone)]
pub enum Source {
    /// Python expression text.
    Text(String),
    /// A Rust closure over the named arguments.
    Native { args: Vec<String>, f: NativeFn },
}

impl fmt::Debug for Source {
    /// The text, or a native closure's arguments and `<closure>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Text(s) => f.debug_tuple("Text").field(s).finish(),
            Source::Native { args, f: _ } => f
                .debug_struct("Native")
                .field("args", args)
                .field("f", &format_args!("<closure>"))
                .finish(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct IteratorDef {
    pub name: String,
    pub domain: Domain,
}

#[derive(Clone, Debug)]
pub struct DerivedDef {
    pub name: String,
    pub source: Source,
}

#[derive(Clone, Debug)]
pub struct ConstraintDef {
    pub name: String,
    pub class: Class,
    pub source: Source,
}

/// A search space. Build one with [`Space::builder`] or load one with [`Space::from_toml_str`].
#[derive(Clone, Debug, Default)]
pub struct Space {
    pub name: String,
    pub description: String,
    pub settings: Vec<(String, Value)>,
    pub iterators: Vec<IteratorDef>,
    pub derived: Vec<DerivedDef>,
    pub constraints: Vec<ConstraintDef>,
    /// Optional explicit loop order (a prefix is enough; the rest is chosen by the planner).
    pub loop_order: Option<Vec<String>>,
    /// For spaces read from TOML: entry name -> (line, column) where its expression starts.
    pub(super) file_positions: HashMap<String, (usize, usize)>,
}

impl Space {
    pub fn builder(name: impl Into<String>) -> SpaceBuilder {
        SpaceBuilder {
            space: Space {
                name: name.into(),
                ..Space::default()
            },
        }
    }

    /// Where `entry`'s expression starts in the TOML file, if it came from one.
    pub fn file_position(&self, entry: &str) -> Option<(usize, usize)> {
        self.file_positions.get(entry).copied()
    }

    /// Check names for duplicates and every expression for syntax errors.
    pub fn validate(&self) -> Result<(), BeastError> {
        let mut seen = HashSet::new();
        let all = self
            .settings
            .iter()
            .map(|(n, _)| n)
            .chain(self.iterators.iter().map(|i| &i.name))
            .chain(self.derived.iter().map(|d| &d.name))
            .chain(self.constraints.iter().map(|c| &c.name));
        for n in all {
            if !is_identifier(n) {
                return Err(BeastError::invalid(n, "not a valid identifier"));
            }
            if !seen.insert(n.as_str()) {
                return Err(BeastError::invalid(n, "defined more than once"));
            }
        }
        for c in &self.constraints {
            if Class::parse(&c.name).is_some() {
                return Err(BeastError::invalid(
                    &c.name,
                    "a constraint cannot be named like a class",
                ));
            }
        }
        for it in &self.iterators {
            for src in it.domain.expr_sources() {
                self.parse_entry(&it.name, src)?;
            }
        }
        for d in &self.derived {
            if let Source::Text(s) = &d.source {
                self.parse_entry(&d.name, s)?;
            }
        }
        for c in &self.constraints {
            if let Source::Text(s) = &c.source {
                self.parse_entry(&c.name, s)?;
            }
        }
        Ok(())
    }

    /// Parse `src` as the expression of `entry`, mapping errors to [`BeastError::Parse`].
    pub(super) fn parse_entry(
        &self,
        entry: &str,
        src: &str,
    ) -> Result<super::expr::Expr, BeastError> {
        parse_expr(src).map_err(|e| BeastError::Parse {
            entry: entry.to_string(),
            column: e.pos as usize + 1,
            message: e.message,
            file_pos: self.file_pos_of(entry, e.pos as usize),
        })
    }

    /// File position of character `offset` of `entry`'s expression.
    pub(super) fn file_pos_of(&self, entry: &str, offset: usize) -> Option<(usize, usize)> {
        self.file_positions
            .get(entry)
            .map(|&(l, c)| (l, c + offset))
    }
}

pub(super) fn is_identifier(s: &str) -> bool {
    let mut cs = s.chars();
    matches!(cs.next(), Some(c) if c.is_alphabetic() || c == '_')
        && cs.all(|c| c.is_alphanumeric() || c == '_')
}

/// Builder for [`Space`]. Expressions are checked by [`SpaceBuilder::build`].
#[derive(Debug)]
pub struct SpaceBuilder {
    space: Space,
}

impl SpaceBuilder {
    pub fn description(mut self, d: impl Into<String>) -> Self {
        self.space.description = d.into();
        self
    }

    /// A named constant (device property, precision, ...).
    pub fn setting(mut self, name: impl Into<String>, v: impl Into<Value>) -> Self {
        self.space.settings.push((name.into(), v.into()));
        self
    }

    /// An iterator; `domain` may be expression text (`"range(1, n + 1)"`) or a [`Domain`].
    pub fn iterator(mut self, name: impl Into<String>, domain: impl Into<Domain>) -> Self {
        self.space.iterators.push(IteratorDef {
            name: name.into(),
            domain: domain.into(),
        });
        self
    }

    /// An iterator over an explicit list of values.
    pub fn values<T: Into<Value>>(
        self,
        name: impl Into<String>,
        vals: impl IntoIterator<Item = T>,
    ) -> Self {
        self.iterator(name, Domain::values(vals))
    }

    /// A closure iterator (see [`Domain::generator`]).
    pub fn generator<I, T, F>(self, name: impl Into<String>, args: &[&str], f: F) -> Self
    where
        F: Fn(&[Value]) -> I + Send + Sync + 'static,
        I: IntoIterator<Item = T>,
        T: Into<Value>,
    {
        self.iterator(name, Domain::generator(args, f))
    }

    /// A derived value given by a Python expression.
    pub fn derived(mut self, name: impl Into<String>, expr: impl Into<String>) -> Self {
        self.space.derived.push(DerivedDef {
            name: name.into(),
            source: Source::Text(expr.into()),
        });
        self
    }

    /// A derived value computed by a Rust closure from the named arguments.
    pub fn derived_fn<F>(mut self, name: impl Into<String>, args: &[&str], f: F) -> Self
    where
        F: Fn(&[Value]) -> Result<Value, String> + Send + Sync + 'static,
    {
        let args = args.iter().map(|s| s.to_string()).collect();
        self.space.derived.push(DerivedDef {
            name: name.into(),
            source: Source::Native {
                args,
                f: Arc::new(f),
            },
        });
        self
    }

    /// A constraint: the point is rejected when `expr` is true.
    pub fn constraint(
        mut self,
        name: impl Into<String>,
        class: Class,
        expr: impl Into<String>,
    ) -> Self {
        self.space.constraints.push(ConstraintDef {
            name: name.into(),
            class,
            source: Source::Text(expr.into()),
        });
        self
    }

    /// A constraint computed by a Rust closure (rejects when it returns true).
    pub fn constraint_fn<F>(
        mut self,
        name: impl Into<String>,
        class: Class,
        args: &[&str],
        f: F,
    ) -> Self
    where
        F: Fn(&[Value]) -> bool + Send + Sync + 'static,
    {
        let args = args.iter().map(|s| s.to_string()).collect();
        let f: NativeFn = Arc::new(move |a: &[Value]| Ok(Value::Bool(f(a))));
        self.space.constraints.push(ConstraintDef {
            name: name.into(),
            class,
            source: Source::Native { args, f },
        });
        self
    }

    /// Fix the outermost loops (the planner orders the rest).
    pub fn loop_order(mut self, names: &[&str]) -> Self {
        self.space.loop_order = Some(names.iter().map(|s| s.to_string()).collect());
        self
    }

    pub fn build(self) -> Result<Space, BeastError> {
        self.space.validate()?;
        Ok(self.space)
    }
}
