//! Parser for the Python expression subset used in spaces.
//!
//! Supported: int / float / string literals, `True False None`, names, `+ - * / // % **`,
//! unary `+ - ~ not`, `& | ^ << >>`, comparisons `< <= > >= == != in not in` with Python
//! chaining, `and or` (short-circuit, returning operands), `x if c else y`, calls of builtins
//! (`min max abs range len int float bool str sum any all union intersection difference`),
//! list and tuple displays (both become lists) and subscripts `x[i]`. Precedence and
//! associativity follow the Python 3 grammar (`**` binds tighter than unary minus on its left
//! and is right-associative; `not` binds looser than comparisons).
//!
//! Positions are 0-based character offsets; errors report them, and the public error adds 1.

use super::expr::{Builtin, Expr, ExprKind};
use super::value::{BinOp, CmpOp, UnOp, Value};

/// A syntax error at character offset `pos`.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    pub pos: u32,
    pub message: String,
}

const MAX_DEPTH: usize = 200;
const MAX_LEN: usize = 10_000;
const MAX_TREE_DEPTH: usize = 500;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Int(i64),
    Float(f64),
    Str(String),
    Name(String),
    Op(&'static str),
    End,
}

fn err<T>(pos: usize, message: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError {
        pos: pos as u32,
        message: message.into(),
    })
}

const OPS: [&str; 26] = [
    "**", "//", "<<", ">>", "<=", ">=", "==", "!=", "+", "-", "*", "/", "%", "<", ">", "&", "|",
    "^", "~", "(", ")", "[", "]", ",", ":", ".",
];

