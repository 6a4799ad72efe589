//! Variants: one (platform, schedule, policy) point with a stable, printable id, e.g.
//! `cuda:h200/independent.cooperative/bx=128,by=1,lw=8,grain1=4,res1=warp,res2=warp,reduce2=raking`.

use crate::CodegenError;
use crate::policy::{PValue, long_name};
use crate::schedule::Schedule;
use crate::target::{CpuMachine, CudaDevice, Platform};
use std::fmt;
use std::str::FromStr;

/// A code variant. Parameters are (short name, value) in inference order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    pub platform: Platform,
    pub schedule: Schedule,
    pub params: Vec<(String, PValue)>,
}

impl Variant {
    /// The value of parameter `short` (e.g. `bx`, `grain1`).
    pub fn get(&self, short: &str) -> Option<&PValue> {
        self.params.iter().find(|p| p.0 == short).map(|p| &p.1)
    }
    pub fn id(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/", self.platform, self.schedule)?;
        for (i, (k, v)) in self.params.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{k}={v}")?;
        }
        Ok(())
    }
}

fn err(id: &str, message: String) -> CodegenError {
    CodegenError::Variant {
        id: id.to_string(),
        message,
    }
}

/// Splits `grain12` into (`grain`, Some(12)); `bx` into (`bx`, None).
fn split_depth(name: &str) -> (&str, Option<usize>) {
    let cut = name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (base, digits) = name.split_at(cut);
    (base, digits.parse().ok())
}

impl FromStr for Variant {
    type Err = CodegenError;
    /// Parses an id; every error names the bad part (platform, device, schedule element,
    /// parameter name or value).
    fn from_str(id: &str) -> Result<Variant, CodegenError> {
        let mut parts = id.splitn(3, '/');
        let (Some(plat), Some(sched), Some(params)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(err(
                id,
                "expected PLATFORM/SCHEDULE/PARAMS, e.g. cuda:h200/independent.cooperative/bx=128,..."
                    .into(),
            ));
        };
        let (kind, dev) = plat.split_once(':').ok_or_else(|| {
            err(
                id,
                format!("platform `{plat}` must be cpu:MACHINE or cuda:DEVICE"),
            )
        })?;
        let platform = match kind {
            "cuda" => Platform::Cuda(
                CudaDevice::builtin(dev)
                    .map_err(|_| err(id, format!("unknown CUDA device `{dev}`")))?,
            ),
            "cpu" => Platform::Cpu(
                CpuMachine::named(dev)
                    .map_err(|_| err(id, format!("unknown CPU machine `{dev}`")))?,
            ),
            _ => return Err(err(id, format!("unknown platform `{kind}`"))),
        };
        let schedule: Schedule = sched
            .parse()
            .map_err(|m: String| err(id, format!("schedule `{sched}`: {m}")))?;
        let mut out = Vec::new();
        if !params.is_empty() {
            for kv in params.split(',') {
                let (k, v) = kv
                    .split_once('=')
                    .ok_or_else(|| err(id, format!("parameter `{kv}` is not NAME=VALUE")))?;
                let (base, depth) = split_depth(k);
                if long_name(base).is_none() {
                    return Err(err(id, format!("unknown parameter `{k}`")));
                }
                if let Some(d) = depth
                    && (d == 0 || d > schedule.depth())
                {
                    return Err(err(
                        id,
                        format!(
                            "parameter `{k}` names level {d} of a {}-level schedule",
                            schedule.depth()
                        ),
                    ));
                }
                let v = PValue::parse(v).ok_or_else(|| {
                    err(id, format!("value `{v}` of parameter `{k}` is malformed"))
                })?;
                if out.iter().any(|(n, _): &(String, PValue)| n == k) {
                    return Err(err(id, format!("parameter `{k}` given twice")));
                }
                out.push((k.to_string(), v));
            }
        }
        Ok(Variant {
            platform,
            schedule,
            params: out,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let id = "cuda:h200/independent.cooperative/bx=128,by=1,lw=8,grain1=4,res1=warp,res2=warp,reduce2=raking";
        let v: Variant = id.parse().unwrap();
        assert_eq!(v.to_string(), id);
        assert_eq!(v.get("lw"), Some(&PValue::Int(8)));
        for (bad, part) in [
            ("cuda:p100/independent/bx=1", "p100"),
            ("gpu:h200/independent/bx=1", "gpu"),
            ("cuda:h200/independent.parallel/bx=1", "parallel"),
            ("cuda:h200/independent/zz=1", "zz"),
            ("cuda:h200/independent/grain3=1", "grain3"),
            ("cuda:h200/independent/bx=1x!", "1x!"),
            ("cuda:h200/independent/bx", "bx"),
            ("cuda:h200", "PLATFORM/SCHEDULE/PARAMS"),
        ] {
            let e = bad.parse::<Variant>().unwrap_err().to_string();
            assert!(e.contains(part), "{bad}: {e}");
        }
    }
}
