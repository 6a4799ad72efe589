//! Validation: operand order, types, arities, static lengths, and parameter scoping (a lambda's
//! parameter is used only inside that lambda). Every error names the node at fault with its
//! source location.

use super::{Computation, Elem, IrError, NodeId, Op, ValueInfo, infer};
use std::collections::BTreeSet;

/// For each node, the node whose lambda binds it (parameters only).
type Binders = Vec<Option<NodeId>>;

impl Computation {
    /// Checks every node's operand order, types, arities, static lengths and parameter scoping.
    pub fn validate(&self) -> Result<(), IrError> {
        self.infer_all().map(|_| ())
    }

    /// Validates the computation and returns what is statically known about every node.
    pub fn infer_all(&self) -> Result<Vec<ValueInfo>, IrError> {
        let n = self.nodes.len() as u64;
        if self.root.0 >= n {
            return Err(IrError::new(
                "computation",
                format!("root {} does not exist ({n} nodes)", self.root),
            ));
        }
        let mut infos: Vec<ValueInfo> = Vec::with_capacity(self.nodes.len());
        let mut binders: Binders = vec![None; self.nodes.len()];
        for i in 0..self.nodes.len() {
            let id = NodeId(i as u64);
            let info = self
                .infer_node(id, &infos)
                .and_then(|info| self.bind_params(id, &mut binders).map(|_| info))
                .map_err(|e| e.in_computation(self, id))?;
            infos.push(info);
        }
        self.check_scopes_with(&binders)?;
        Ok(infos)
    }

    /// The scoping part of [`validate`](Self::validate) alone, for IR whose structure is known
    /// good (the DSEL's lowering): every parameter is used inside its lambda only.
    pub fn check_scopes(&self) -> Result<(), IrError> {
        let mut binders: Binders = vec![None; self.nodes.len()];
        for (i, node) in self.nodes.iter().enumerate() {
            for p in node.op.lambdas().into_iter().flat_map(|l| &l.params) {
                binders[p.0 as usize].get_or_insert(NodeId(i as u64));
            }
        }
        self.check_scopes_with(&binders)
    }

    /// The static information of node `id`, its operands' being `infos`.
    fn infer_node(&self, id: NodeId, infos: &[ValueInfo]) -> Result<ValueInfo, IrError> {
        let node = self.node(id);
        let kind = node.op.kind().name();
        if let Some(r) = node.op.references().into_iter().find(|r| r.0 >= id.0) {
            return Err(IrError::new(
                kind,
                format!("refers to {r}, which does not come before it"),
            ));
        }
        let info = match &node.op {
            Op::Input { buffer } => {
                let decl = self.inputs.get(*buffer).ok_or_else(|| {
                    let n = self.inputs.len();
                    IrError::new(kind, format!("buffer {buffer} does not exist ({n} inputs)"))
                })?;
                if decl.elem == Elem::Bool {
                    let msg = format!("input `{}` has element type bool", decl.name);
                    return Err(IrError::new(kind, msg));
                }
                ValueInfo::input(decl.elem, decl.len)
            }
            Op::Param => ValueInfo::of_type(node.ty.clone()),
            op => infer(op, &|r| &infos[r.0 as usize])?,
        };
        if info.ty != node.ty {
            let msg = format!(
                "declared type {} but its operands give {}",
                node.ty, info.ty
            );
            return Err(IrError::new(kind, msg));
        }
        Ok(info)
    }

    /// Records node `id` as the binder of its lambdas' parameters (each bound exactly once).
    fn bind_params(&self, id: NodeId, binders: &mut Binders) -> Result<(), IrError> {
        let kind = self.node(id).op.kind().name();
        for l in self.node(id).op.lambdas() {
            for p in &l.params {
                if !matches!(self.node(*p).op, Op::Param) {
                    let msg = format!("lambda parameter {p} is not a parameter node");
                    return Err(IrError::new(kind, msg));
                }
                if let Some(other) = binders[p.0 as usize] {
                    let msg = format!("parameter {p} is already bound by {other}");
                    return Err(IrError::new(kind, msg));
                }
                binders[p.0 as usize] = Some(id);
            }
        }
        Ok(())
    }

    /// Every parameter is used inside its lambda only: one that a closure captured or returned
    /// out of its lambda is an error at the node that uses it, naming both places.
    fn check_scopes_with(&self, binders: &Binders) -> Result<(), IrError> {
        let free = self.free_params();
        if let Some(&p) = free[self.root.0 as usize].iter().next() {
            let lambda = self.lambda_of(p, binders);
            if self.root == p {
                let msg = format!("the result is parameter {p} of {lambda}, outside that lambda");
                return Err(IrError::new("computation", msg));
            }
            let user = self.escaped_use(&free, p);
            let kind = self.node(user).op.kind().name();
            let msg = format!(
                "uses parameter {p} of {lambda} outside that lambda: a closure's argument, and \
                 anything computed from it, can only be used inside that closure"
            );
            return Err(IrError::new(kind, msg).in_computation(self, user));
        }
        match binders
            .iter()
            .enumerate()
            .find(|(i, b)| matches!(self.nodes[*i].op, Op::Param) && b.is_none())
        {
            Some((i, _)) => {
                let p = NodeId(i as u64);
                Err(IrError::new("param", "not bound by any lambda").in_computation(self, p))
            }
            None => Ok(()),
        }
    }

    /// The lambda parameter `p` belongs to, as an error names it: its binder's site, or where
    /// the parameter was made when its binder is not part of the computation.
    fn lambda_of(&self, p: NodeId, binders: &Binders) -> String {
        match (binders[p.0 as usize], self.loc(p)) {
            (Some(b), _) => format!("the lambda of {}", self.site(b)),
            (None, Some(loc)) => format!("the lambda at {loc}"),
            (None, None) => "a lambda that is not part of the computation".into(),
        }
    }

    /// The node that uses the free parameter `p` outside its lambda: walks down from the root
    /// through the nodes `p` is free in, never entering a lambda that binds it.
    fn escaped_use(&self, free: &[BTreeSet<NodeId>], p: NodeId) -> NodeId {
        let has = |n: NodeId| free[n.0 as usize].contains(&p);
        let mut n = self.root;
        loop {
            let op = &self.node(n).op;
            let lambdas: Vec<_> = op
                .lambdas()
                .into_iter()
                .filter(|l| !l.params.contains(&p))
                .collect();
            if op.operands().contains(&p) || lambdas.iter().any(|l| l.body == p) {
                return n;
            }
            n = op
                .operands()
                .into_iter()
                .chain(lambdas.iter().map(|l| l.body))
                .find(|&r| has(r))
                .unwrap_or_else(|| panic!("internal: free parameter {p} not reached from {n}"));
        }
    }
}
