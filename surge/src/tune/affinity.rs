//! The CPUs a measurement runs on, for the disturbance guard (`CpuBackend::stolen`).
//!
//! The guard counts the CPU time others took: the hypervisor's steal plus every other process's
//! busy time. Over the whole machine, an MPI rank bound to one core (`mpirun` binds each rank to
//! a core at two ranks or fewer) counted its sibling rank, busy on the other core by design, as
//! a disturbance: a 2-rank campaign over `../shared/matrices` on this 2-core VM (2026-11-27)
//! discarded 48 attempts, re-measured all 24 inputs and kept one at 53% "stolen", and took 104 s
//! against 15 s for one rank. A process bound to some of the CPUs counts only theirs (the
//! `cpuN` lines of `/proc/stat` for the CPUs in `Cpus_allowed_list`): what runs on the other
//! cores does not take time from it. Unbound ranks on one node still count each other.

/// The CPUs in `Cpus_allowed_list` of the text of `/proc/self/status` (`0-3,6`), increasing.
pub(crate) fn allowed_cpus(status: &str) -> Option<Vec<usize>> {
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?
        .trim();
    let mut cpus = Vec::new();
    for part in list.split(',').filter(|p| !p.is_empty()) {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse().ok()?, b.trim().parse().ok()?),
            None => {
                let c: usize = part.trim().parse().ok()?;
                (c, c)
            }
        };
        if a > b {
            return None;
        }
        cpus.extend(a..=b);
    }
    cpus.sort_unstable();
    cpus.dedup();
    (!cpus.is_empty()).then_some(cpus)
}

/// Steal and busy time (user, nice, system, irq, softirq) of one `/proc/stat` line's counters
/// (after its `cpu`/`cpuN` name), in USER_HZ ticks.
pub(crate) fn line_ticks(fields: &str) -> Option<(u64, u64)> {
    let v: Vec<u64> = fields
        .split_whitespace()
        .take(8)
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    let &[user, nice, system, _idle, _iowait, irq, softirq, steal] = v.as_slice() else {
        return None;
    };
    Some((steal, user + nice + system + irq + softirq))
}

/// Steal and busy time of the CPUs `cpus` from the text of `/proc/stat` (their `cpuN` lines),
/// in USER_HZ ticks; None if one of them has no line.
pub(crate) fn cpus_ticks(stat: &str, cpus: &[usize]) -> Option<(u64, u64)> {
    let (mut steal, mut busy, mut found) = (0, 0, 0);
    for line in stat.lines() {
        let Some(rest) = line.strip_prefix("cpu") else {
            continue;
        };
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        let Ok(n) = rest[..digits].parse::<usize>() else {
            continue;
        };
        if cpus.binary_search(&n).is_ok() {
            let (s, b) = line_ticks(&rest[digits..])?;
            steal += s;
            busy += b;
            found += 1;
        }
    }
    (found == cpus.len()).then_some((steal, busy))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_allowed_list_is_read_with_ranges() {
        let status = "Name:\tsurge\nCpus_allowed:\t3\nCpus_allowed_list:\t0-2,5,7-8\n";
        assert_eq!(allowed_cpus(status), Some(vec![0, 1, 2, 5, 7, 8]));
        assert_eq!(allowed_cpus("Cpus_allowed_list:\t1\n"), Some(vec![1]));
        assert_eq!(allowed_cpus("Cpus_allowed_list:\t3-1\n"), None);
        assert_eq!(allowed_cpus("Cpus_allowed_list:\tx\n"), None);
        assert_eq!(allowed_cpus("Name:\tsurge\n"), None);
        if let Ok(s) = std::fs::read_to_string("/proc/self/status") {
            assert!(allowed_cpus(&s).is_some_and(|c| !c.is_empty()));
        }
    }

    #[test]
    fn only_the_allowed_cpus_lines_are_summed() {
        let stat = "cpu  4871828 210942 312031 1901913 20587 0 3755 89140 0 0\n\
                    cpu0 2381565 100888 147870 1021001 6537 0 1560 45206 0 0\n\
                    cpu1 2490262 110054 164160 880911 14050 0 2195 43934 0 0\n\
                    intr 1 2 3\n";
        assert_eq!(
            cpus_ticks(stat, &[1]),
            Some((43934, 2490262 + 110054 + 164160 + 2195))
        );
        assert_eq!(
            cpus_ticks(stat, &[0, 1]),
            Some((
                45206 + 43934,
                2381565 + 100888 + 147870 + 1560 + 2490262 + 110054 + 164160 + 2195
            )),
            "the two lines, not the aggregate (taken at another moment in this fixture)"
        );
        assert_eq!(cpus_ticks(stat, &[2]), None, "no line for cpu2");
        assert_eq!(cpus_ticks("cpu0 1 2 3\n", &[0]), None);
    }
}
