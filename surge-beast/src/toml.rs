//! Loading spaces from TOML.
//!
//! ```toml
//! [space]
//! name = "example"
//! loop_order = ["dim_m"]          # optional prefix of the loop order
//!
//! [settings]                      # TOML literals: int, float, bool, string, (nested) arrays
//! max_threads = 1024
//! precision = "double"
//!
//! [iterators]                     # declaration order = field order of every point
//! dim_m = "range(1, max_threads + 1)"   # Python expression: range, list or single value
//! tex = [0, 1]                          # explicit list
//! one = 4                               # single value
//! p = { generator = "primes", args = ["MAX"] }   # closure iterator registered from Rust
//!
//! [derived]                       # Python expressions, any order (the DAG sorts them)
//! threads = "dim_m * dim_n"
//!
//! [constraints.hard]              # reject the point when the expression is true
//! too_many = "threads > max_threads"
//! [constraints.soft]
//! [constraints.correctness]
//! ```

use std::collections::HashMap;
use std::path::Path;

use super::error::BeastError;
use super::space::{
    Class, ConstraintDef, DerivedDef, Domain, GeneratorFn, IteratorDef, Source, Space,
};
use super::value::Value;

fn toml_value(entry: &str, v: &::toml::Value) -> Result<Value, BeastError> {
    Ok(match v {
        ::toml::Value::Integer(i) => Value::Int(*i),
        ::toml::Value::Float(f) => Value::Float(*f),
        ::toml::Value::Boolean(b) => Value::Bool(*b),
        ::toml::Value::String(s) => Value::str(s),
        ::toml::Value::Array(a) => Value::list(
            a.iter()
                .map(|x| toml_value(entry, x))
                .collect::<Result<_, _>>()?,
        ),
        other => {
            return Err(BeastError::invalid(
                entry,
                format!("unsupported TOML value of type {}", other.type_str()),
            ));
        }
    })
}

fn table<'a>(doc: &'a ::toml::Table, key: &str) -> Result<Option<&'a ::toml::Table>, BeastError> {
    match doc.get(key) {
        None => Ok(None),
        Some(::toml::Value::Table(t)) => Ok(Some(t)),
        Some(_) => Err(BeastError::invalid(key, "must be a table")),
    }
}