fn lex(src: &str) -> Result<Vec<(Tok, usize)>, ParseError> {
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

struct Parser {
    toks: Vec<(Tok, usize)>,
    i: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.i].0
    }
    fn pos(&self) -> usize {
        self.toks[self.i].1
    }
    fn bump(&mut self) -> (Tok, usize) {
        let t = self.toks[self.i].clone();
        if self.i + 1 < self.toks.len() {
            self.i += 1;
        }
        t
    }
    fn is_op(&self, op: &str) -> bool {
        matches!(self.peek(), Tok::Op(o) if *o == op)
    }
    fn is_kw(&self, kw: &str) -> bool {
        matches!(self.peek(), Tok::Name(n) if n == kw)
    }
    fn expect_op(&mut self, op: &str) -> Result<(), ParseError> {
        if self.is_op(op) {
            self.bump();
            Ok(())
        } else {
            err(
                self.pos(),
                format!("expected '{op}', found {}", describe(self.peek())),
            )
        }
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return err(self.pos(), "expression nested too deeply");
        }
        Ok(())
    }

    fn expr(&mut self) -> Result<Expr, ParseError> {
        self.enter()?;
        let r = self.ternary();
        self.depth -= 1;
        r
    }

    fn ternary(&mut self) -> Result<Expr, ParseError> {
        let then = self.or_test()?;
        if self.is_kw("if") {
            let (_, pos) = self.bump();
            let cond = self.or_test()?;
            if !self.is_kw("else") {
                return err(
                    self.pos(),
                    format!("expected 'else', found {}", describe(self.peek())),
                );
            }
            self.bump();
            let otherwise = self.expr()?;
            return Ok(Expr::new(
                ExprKind::IfElse(Box::new([then, cond, otherwise])),
                pos as u32,
            ));
        }
        Ok(then)
    }

    fn or_test(&mut self) -> Result<Expr, ParseError> {
        let first = self.and_test()?;
        if !self.is_kw("or") {
            return Ok(first);
        }
        let pos = first.pos;
        let mut xs = vec![first];
        while self.is_kw("or") {
            self.bump();
            xs.push(self.and_test()?);
        }
        Ok(Expr::new(ExprKind::Or(xs), pos))
    }

    fn and_test(&mut self) -> Result<Expr, ParseError> {
        let first = self.not_test()?;
        if !self.is_kw("and") {
            return Ok(first);
        }
        let pos = first.pos;
        let mut xs = vec![first];
        while self.is_kw("and") {
            self.bump();
            xs.push(self.not_test()?);
        }
        Ok(Expr::new(ExprKind::And(xs), pos))
    }

    fn not_test(&mut self) -> Result<Expr, ParseError> {
        if self.is_kw("not") {
            let (_, pos) = self.bump();
            self.enter()?;
            let a = self.not_test();
            self.depth -= 1;
            return Ok(Expr::new(
                ExprKind::Unary(UnOp::Not, Box::new(a?)),
                pos as u32,
            ));
        }
        self.comparison()
    }

    fn cmp_op(&mut self) -> Result<Option<(CmpOp, usize)>, ParseError> {
        let pos = self.pos();
        let op = match self.peek() {
            Tok::Op("<") => CmpOp::Lt,
            Tok::Op("<=") => CmpOp::Le,
            Tok::Op(">") => CmpOp::Gt,
            Tok::Op(">=") => CmpOp::Ge,
            Tok::Op("==") => CmpOp::Eq,
            Tok::Op("!=") => CmpOp::Ne,
            Tok::Name(n) if n == "in" => CmpOp::In,
            Tok::Name(n) if n == "is" => {
                return err(pos, "'is' is not supported; use '==' or '!='");
            }
            Tok::Name(n) if n == "not" => {
                if matches!(self.toks.get(self.i + 1), Some((Tok::Name(m), _)) if m == "in") {
                    self.bump();
                    CmpOp::NotIn
                } else {
                    return err(pos, "invalid syntax: expected 'in' after 'not'");
                }
            }
            _ => return Ok(None),
        };
        self.bump();
        Ok(Some((op, pos)))
    }

    fn comparison(&mut self) -> Result<Expr, ParseError> {
        let first = self.bitor()?;
        let mut rest = Vec::new();
        let mut pos = first.pos;
        while let Some((op, p)) = self.cmp_op()? {
            if rest.is_empty() {
                pos = p as u32;
            }
            let rhs = self.bitor()?;
            rest.push((op, rhs));
        }
        if rest.is_empty() {
            Ok(first)
        } else {
            Ok(Expr::new(ExprKind::Compare(Box::new(first), rest), pos))
        }
    }

    fn binary_level(
        &mut self,
        ops: &[(&str, BinOp)],
        next: fn(&mut Parser) -> Result<Expr, ParseError>,
    ) -> Result<Expr, ParseError> {
        let mut lhs = next(self)?;
        let mut chain = 0;
        while let Some(&(_, op)) = ops.iter().find(|(s, _)| self.is_op(s)) {
            let (_, pos) = self.bump();
            let rhs = next(self)?;
            chain += 1;
            if self.depth + chain > MAX_DEPTH * 4 {
                return err(pos, "expression nested too deeply");
            }
            lhs = Expr::new(
                ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                pos as u32,
            );
        }
        Ok(lhs)
    }

    fn bitor(&mut self) -> Result<Expr, ParseError> {
        self.binary_level(&[("|", BinOp::BitOr)], Parser::bitxor)
    }
    fn bitxor(&mut self) -> Result<Expr, ParseError> {
        self.binary_level(&[("^", BinOp::BitXor)], Parser::bitand)
    }
    fn bitand(&mut self) -> Result<Expr, ParseError> {
        self.binary_level(&[("&", BinOp::BitAnd)], Parser::shift)
    }
    fn shift(&mut self) -> Result<Expr, ParseError> {
        self.binary_level(&[("<<", BinOp::Shl), (">>", BinOp::Shr)], Parser::arith)
    }
    fn arith(&mut self) -> Result<Expr, ParseError> {
        self.binary_level(&[("+", BinOp::Add), ("-", BinOp::Sub)], Parser::term)
    }
    fn term(&mut self) -> Result<Expr, ParseError> {
        self.binary_level(
            &[
                ("*", BinOp::Mul),
                ("//", BinOp::FloorDiv),
                ("/", BinOp::Div),
                ("%", BinOp::Mod),
            ],
            Parser::factor,
        )
    }

    fn factor(&mut self) -> Result<Expr, ParseError> {
        let op = match self.peek() {
            Tok::Op("-") => Some(UnOp::Neg),
            Tok::Op("+") => Some(UnOp::Pos),
            Tok::Op("~") => Some(UnOp::Invert),
            _ => None,
        };
        if let Some(op) = op {
            let (_, pos) = self.bump();
            self.enter()?;
            let a = self.factor();
            self.depth -= 1;
            return Ok(Expr::new(ExprKind::Unary(op, Box::new(a?)), pos as u32));
        }
        self.power()
    }

    fn power(&mut self) -> Result<Expr, ParseError> {
        let base = self.postfix()?;
        if self.is_op("**") {
            let (_, pos) = self.bump();
            self.enter()?;
            let exp = self.factor();
            self.depth -= 1;
            return Ok(Expr::new(
                ExprKind::Binary(BinOp::Pow, Box::new(base), Box::new(exp?)),
                pos as u32,
            ));
        }
        Ok(base)
    }

    fn postfix(&mut self) -> Result<Expr, ParseError> {
        let mut e = self.atom()?;
        loop {
            if self.is_op("(") {
                let pos = self.pos();
                let ExprKind::Name(name) = &e.kind else {
                    return err(pos, "only builtin functions can be called");
                };
                let Some(bi) = Builtin::from_name(name) else {
                    return err(e.pos as usize, format!("unknown function '{name}'"));
                };
                let fpos = e.pos;
                self.bump();
                let args = self.sequence(")")?;
                e = Expr::new(ExprKind::Call(bi, args), fpos);
            } else if self.is_op("[") {
                let (_, pos) = self.bump();
                self.enter()?;
                let idx = self.expr();
                self.depth -= 1;
                let idx = idx?;
                if self.is_op(":") {
                    return err(self.pos(), "slices are not supported");
                }
                self.expect_op("]")?;
                e = Expr::new(ExprKind::Index(Box::new(e), Box::new(idx)), pos as u32);
            } else if self.is_op(".") {
                return err(self.pos(), "attribute access is not supported");
            } else {
                return Ok(e);
            }
        }
    }

    /// Comma-separated expressions up to `close` (consumed); a trailing comma is allowed.
    fn sequence(&mut self, close: &str) -> Result<Vec<Expr>, ParseError> {
        let mut xs = Vec::new();
        loop {
            if self.is_op(close) {
                self.bump();
                return Ok(xs);
            }
            xs.push(self.expr()?);
            if self.is_op(",") {
                self.bump();
            } else if !self.is_op(close) {
                return err(
                    self.pos(),
                    format!("expected ',' or '{close}', found {}", describe(self.peek())),
                );
            }
        }
    }

    fn atom(&mut self) -> Result<Expr, ParseError> {
        let (tok, pos) = self.bump();
        let p = pos as u32;
        Ok(match tok {
            Tok::Int(v) => Expr::new(ExprKind::Const(Value::Int(v)), p),
            Tok::Float(v) => Expr::new(ExprKind::Const(Value::Float(v)), p),
            Tok::Str(mut s) => {
                while let Tok::Str(more) = self.peek() {
                    s.push_str(more);
                    self.bump();
                }
                Expr::new(ExprKind::Const(Value::str(&s)), p)
            }
            Tok::Name(n) => match n.as_str() {
                "True" => Expr::new(ExprKind::Const(Value::Bool(true)), p),
                "False" => Expr::new(ExprKind::Const(Value::Bool(false)), p),
                "None" => Expr::new(ExprKind::Const(Value::None), p),
                "and" | "or" | "not" | "in" | "is" | "if" | "else" | "lambda" | "for" | "def"
                | "return" | "yield" | "import" | "while" | "class" | "del" | "pass" | "global"
                | "with" | "as" | "from" | "await" | "async" | "elif" | "try" | "except"
                | "raise" | "assert" | "break" | "continue" | "finally" | "nonlocal" => {
                    return err(pos, format!("invalid syntax: unexpected keyword '{n}'"));
                }
                _ => Expr::new(ExprKind::Name(n), p),
            },
            Tok::Op("(") => {
                self.enter()?;
                let r = self.paren_body(pos);
                self.depth -= 1;
                r?
            }
            Tok::Op("[") => {
                self.enter()?;
                let r = self.sequence("]");
                self.depth -= 1;
                Expr::new(ExprKind::List(r?), p)
            }
            Tok::End => return err(pos, "unexpected end of expression"),
            other => {
                return err(
                    pos,
                    format!("invalid syntax: unexpected {}", describe(&other)),
                );
            }
        })
    }

    fn paren_body(&mut self, pos: usize) -> Result<Expr, ParseError> {
        if self.is_op(")") {
            self.bump();
            return Ok(Expr::new(ExprKind::List(vec![]), pos as u32));
        }
        let first = self.expr()?;
        if self.is_op(")") {
            self.bump();
            return Ok(first);
        }
        if self.is_op(",") {
            self.bump();
            let mut xs = vec![first];
            xs.extend(self.sequence(")")?);
            return Ok(Expr::new(ExprKind::List(xs), pos as u32));
        }
        if self.is_kw("for") {
            return err(self.pos(), "comprehensions are not supported");
        }
        err(
            self.pos(),
            format!("expected ')', found {}", describe(self.peek())),
        )
    }
}

