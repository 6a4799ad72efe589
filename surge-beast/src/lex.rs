//! The lexer of the Python expression subset: numbers (with `_` separators, `0x`/`0o`/`0b`,
//! exponents), strings with escapes, names and operators, each token with its 0-based character
//! offset. Its errors are [`ParseError`]s, like the parser's.

/// A syntax error at character offset `pos`.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    pub pos: u32,
    pub message: String,
}

const MAX_LEN: usize = 10_000;

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    Int(i64),
    Float(f64),
    Str(String),
    Name(String),
    Op(&'static str),
    End,
}

pub(crate) fn err<T>(pos: usize, message: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError {
        pos: pos as u32,
        message: message.into(),
    })
}

const OPS: [&str; 26] = [
    "**", "//", "<<", ">>", "<=", ">=", "==", "!=", "+", "-", "*", "/", "%", "<", ">", "&", "|",
    "^", "~", "(", ")", "[", "]", ",", ":", ".",
];

pub(crate) fn lex(src: &str) -> Result<Vec<(Tok, usize)>, ParseError> {
    let cs: Vec<char> = src.chars().collect();
    if cs.len() > MAX_LEN {
        return err(0, format!("expression longer than {MAX_LEN} characters"));
    }
    let mut lx = Lexer { cs, i: 0 };
    let mut out = Vec::new();
    while lx.i < lx.cs.len() {
        if lx.skip_whitespace() {
            continue;
        }
        let start = lx.i;
        let c = lx.cs[start];
        let tok = if c.is_ascii_digit() || (c == '.' && lx.is_digit_at(start + 1)) {
            lx.number()?
        } else if c.is_alphabetic() || c == '_' {
            lx.name()
        } else if c == '\'' || c == '"' {
            lx.string()?
        } else {
            lx.operator()?
        };
        out.push((tok, start));
    }
    out.push((Tok::End, lx.cs.len()));
    Ok(out)
}

/// The lexer's cursor: the source characters and the offset of the next one.
struct Lexer {
    cs: Vec<char>,
    i: usize,
}

impl Lexer {
    fn is_digit_at(&self, j: usize) -> bool {
        self.cs.get(j).is_some_and(|d| d.is_ascii_digit())
    }

    /// Skips one blank (space, tab, newline, carriage return) or a backslash line
    /// continuation; whether there was one.
    fn skip_whitespace(&mut self) -> bool {
        let c = self.cs[self.i];
        if c == ' '
            || c == '\t'
            || c == '\n'
            || c == '\r'
            || c == '\\' && self.cs.get(self.i + 1) == Some(&'\n')
        {
            self.i += if c == '\\' { 2 } else { 1 };
            return true;
        }
        false
    }

    /// Appends the characters from the cursor on while `keep` holds, skipping `_` separators.
    fn take_digits(&mut self, text: &mut String, keep: impl Fn(char) -> bool) {
        while self.i < self.cs.len() && (keep(self.cs[self.i]) || self.cs[self.i] == '_') {
            if self.cs[self.i] != '_' {
                text.push(self.cs[self.i]);
            }
            self.i += 1;
        }
    }

    /// A number literal: `0x` / `0o` / `0b` integer, decimal integer or float.
    fn number(&mut self) -> Result<Tok, ParseError> {
        let start = self.i;
        if self.cs[start] == '0'
            && matches!(
                self.cs.get(start + 1),
                Some('x' | 'X' | 'o' | 'O' | 'b' | 'B')
            )
        {
            return self.radix_int();
        }
        let (text, is_float) = self.decimal_text()?;
        if self.i < self.cs.len() && (self.cs[self.i].is_alphanumeric() || self.cs[self.i] == '_') {
            return err(self.i, "invalid number literal");
        }
        if is_float {
            float_literal(start, text)
        } else {
            decimal_int_literal(start, &text)
        }
    }

    /// A `0x` / `0o` / `0b` integer literal.
    fn radix_int(&mut self) -> Result<Tok, ParseError> {
        let start = self.i;
        let radix = match self.cs[start + 1] {
            'x' | 'X' => 16,
            'o' | 'O' => 8,
            _ => 2,
        };
        self.i += 2;
        let mut digits = String::new();
        self.take_digits(&mut digits, |c| c.is_ascii_alphanumeric());
        match i64::from_str_radix(&digits, radix) {
            Ok(v) if !digits.is_empty() => Ok(Tok::Int(v)),
            _ => err(start, "invalid integer literal (or larger than 64 bits)"),
        }
    }

