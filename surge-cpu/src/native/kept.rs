//! Inspected layouts of keyed inputs, per phase and shape, kept in the [`super::Workspace`]: the
//! stores of the SELL (`super::sell::SellStore`) and BCSR (`super::bcsr`) layouts.

use std::sync::Arc;

/// Layouts `L` of shapes `S`, each built once per (phase, key, shape); `None` (the inspector
/// found no layout) is kept too, so a refused input set is not inspected again.
#[derive(Debug)]
pub(super) struct KeptLayouts<S, L> {
    kept: Vec<Kept<S, L>>,
}

impl<S, L> Default for KeptLayouts<S, L> {
    fn default() -> Self {
        KeptLayouts { kept: Vec::new() }
    }
}

#[derive(Debug)]
struct Kept<S, L> {
    phase: usize,
    key: u64,
    shape: S,
    layout: Option<Arc<L>>,
}

impl<S: Copy + PartialEq, L> KeptLayouts<S, L> {
    /// The layout of phase `phase` in `shape`: the one kept under `key`, else `build`'s (kept
    /// when there is a key, replacing the phase's layouts of other keys).
    pub(super) fn layout(
        &mut self,
        phase: usize,
        key: Option<u64>,
        shape: S,
        build: impl FnOnce() -> Option<L>,
    ) -> Option<Arc<L>> {
        let Some(key) = key else {
            return build().map(Arc::new);
        };
        if let Some(k) = self
            .kept
            .iter()
            .find(|k| k.phase == phase && k.key == key && k.shape == shape)
        {
            return k.layout.clone();
        }
        let layout = build().map(Arc::new);
        self.kept.retain(|k| k.phase != phase || k.key == key);
        self.kept.push(Kept {
            phase,
            key,
            shape,
            layout: layout.clone(),
        });
        layout
    }

    /// The layout of `shape` kept for phase `phase`, if one was built for a keyed run.
    pub(super) fn kept(&self, phase: usize, shape: S) -> Option<&L> {
        self.kept
            .iter()
            .find(|k| k.phase == phase && k.shape == shape)?
            .layout
            .as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layout_is_built_once_per_key_and_shape_and_other_keys_replace_it() {
        let mut s: KeptLayouts<u8, u32> = KeptLayouts::default();
        let builds = std::cell::Cell::new(0);
        let get = |s: &mut KeptLayouts<u8, u32>, key, shape| {
            s.layout(0, key, shape, || {
                builds.set(builds.get() + 1);
                (shape != 9).then_some(u32::from(shape) * 10)
            })
            .map(|l| *l)
        };
        assert_eq!(get(&mut s, Some(1), 2), Some(20));
        assert_eq!(get(&mut s, Some(1), 2), Some(20));
        assert_eq!(get(&mut s, Some(1), 9), None);
        assert_eq!(get(&mut s, Some(1), 9), None);
        assert_eq!(get(&mut s, None, 3), Some(30));
        assert_eq!(get(&mut s, None, 3), Some(30));
        assert_eq!(s.kept(0, 2), Some(&20));
        assert_eq!(get(&mut s, Some(7), 4), Some(40));
        assert_eq!(
            s.kept(0, 2),
            None,
            "another key's layouts replace the phase's"
        );
        assert_eq!(builds.get(), 5);
    }
}
