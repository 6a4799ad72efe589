//! The points in label order on the host: after the first relabeling, one-process Lloyd keeps its
//! copy of the points arranged by cluster (ascending original index within a cluster), so that
//! Listing 5.5's `gather(points, order)` reads rows that lie next to each other for every point
//! whose label has not changed since, instead of every k-th row across the whole buffer. The
//! programs are the same; only the positions the host hands them differ. Sums keep the points'
//! original order within each cluster (the counting sort below walks original indices), so the
//! centroids are bit for bit those of the unpermuted run.
//!
//! Measured (README, *Issue 22*): at 4·10^5 points the recalculation's gather was 28 ms of a
//! 72 ms iteration, stalled on memory (perf: half its samples on the prefetch of the next rows).

/// Where each point lies in the host's copy: `perm[pos]` is the original index of the point at
/// `pos`, `inv[i]` the position of original point `i`.
pub(crate) struct Layout {
    perm: Vec<u32>,
    inv: Vec<u32>,
}

impl Layout {
    /// Writes `points` (row-major, `d` per point) into `into` (as long, already written: a fresh
    /// buffer would cost a page fault per 4 KiB on first touch, 4.5 ms for the 6.4 MB of 25,000
    /// points on this VM, 3× a whole relabeling) arranged by `order` (original indices in the
    /// order wanted, e.g. [`super::lloyd::sort_by_label`]'s): position `pos` then holds point
    /// `order[pos]`. The row 8 ahead is prefetched, as the emitted gathers do (a hand-written
    /// test at 10^5 points: 4.2 ms prefetched, 9.1–9.8 ms not).
    pub(crate) fn arrange(points: &[f64], into: &mut [f64], d: usize, order: Vec<u32>) -> Layout {
        assert_eq!(
            points.len(),
            into.len(),
            "internal: arranging into another length"
        );
        for (pos, row) in into.chunks_exact_mut(d.max(1)).enumerate() {
            if let Some(&ahead) = order.get(pos + 8) {
                prefetch(&points[ahead as usize * d..(ahead as usize + 1) * d]);
            }
            let i = order[pos] as usize;
            row.copy_from_slice(&points[i * d..(i + 1) * d]);
        }
        let mut inv = vec![0u32; order.len()];
        for (pos, &i) in order.iter().enumerate() {
            inv[i as usize] = pos as u32;
        }
        Layout { perm: order, inv }
    }

    /// [`Layout::arrange`] in the order of `labels` (those of the unarranged points): also gives
    /// the arranged copy's sort by label (every position already in label order) and `labels`
    /// by position in it.
    pub(crate) fn arrange_by_labels(
        points: &[f64],
        into: &mut [f64],
        labels: &[u32],
        k: usize,
        d: usize,
    ) -> (super::lloyd::Sorted, Layout, Vec<u32>) {
        let (order, sorted, keys, sizes) = super::lloyd::sort_by_label(labels, k);
        let layout = Layout::arrange(points, into, d, order);
        let identity = (0..labels.len() as u32).collect();
        let by_position = layout.to_positions(labels);
        ((identity, sorted, keys, sizes), layout, by_position)
    }

    /// `values` (one per original point) by position.
    pub(crate) fn to_positions(&self, values: &[u32]) -> Vec<u32> {
        self.perm.iter().map(|&i| values[i as usize]).collect()
    }

    /// `values` (one per position) by original point.
    pub(crate) fn to_original(&self, values: &[u32]) -> Vec<u32> {
        self.inv.iter().map(|&pos| values[pos as usize]).collect()
    }

    /// [`super::lloyd::sort_by_label`] of labels given by position: the positions in label
    /// order (a stable counting sort over original indices), their labels, and each non-empty
    /// cluster's label and size.
    pub(crate) fn sort_by_label(&self, labels: &[u32], k: usize) -> super::lloyd::Sorted {
        super::lloyd::sort_positions(labels, k, self.inv.iter().copied())
    }
}

/// Asks for the cache lines of `row` ahead of their use.
fn prefetch(row: &[f64]) {
    #[cfg(target_arch = "x86_64")]
    for line in row.chunks(8) {
        // SAFETY: a prefetch is only a hint; the address is that of a live slice element.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                line.as_ptr().cast(),
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = row;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_sort_as_the_original_points_do() {
        let labels = [2u32, 0, 2, 1, 0, 2, 1];
        let d = 2;
        let points: Vec<f64> = (0..labels.len() * d).map(|v| v as f64).collect();
        let (order, sorted, keys, sizes) = super::super::lloyd::sort_by_label(&labels, 3);
        let mut data = vec![0.0; points.len()];
        let layout = Layout::arrange(&points, &mut data, d, order.clone());
        for (pos, &i) in order.iter().enumerate() {
            assert_eq!(data[pos * d..(pos + 1) * d], points[i as usize * d..][..d]);
        }
        let by_pos = layout.to_positions(&labels);
        assert_eq!(layout.to_original(&by_pos), labels);
        // Sorted at arrangement: the positions are already in label order.
        let (o, s, kk, z) = layout.sort_by_label(&by_pos, 3);
        assert_eq!(o, (0..labels.len() as u32).collect::<Vec<_>>());
        assert_eq!((s, kk, z), (sorted, keys, sizes));
        // A label changes: the positions follow the original indices' order within a cluster.
        let mut moved = labels;
        moved[6] = 0;
        let (o, ..) = layout.sort_by_label(&layout.to_positions(&moved), 3);
        let (want, ..) = super::super::lloyd::sort_by_label(&moved, 3);
        let gathered: Vec<u32> = o.iter().map(|&p| order[p as usize]).collect();
        assert_eq!(gathered, want);
    }
}
