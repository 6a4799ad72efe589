//! The tuning store: one JSON file per (workload, platform, device) holding the model and every
//! measurement it was trained on, so a user can see why a variant won. Versioned and keyed so a
//! store written by another Surge, for another computation (other name, or the same name whose
//! computation's structure changed), on another machine, for another variant set or on other
//! features is detected and refused, never silently misused.
//!
//! The store records the feature set it was trained on (each group's name, version and feature
//! names): a model must never be queried with features computed another way than those it
//! learned from, and a change to one workload's features (a group's version bumped, a feature
//! renamed, added or removed) refuses that workload's stores alone, where bumping
//! [`SCHEMA_VERSION`] would refuse every workload's.

use super::features::{FeatureGroupKey, FeatureSet};
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
/// 4: the store records its feature set; a feature change now bumps that group's version, not
/// the schema.
pub const SCHEMA_VERSION: u32 = 4;

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
    /// The feature set the model was trained on, group by group (empty in a campaign journal
    /// written before stores recorded it, which is then another campaign's).
    #[serde(default)]
    pub features: Vec<FeatureGroupKey>,
}

impl StoreKey {
    pub fn new(
        computation: &str,
        structure: &str,
        platform_device: &str,
        variants: &[String],
        features: &FeatureSet,
    ) -> StoreKey {
        let (platform, device) = super::split_platform(platform_device);
        StoreKey {
            computation: computation.to_string(),
            structure: structure.to_string(),
            platform: platform.to_string(),
            device: device.to_string(),
            variants_checksum: variants_checksum(variants),
            features: features.key(),
        }
    }
}

/// Why a store trained on the feature groups `trained` cannot serve `computation`, whose
/// groups are now `current`; None when they are the same.
pub fn feature_difference(
    computation: &str,
    trained: &[FeatureGroupKey],
    current: &[FeatureGroupKey],
) -> Option<String> {
    let why = current
        .iter()
        .find_map(|g| group_difference(trained, g))
        .or_else(|| {
            let gone = trained
                .iter()
                .find(|t| current.iter().all(|g| g.name != t.name))?;
            Some(format!(
                "with feature group `{}`, which this Surge no longer computes",
                gone.name
            ))
        })
        .or_else(|| {
            let names = |k: &[FeatureGroupKey]| k.iter().map(|g| g.name.clone()).collect();
            let (a, b): (Vec<String>, Vec<String>) = (names(trained), names(current));
            (a != b).then(|| format!("with feature groups {a:?}, this Surge computes {b:?}"))
        })?;
    Some(format!(
        "the store for `{computation}` was trained {why}; re-run `surge tune {computation}` \
         (or `surge::tune::tune` from Rust)"
    ))
}

