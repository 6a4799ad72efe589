//! Which machines the ranks of a tuning campaign measure on (plain Rust: the MPI exchange is in
//! `campaign.rs`). A model is keyed by device, so ranks on different machines are refused unless
//! the user asks for it.

/// Why a campaign over ranks measuring on `platforms` (rank order) is refused: the first rank
/// whose machine differs from rank 0's, unless `allow_mixed`.
pub fn mixed_machines(platforms: &[String], allow_mixed: bool) -> Option<String> {
    let ours = platforms.first()?;
    let (r, theirs) = platforms
        .iter()
        .enumerate()
        .find(|(_, p)| *p != ours && !allow_mixed)?;
    Some(format!(
        "rank {r} measures on `{theirs}` but rank 0 on `{ours}`: a model is kept per device, so \
         a campaign over different machines is refused (--allow-mixed-machines to measure \
         anyway, keyed by rank 0's)"
    ))
}

#[cfg(test)]
mod tests {
    use super::mixed_machines;

    #[test]
    fn a_campaign_over_different_machines_is_refused_unless_asked() {
        let p = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let same = p(&["cpu:EPYC (2 threads)"; 3]);
        assert_eq!(mixed_machines(&same, false), None);
        let mixed = p(&[
            "cpu:EPYC (2 threads)",
            "cpu:EPYC (2 threads)",
            "cpu:Xeon (8 threads)",
        ]);
        let why = mixed_machines(&mixed, false).expect("refused");
        assert!(
            why.starts_with(
                "rank 2 measures on `cpu:Xeon (8 threads)` but rank 0 on `cpu:EPYC (2 threads)`"
            ),
            "{why}"
        );
        assert!(why.contains("--allow-mixed-machines"), "{why}");
        assert_eq!(mixed_machines(&mixed, true), None);
        assert_eq!(mixed_machines(&[], false), None);
    }
}