    /// The digits, fraction and exponent of a decimal literal (without `_` separators), and
    /// whether it is a float.
    fn decimal_text(&mut self) -> Result<(String, bool), ParseError> {
        let mut text = String::new();
        let mut is_float = false;
        self.take_digits(&mut text, |c| c.is_ascii_digit());
        if self.i < self.cs.len() && self.cs[self.i] == '.' {
            is_float = true;
            text.push('.');
            self.i += 1;
            self.take_digits(&mut text, |c| c.is_ascii_digit());
        }
        if self.i < self.cs.len() && (self.cs[self.i] == 'e' || self.cs[self.i] == 'E') {
            text.push_str(&self.exponent()?);
            is_float = true;
        }
        Ok((text, is_float))
    }

    /// The exponent `e[+-]DIGITS` at the cursor (on the `e`), normalised to a lowercase `e`.
    fn exponent(&mut self) -> Result<String, ParseError> {
        let cs = &self.cs;
        let mut j = self.i + 1;
        let mut exp = String::from("e");
        if j < cs.len() && (cs[j] == '+' || cs[j] == '-') {
            exp.push(cs[j]);
            j += 1;
        }
        if !(j < cs.len() && cs[j].is_ascii_digit()) {
            return err(self.i, "invalid number literal");
        }
        while j < cs.len() && cs[j].is_ascii_digit() {
            exp.push(cs[j]);
            j += 1;
        }
        self.i = j;
        Ok(exp)
    }

    /// An identifier or keyword.
    fn name(&mut self) -> Tok {
        let mut name = String::new();
        while self.i < self.cs.len()
            && (self.cs[self.i].is_alphanumeric() || self.cs[self.i] == '_')
        {
            name.push(self.cs[self.i]);
            self.i += 1;
        }
        Tok::Name(name)
    }

    /// A single-line string literal in `'` or `"` with backslash escapes.
    fn string(&mut self) -> Result<Tok, ParseError> {
        let start = self.i;
        let q = self.cs[start];
        self.i += 1;
        let mut s = String::new();
        loop {
            let Some(&ch) = self.cs.get(self.i) else {
                return err(start, "unterminated string literal");
            };
            self.i += 1;
            if ch == q {
                break;
            }
            if ch == '\\' {
                let Some(&e) = self.cs.get(self.i) else {
                    return err(start, "unterminated string literal");
                };
                self.i += 1;
                push_escape(&mut s, e);
            } else if ch == '\n' {
                return err(start, "unterminated string literal");
            } else {
                s.push(ch);
            }
        }
        Ok(Tok::Str(s))
    }

    /// An operator or punctuation token (the longest of [`OPS`] that matches).
    fn operator(&mut self) -> Result<Tok, ParseError> {
        let (cs, i) = (&self.cs, self.i);
        let rest: String = cs[i..cs.len().min(i + 2)].iter().collect();
        if let Some(op) = OPS.iter().find(|op| rest.starts_with(**op)) {
            self.i += op.chars().count();
            return Ok(Tok::Op(op));
        }
        let c = cs[i];
        if c == '=' {
            return err(i, "invalid syntax: '=' is assignment (did you mean '=='?)");
        }
        err(i, format!("invalid character '{c}'"))
    }
}

/// Appends the character that the escape `\e` stands for (an unknown escape stays as written).
fn push_escape(s: &mut String, e: char) {
    let c = match e {
        'n' => '\n',
        't' => '\t',
        'r' => '\r',
        '0' => '\0',
        '\\' => '\\',
        '\'' => '\'',
        '"' => '"',
        other => {
            s.push('\\');
            other
        }
    };
    s.push(c);
}

fn float_literal(start: usize, text: String) -> Result<Tok, ParseError> {
    let t = if text.starts_with('.') {
        format!("0{text}")
    } else {
        text
    };
    match t.parse::<f64>() {
        Ok(v) => Ok(Tok::Float(v)),
        Err(_) => err(start, "invalid float literal"),
    }
}

fn decimal_int_literal(start: usize, text: &str) -> Result<Tok, ParseError> {
    if text.len() > 1 && text.starts_with('0') && text.chars().any(|d| d != '0') {
        return err(
            start,
            "leading zeros in decimal integer literals are not permitted",
        );
    }
    match text.parse::<i64>() {
        Ok(v) => Ok(Tok::Int(v)),
        Err(_) => err(start, "integer literal larger than 64 bits"),
    }
}

/// A token as a syntax error names it.
pub(crate) fn describe(t: &Tok) -> String {
    match t {
        Tok::Int(v) => format!("number {v}"),
        Tok::Float(v) => format!("number {v}"),
        Tok::Str(_) => "string".into(),
        Tok::Name(n) => format!("'{n}'"),
        Tok::Op(o) => format!("'{o}'"),
        Tok::End => "end of expression".into(),
    }
}
