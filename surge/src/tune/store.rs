//! The tuning store: one JSON file per (workload, platform, device) holding the model and every
//! measurement it was trained on, so a user can see why a variant won. Versioned and keyed so a
//! store written by another Surge, for another computation (other name, or the same name whose
//! computation's structure changed), on another machine or for another variant set is detected
//! and refused, never silently misused.

use super::model::Model;
pub use super::record::InputRecord;
use super::tune_err;
use crate::{Result, SurgeError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Bumped whenever the store's layout changes; older or newer stores are refused.
/// 2: keyed by workload name and computation structure instead of a built-in app.
/// 3: the spmv CUSP features read smaller samples (`tune::cusp`, issue 24): a model trained on
/// the old ones would be queried with features computed another way.
pub const SCHEMA_VERSION: u32 = 3;

/// What a store is valid for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreKey {
    /// The workload's name.
    pub computation: String,
    /// The structure hash of the workload's computation (hex): its IR with input lengths and
    /// literal values erased, so every input size shares it and a changed program does not.
    pub structure: String,
    /// `cpu`, `cuda`, `sim`.
    pub platform: String,
    /// CPU or GPU model.
    pub device: String,
    /// FNV-1a 64 of the sorted variant ids, hex.
    pub variants_checksum: String,
}

impl StoreKey {
    pub fn new(
        computation: &str,
        structure: &str,
        platform_device: &str,
        variants: &[String],
    ) -> StoreKey {
        let (platform, device) = super::split_platform(platform_device);
        StoreKey {
            computation: computation.to_string(),
            structure: structure.to_string(),
            platform: platform.to_string(),
            device: device.to_string(),
            variants_checksum: variants_checksum(variants),
        }
    }
}

/// Checksum of a variant set, independent of its order.
pub fn variants_checksum(variants: &[String]) -> String {
    let mut v: Vec<&str> = variants.iter().map(String::as_str).collect();
    v.sort_unstable();
    let mut h: u64 = 0xcbf29ce484222325;
    for s in v {
        for b in s.bytes().chain(std::iter::once(b'\n')) {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    format!("{h:016x}")
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TuningStore {
    pub schema_version: u32,
    pub key: StoreKey,
    pub variants: Vec<String>,
    pub default_variant: String,
    pub inputs: Vec<InputRecord>,
    pub model: Model,
    /// How the training inputs were labelled: the near-tie set cover's tolerance, classes and
    /// bound (its per-input labels are left out: they follow from the measurements).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labelling: Option<super::cover::Cover>,
    /// `surge <version>` that wrote it.
    pub written_by: String,
}

/// Why a store whose computation changed is refused.
pub fn stale(computation: &str) -> String {
    format!(
        "the store was tuned for another version of `{computation}` (its computation's \
         structure changed since): retune it (`surge tune`, or `surge::tune::tune` from Rust)"
    )
}

/// Where stores live: `$SURGE_DATA`, else `$XDG_DATA_HOME/surge`, else `~/.local/share/surge`.
pub fn data_dir() -> Option<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("SURGE_DATA")
        .or_else(|| env("XDG_DATA_HOME").map(|d| d.join("surge")))
        .or_else(|| env("HOME").map(|h| h.join(".local/share/surge")))
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The default store file of a workload on a platform (`"<platform>:<device>"`).
pub fn default_path(workload: &str, platform_device: &str) -> Result<PathBuf> {
    let dir = data_dir()
        .ok_or_else(|| tune_err("no data directory: set $SURGE_DATA, $XDG_DATA_HOME or $HOME"))?;
    let (p, d) = super::split_platform(platform_device);
    Ok(dir.join("tune").join(format!(
        "{}-{}-{}.json",
        sanitize(workload),
        sanitize(p),
        sanitize(d)
    )))
}

impl TuningStore {
    /// Writes atomically: a temporary file in the same directory, then a rename, so a reader
    /// never sees half a store and a crash never destroys the previous one.
    pub fn save(&self, path: &Path) -> Result<()> {
        let io = |what: &str, e: std::io::Error| SurgeError::Input {
            input: path.display().to_string(),
            message: format!("{what}: {e}"),
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| io("creating its directory", e))?;
        }
        let json = serde_json::to_vec_pretty(self)
            .map_err(|e| tune_err(format!("serializing the store: {e}")))?;
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(format!(".tmp{}", std::process::id()));
        let tmp = PathBuf::from(tmp);
        std::fs::write(&tmp, json).map_err(|e| io("writing the temporary file", e))?;
        std::fs::rename(&tmp, path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io("renaming the temporary file into place", e)
        })
    }

    /// Reads a store, checking the schema version before the layout.
    pub fn load(path: &Path) -> Result<TuningStore> {
        let bad = |m: String| SurgeError::Input {
            input: path.display().to_string(),
            message: m,
        };
        let text =
            std::fs::read(path).map_err(|e| bad(format!("cannot read the tuning store: {e}")))?;
        let v: serde_json::Value = serde_json::from_slice(&text)
            .map_err(|e| bad(format!("corrupt tuning store (not JSON): {e}")))?;
        match v.get("schema_version").and_then(|s| s.as_u64()) {
            Some(s) if s == SCHEMA_VERSION as u64 => {}
            Some(s) => {
                return Err(bad(format!(
                    "tuning store schema version {s}, this Surge reads version {SCHEMA_VERSION}; re-run `surge tune`"
                )));
            }
            None => return Err(bad("not a tuning store (no schema_version)".into())),
        }
        serde_json::from_value(v).map_err(|e| bad(format!("corrupt tuning store: {e}")))
    }

    /// Checks that this store is for `key`; the error says which part differs.
    pub fn check_key(&self, key: &StoreKey) -> std::result::Result<(), String> {
        let k = &self.key;
        let diff = |what: &str, a: &str, b: &str| {
            Err(format!("the store was tuned for {what} `{a}`, not `{b}`"))
        };
        if k.computation != key.computation {
            return diff("computation", &k.computation, &key.computation);
        }
        if k.structure != key.structure {
            return Err(stale(&k.computation));
        }
        if k.platform != key.platform {
            return diff("platform", &k.platform, &key.platform);
        }
        if k.device != key.device {
            return diff("device", &k.device, &key.device);
        }
        if k.variants_checksum != key.variants_checksum {
            return diff("variant set", &k.variants_checksum, &key.variants_checksum);
        }
        Ok(())
    }
}