/// Depth of the tree, computed without recursion.
fn tree_depth(e: &Expr) -> usize {
    let mut max = 0;
    let mut stack = vec![(e, 1usize)];
    while let Some((x, d)) = stack.pop() {
        max = max.max(d);
        stack.extend(x.child_refs().into_iter().map(|c| (c, d + 1)));
    }
    max
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Int(v) => format!("number {v}"),
        Tok::Float(v) => format!("number {v}"),
        Tok::Str(_) => "string".into(),
        Tok::Name(n) => format!("'{n}'"),
        Tok::Op(o) => format!("'{o}'"),
        Tok::End => "end of expression".into(),
    }
}

/// Parse one Python expression.
pub fn parse_expr(src: &str) -> Result<Expr, ParseError> {
    let toks = lex(src)?;
    let mut p = Parser {
        toks,
        i: 0,
        depth: 0,
    };
    if matches!(p.peek(), Tok::End) {
        return err(0, "empty expression");
    }
    let e = p.expr()?;
    if !matches!(p.peek(), Tok::End) {
        return err(
            p.pos(),
            format!("invalid syntax: unexpected {}", describe(p.peek())),
        );
    }
    if tree_depth(&e) > MAX_TREE_DEPTH {
        return err(0, "expression nested too deeply");
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions() {
        let e = parse_expr("a +* b").unwrap_err();
        assert_eq!(e.pos, 3);
        let e = parse_expr("f(1)").unwrap_err();
        assert_eq!(e.pos, 0);
        assert!(parse_expr("(((1)))").is_ok());
        assert!(parse_expr(&"(".repeat(500)).is_err());
        assert!(parse_expr(&"1+".repeat(5000)).is_err());
    }
}
