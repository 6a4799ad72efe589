//! The engine's one public error type.

/// Everything that can go wrong while loading, planning or enumerating a space.
///
/// Every variant that concerns one entry (a setting, iterator, derived value or constraint)
/// names it; expression errors also carry the 1-based column inside the expression and, for
/// spaces loaded from TOML, the line and column in the file where the expression starts.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BeastError {
    /// A syntax error in an expression.
    #[error("{entry}: column {column}{}: syntax error: {message}", at_file(.file_pos))]
    Parse {
        entry: String,
        column: usize,
        message: String,
        file_pos: Option<(usize, usize)>,
    },
    /// A name that is neither a setting, an iterator nor a derived value.
    #[error("{entry}: column {column}{}: unknown name '{name}'", at_file(.file_pos))]
    UnknownName {
        entry: String,
        column: usize,
        name: String,
        file_pos: Option<(usize, usize)>,
    },
    /// Iterators / derived values / constraints that depend on each other in a cycle.
    #[error("dependency cycle: {}", .cycle.join(" -> "))]
    Cycle { cycle: Vec<String> },
    /// A run-time error (e.g. ZeroDivisionError) while evaluating an entry.
    #[error("{entry}: column {column}: {message}")]
    Eval {
        entry: String,
        column: usize,
        message: String,
    },
    /// A malformed definition: duplicate name, bad TOML shape, unknown `--disable` name, ...
    #[error("{entry}: {message}")]
    Invalid { entry: String, message: String },
    /// The TOML document itself does not parse.
    #[error("TOML syntax error at line {line}, column {column}: {message}")]
    Toml {
        line: usize,
        column: usize,
        message: String,
    },
    /// A file could not be read.
    #[error("{path}: {message}")]
    Io { path: String, message: String },
}

fn at_file(p: &Option<(usize, usize)>) -> String {
    match p {
        Some((l, c)) => format!(" (file line {l}, column {c})"),
        None => String::new(),
    }
}

impl BeastError {
    /// The entry at fault, if the error concerns one.
    pub fn entry(&self) -> Option<&str> {
        match self {
            BeastError::Parse { entry, .. }
            | BeastError::UnknownName { entry, .. }
            | BeastError::Eval { entry, .. }
            | BeastError::Invalid { entry, .. } => Some(entry),
            BeastError::Cycle { cycle } => cycle.first().map(String::as_str),
            _ => None,
        }
    }

    /// The 1-based column inside the entry's expression (or the TOML file), if known.
    pub fn column(&self) -> Option<usize> {
        match self {
            BeastError::Parse { column, .. }
            | BeastError::UnknownName { column, .. }
            | BeastError::Eval { column, .. }
            | BeastError::Toml { column, .. } => Some(*column),
            _ => None,
        }
    }

    /// Whether the error is the user's input (bad file, bad expression, unknown name), as
    /// opposed to a failure while enumerating. The CLI maps input errors to exit code 2.
    pub fn is_input_error(&self) -> bool {
        !matches!(self, BeastError::Eval { .. })
    }

    pub(crate) fn invalid(entry: impl Into<String>, message: impl Into<String>) -> BeastError {
        BeastError::Invalid {
            entry: entry.into(),
            message: message.into(),
        }
    }
}