fn line_col(src: &str, byte: usize) -> (usize, usize) {
    let before = &src[..byte.min(src.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// Best-effort location of the first character of the string value of `key` in section
/// `section` (e.g. `"iterators"`, `"constraints.hard"`): (line, column), both 1-based.
fn locate(src: &str, section: &str, key: &str) -> Option<(usize, usize)> {
    let mut in_section = false;
    let mut offset = 0;
    for line in src.split_inclusive('\n') {
        let t = line.trim();
        if t.starts_with('[') {
            let name = t
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or("")
                .trim();
            in_section = name == section;
        } else if in_section && let Some(rest) = t.strip_prefix(key) {
            let rest = rest.trim_start();
            if let Some(val) = rest.strip_prefix('=') {
                let val = val.trim_start();
                if val.starts_with('"') || val.starts_with('\'') {
                    let quote_at = line.find(val).unwrap_or(0);
                    let (l, c) = line_col(src, offset + quote_at);
                    let triple = val.starts_with("\"\"\"") || val.starts_with("'''");
                    // Column of the first character inside the quotes.
                    return Some((l, c + if triple { 3 } else { 1 }));
                }
            }
        }
        offset += line.len();
    }
    None
}

impl Space {
    /// Load a space from TOML text.
    pub fn from_toml_str(src: &str) -> Result<Space, BeastError> {
        Space::from_toml_str_with(src, &HashMap::new())
    }

    /// Load a space from a TOML file.
    pub fn from_toml_file(path: impl AsRef<Path>) -> Result<Space, BeastError> {
        let p = path.as_ref();
        let src = std::fs::read_to_string(p).map_err(|e| BeastError::Io {
            path: p.display().to_string(),
            message: e.to_string(),
        })?;
        Space::from_toml_str(&src)
    }

    /// Load a space whose iterators may name closure iterators registered in `generators`.
    pub fn from_toml_str_with(
        src: &str,
        generators: &HashMap<String, GeneratorFn>,
    ) -> Result<Space, BeastError> {
        let doc = parse_document(src)?;
        let mut space = Space::default();
        if let Some(meta) = table(&doc, "space")? {
            read_meta(&mut space, meta)?;
        }
        if let Some(t) = table(&doc, "settings")? {
            for (k, v) in t {
                space.settings.push((k.clone(), toml_value(k, v)?));
            }
        }
        if let Some(t) = table(&doc, "iterators")? {
            read_iterators(&mut space, src, t, generators)?;
        }
        if let Some(t) = table(&doc, "derived")? {
            read_derived(&mut space, src, t)?;
        }
        if let Some(t) = table(&doc, "constraints")? {
            read_constraints(&mut space, src, t)?;
        }
        if space.name.is_empty() {
            space.name = "space".into();
        }
        space.validate()?;
        Ok(space)
    }
}

/// Parses the TOML text and checks that it has only the known sections.
fn parse_document(src: &str) -> Result<::toml::Table, BeastError> {
    let doc: ::toml::Table = src.parse().map_err(|e: ::toml::de::Error| {
        let (line, column) = e.span().map_or((0, 0), |s| line_col(src, s.start));
        BeastError::Toml {
            line,
            column,
            message: e.message().to_string(),
        }
    })?;
    for k in doc.keys() {
        if !["space", "settings", "iterators", "derived", "constraints"].contains(&k.as_str()) {
            return Err(BeastError::invalid(
                k,
                "unknown section (expected space, settings, iterators, derived, constraints)",
            ));
        }
    }
    Ok(doc)
}

/// The `[space]` section: name, description and loop order.
fn read_meta(space: &mut Space, meta: &::toml::Table) -> Result<(), BeastError> {
    for (k, v) in meta {
        match (k.as_str(), v) {
            ("name", ::toml::Value::String(s)) => space.name = s.clone(),
            ("description", ::toml::Value::String(s)) => space.description = s.clone(),
            ("loop_order", ::toml::Value::Array(a)) => {
                let names = a
                    .iter()
                    .map(|x| x.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| {
                        BeastError::invalid("loop_order", "must be a list of iterator names")
                    })?;
                space.loop_order = Some(names);
            }
            _ => {
                return Err(BeastError::invalid(
                    format!("space.{k}"),
                    "unknown or mistyped key",
                ));
            }
        }
    }
    Ok(())
}

/// The `[iterators]` section, in declaration order.
fn read_iterators(
    space: &mut Space,
    src: &str,
    t: &::toml::Table,
    generators: &HashMap<String, GeneratorFn>,
) -> Result<(), BeastError> {
    for (k, v) in t {
        let domain = match v {
            ::toml::Value::String(s) => {
                if let Some(p) = locate(src, "iterators", k) {
                    space.file_positions.insert(k.clone(), p);
                }
                Domain::Expr(s.clone())
            }
            ::toml::Value::Array(_) => match toml_value(k, v)? {
                Value::List(l) => Domain::Values(l.to_vec()),
                _ => unreachable!(),
            },
            ::toml::Value::Table(g) => generator_domain(k, g, generators)?,
            other => Domain::Values(vec![toml_value(k, other)?]),
        };
        space.iterators.push(IteratorDef {
            name: k.clone(),
            domain,
        });
    }
    Ok(())
}

/// The domain of iterator `k` declared as `{ generator = "NAME", args = [...] }`.
fn generator_domain(
    k: &str,
    g: &::toml::Table,
    generators: &HashMap<String, GeneratorFn>,
) -> Result<Domain, BeastError> {
    let name = g
        .get("generator")
        .and_then(|x| x.as_str())
        .ok_or_else(|| BeastError::invalid(k, "an iterator table needs generator = \"NAME\""))?;
    let f = generators.get(name).ok_or_else(|| {
        BeastError::invalid(k, format!("no generator named '{name}' is registered"))
    })?;
    let args = match g.get("args") {
        None => vec![],
        Some(::toml::Value::Array(a)) => a
            .iter()
            .map(|x| x.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| BeastError::invalid(k, "args must be a list of names"))?,
        Some(_) => {
            return Err(BeastError::invalid(k, "args must be a list of names"));
        }
    };
    Ok(Domain::Generator { args, f: f.clone() })
}

/// The `[derived]` section: expression strings, or literals meaning constants.
fn read_derived(space: &mut Space, src: &str, t: &::toml::Table) -> Result<(), BeastError> {
    for (k, v) in t {
        let s = match v {
            ::toml::Value::String(s) => s.clone(),
            // A literal is allowed and means a constant.
            other => toml_value(k, other)?.to_string(),
        };
        if let Some(p) = locate(src, "derived", k) {
            space.file_positions.insert(k.clone(), p);
        }
        space.derived.push(DerivedDef {
            name: k.clone(),
            source: Source::Text(s),
        });
    }
    Ok(())
}

/// The `[constraints.CLASS]` sections.
fn read_constraints(space: &mut Space, src: &str, t: &::toml::Table) -> Result<(), BeastError> {
    for (class_name, entries) in t {
        let class = Class::parse(class_name).ok_or_else(|| {
            BeastError::invalid(
                format!("constraints.{class_name}"),
                "unknown constraint class (expected hard, soft, correctness)",
            )
        })?;
        let ::toml::Value::Table(entries) = entries else {
            return Err(BeastError::invalid(
                format!("constraints.{class_name}"),
                "must be a table",
            ));
        };
        for (k, v) in entries {
            let ::toml::Value::String(s) = v else {
                return Err(BeastError::invalid(
                    k,
                    "a constraint must be an expression string",
                ));
            };
            if let Some(p) = locate(src, &format!("constraints.{class_name}"), k) {
                space.file_positions.insert(k.clone(), p);
            }
            space.constraints.push(ConstraintDef {
                name: k.clone(),
                class,
                source: Source::Text(s.clone()),
            });
        }
    }
    Ok(())
}