/// How the group named as `g` was trained otherwise, if it was.
fn group_difference(trained: &[FeatureGroupKey], g: &FeatureGroupKey) -> Option<String> {
    let Some(t) = trained.iter().find(|t| t.name == g.name) else {
        return Some(format!(
            "without feature group `{}`, which this Surge computes",
            g.name
        ));
    };
    if t.version != g.version {
        return Some(format!(
            "with feature group `{}` version {}, this Surge computes version {}",
            g.name, t.version, g.version
        ));
    }
    (t.features != g.features).then(|| {
        format!(
            "with feature group `{}` computing {:?}, this Surge computes {:?}",
            g.name, t.features, g.features
        )
    })
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
        if let Some(why) = feature_difference(&k.computation, &k.features, &key.features) {
            return Err(why);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;
    use crate::tune::features::FeatureGroup;
    use crate::tune::simulated::SimulatedBackend;
    use crate::tune::{self, TuneInput, TuneOptions, Tuned, Workload};

    /// `sum` with one feature group of its own, `rows` of `version` computing `names`.
    fn workload(version: u32, names: &[&str]) -> Workload {
        let features = names.iter().map(|n| (n.to_string(), true)).collect();
        let n = names.len();
        let g = FeatureGroup::new("rows", features, move |i: &TuneInput| Ok(vec![i.work; n]));
        Workload::new("sum").with_group(g.with_version(version))
    }

    /// A store for `w` tuned on the simulated sized rule, saved under a fresh directory.
    fn saved_store(w: &Workload, name: &str) -> Result<(SimulatedBackend, PathBuf)> {
        let inputs = [100usize, 10_000, 100_000, 2_000_000]
            .into_iter()
            .map(|n| {
                let x = Seq::input("x", vec![1.0f64; n])?;
                w.input(format!("n={n}"), Computation::new(&reduce(add, &x)?)?)
            })
            .collect::<Result<Vec<_>>>()?;
        let b = SimulatedBackend::sized("sum");
        let store = tune::tune(&b, w, &inputs, &TuneOptions::default(), &mut |_| {})?;
        let dir = std::env::temp_dir().join(format!("surge-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("sum.json");
        store.save(&path)?;
        Ok((b, path))
    }

    /// Opening the store trained on `trained` with `now` is refused with `message`, and
    /// loading it falls back to the default variant saying the same.
    fn refused(trained: &Workload, now: &Workload, name: &str, message: &str) -> Result<()> {
        let (b, path) = saved_store(trained, name)?;
        let e = Tuned::open_from(&path, now, &b).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("input `{}`: {message}", path.display())
        );
        let t = Tuned::load_from(&path, now, &b);
        assert!(t.warning().is_some_and(|w| w.ends_with(message)), "{t:?}");
        Ok(())
    }

    #[test]
    fn a_store_of_another_group_version_is_refused() -> Result<()> {
        refused(
            &workload(1, &["rows"]),
            &workload(2, &["rows"]),
            "version",
            "the store for `sum` was trained with feature group `rows` version 1, this Surge \
             computes version 2; re-run `surge tune sum` (or `surge::tune::tune` from Rust)",
        )
    }

    #[test]
    fn a_store_of_renamed_or_added_features_is_refused() -> Result<()> {
        refused(
            &workload(1, &["rows"]),
            &workload(1, &["row_count"]),
            "renamed",
            "the store for `sum` was trained with feature group `rows` computing [\"rows\"], \
             this Surge computes [\"row_count\"]; re-run `surge tune sum` (or \
             `surge::tune::tune` from Rust)",
        )?;
        let added = workload(1, &["rows"]).with_feature("bytes", true, |i| Ok(i.work * 8.0));
        refused(
            &workload(1, &["rows"]),
            &added,
            "added",
            "the store for `sum` was trained without feature group `bytes`, which this Surge \
             computes; re-run `surge tune sum` (or `surge::tune::tune` from Rust)",
        )
    }

    #[test]
    fn a_store_of_the_same_features_loads() -> Result<()> {
        let w = workload(3, &["rows"]);
        let (b, path) = saved_store(&w, "same")?;
        let t = Tuned::open_from(&path, &w, &b)?;
        assert_eq!(
            t.store().map(|s| s.key.features.clone()),
            Some(w.features().key())
        );
        assert_eq!(t.store().map(|s| s.key.features[1].version), Some(3));
        Ok(())
    }

    /// The spmv CUSP group is at version 2 (issue 24's halved samples): a version 1 store is
    /// refused, and so is a group removed since.
    #[test]
    fn spmv_stores_of_the_old_cusp_features_are_refused() {
        let now = crate::apps::App::Spmv.workload().features().key();
        assert_eq!(now[1].name, "cusp");
        assert_eq!(now[1].version, 2);
        let mut old = now.clone();
        old[1].version = 1;
        assert_eq!(
            feature_difference("spmv", &old, &now).as_deref(),
            Some(
                "the store for `spmv` was trained with feature group `cusp` version 1, this \
                 Surge computes version 2; re-run `surge tune spmv` (or `surge::tune::tune` \
                 from Rust)"
            )
        );
        assert_eq!(
            feature_difference("spmv", &now, &now[..1]).as_deref(),
            Some(
                "the store for `spmv` was trained with feature group `cusp`, which this Surge \
                 no longer computes; re-run `surge tune spmv` (or `surge::tune::tune` from Rust)"
            )
        );
        assert_eq!(feature_difference("spmv", &now, &now), None);
    }
}
