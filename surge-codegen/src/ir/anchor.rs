//! A home for programs without a data-parallel operator.
//!
//! Schedules, policies and kernels belong to data-parallel operators, so a program that has
//! none — an input returned as it is, a literal, scalar code over `length` and `index` of the
//! inputs — has nothing for the backends to run. [`anchored`] gives it one: a sequence result
//! `R` becomes `map(|v| v, R)` (a copy), any other result `index(map(|_| R, range(0, 1)), 0)`
//! (one element whose body evaluates `R`). Either computes exactly `R`: the same values, the
//! same errors in the same order (the body runs once, and the added nodes cannot fail). The new
//! nodes carry the root's source location, so a message about them names the user's line.

use super::{Computation, Elem, Lambda, Literal, Node, NodeId, Op, ScalarExpr, Type};

/// `c` rewritten so that its root is reached through a data-parallel operator, or `None` when
/// it already has one.
pub fn anchored(c: &Computation) -> Option<Computation> {
    if c.nodes.iter().any(|n| n.op.kind().is_data_parallel()) {
        return None;
    }
    let mut a = Anchor { c: c.clone() };
    let root = c.root;
    a.c.root = match c.node(root).ty.clone() {
        Type::Seq(item) => {
            let v = a.push(Op::Param, (*item).clone());
            a.map(v, v, root)
        }
        _ => {
            let (zero, one) = (a.index(0), a.index(1));
            let range = a.push(
                Op::Range {
                    start: zero,
                    end: one,
                    stride: None,
                },
                Type::scalar_seq(Elem::U32),
            );
            let unused = a.push(Op::Param, Type::Scalar(Elem::U32));
            let one_element = a.map(unused, root, range);
            a.push(
                Op::Index {
                    seq: one_element,
                    index: zero,
                },
                c.node(root).ty.clone(),
            )
        }
    };
    Some(a.c)
}

struct Anchor {
    c: Computation,
}

impl Anchor {
    /// Appends a node located at the original root.
    fn push(&mut self, op: Op, ty: Type) -> NodeId {
        let loc = self.c.root_node().loc.clone();
        self.c.nodes.push(Node { op, ty, loc });
        NodeId(self.c.nodes.len() as u64 - 1)
    }

    fn index(&mut self, v: u32) -> NodeId {
        let expr = ScalarExpr::Const(Literal::U32(v));
        self.push(Op::Scalar { expr }, Type::Scalar(Elem::U32))
    }

    /// `map(|param| body, input)`.
    fn map(&mut self, param: NodeId, body: NodeId, input: NodeId) -> NodeId {
        let ty = Type::seq(self.c.node(body).ty.clone());
        let f = Lambda {
            params: vec![param],
            body,
        };
        let inputs = vec![input];
        self.push(Op::Map { f, inputs }, ty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Buffer;
    use crate::ir::interpret;
    use crate::ir::testing::B;

    fn rooted(b: &B, root: NodeId) -> Computation {
        Computation {
            root,
            ..b.c.clone()
        }
    }

    #[test]
    fn a_program_with_an_operator_is_left_alone() {
        let c = B::tiled_sum(10, 3);
        assert!(anchored(&c).is_none());
    }

    #[test]
    fn an_input_returned_as_it_is_becomes_a_copy() {
        let mut b = B::default();
        let x = b.input("x", Buffer::F64(vec![1.5, -0.0, f64::NAN]));
        let c = rooted(&b, x);
        let a = anchored(&c).expect("anchored");
        a.validate().unwrap();
        assert!(matches!(a.root_node().op, Op::Map { .. }));
        assert_eq!(
            format!("{:?}", interpret(&a, &b.bufs).unwrap()),
            format!("{:?}", interpret(&c, &b.bufs).unwrap())
        );
    }

    #[test]
    fn scalar_code_becomes_one_element_and_keeps_its_errors() {
        let mut b = B::default();
        let x = b.input("x", Buffer::F64(vec![1.5, 2.5]));
        let i = b.konst(Literal::U32(1));
        let at = b.op(Op::Index { seq: x, index: i });
        let c = rooted(&b, at);
        let a = anchored(&c).expect("anchored");
        a.validate().unwrap();
        assert!(matches!(a.root_node().op, Op::Index { .. }));
        assert_eq!(
            interpret(&a, &b.bufs).unwrap(),
            interpret(&c, &b.bufs).unwrap()
        );
        // An index the typing cannot see: read from an input.
        let ix = b.input("ix", Buffer::U32(vec![7]));
        let zero = b.konst(Literal::U32(0));
        let far = b.op(Op::Index {
            seq: ix,
            index: zero,
        });
        let bad = b.op(Op::Index { seq: x, index: far });
        let c = rooted(&b, bad);
        let a = anchored(&c).expect("anchored");
        assert_eq!(
            interpret(&a, &b.bufs).unwrap_err().to_string(),
            interpret(&c, &b.bufs).unwrap_err().to_string()
        );
    }
}
