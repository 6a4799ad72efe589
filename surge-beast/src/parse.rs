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
use super::lex::{ParseError, Tok, describe, err, lex};
use super::value::{BinOp, CmpOp, UnOp, Value};

const MAX_DEPTH: usize = 200;
const MAX_TREE_DEPTH: usize = 500;

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
