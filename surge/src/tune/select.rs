//! Run-time selection: load the tuned model once, then pick a variant per input from its
//! features. Anything doubtful (no store, corrupt store, other schema, other machine, other
//! variant set, other features) degrades to the backend's default variant with a warning: slower
//! perhaps, never wrong.

use super::features::FeatureSet;
use super::store::{StoreKey, TuningStore, default_path};
use super::{TuneInput, TuningBackend};
use crate::Result;
use crate::apps::App;
use std::fmt;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Instant;

/// The variant chosen for one input, and how.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Selection {
    pub variant: String,
    /// False when the default variant was used because no usable model exists.
    pub from_model: bool,
    pub warnings: Vec<String>,
    /// The raw feature values the model saw (empty when the default was used unseen).
    pub features: Vec<f64>,
    /// Time of the feature pass.
    pub feature_seconds: f64,
    /// Time of scaling plus the model query (the selection cost beyond the feature pass).
    pub query_seconds: f64,
}

enum State {
    Ready(Box<TuningStore>),
    Fallback(String),
}

/// A tuned app on one backend.
pub struct Tuned<'b> {
    app: App,
    backend: &'b dyn TuningBackend,
    features: FeatureSet,
    state: State,
    /// Result of checking the store's variant checksum against the backend (first `select`).
    variants_ok: OnceLock<Option<String>>,
    /// Print warnings to stderr as well as returning them.
    pub print_warnings: bool,
}

impl fmt::Debug for Tuned<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tuned")
            .field("app", &self.app)
            .field("platform", &self.backend.platform())
            .field("warning", &self.warning())
            .finish_non_exhaustive()
    }
}

impl<'b> Tuned<'b> {
    /// Loads the app's store from the default location for the backend's platform.
    pub fn load(app: App, backend: &'b dyn TuningBackend) -> Tuned<'b> {
        match default_path(app.name(), &backend.platform()) {
            Ok(p) => Tuned::load_from(&p, app, backend),
            Err(e) => Tuned::fallback(app, backend, e.to_string()),
        }
    }

    /// Loads a store from a file.
    pub fn load_from(path: &Path, app: App, backend: &'b dyn TuningBackend) -> Tuned<'b> {
        match TuningStore::load(path) {
            Ok(s) => Tuned::from_store(app, s, backend, FeatureSet::for_app(app)),
            Err(e) => Tuned::fallback(app, backend, e.to_string()),
        }
    }

    /// Uses a store in memory with the given features (user-defined features must be given
    /// again here: functions are not stored, only their names).
    pub fn from_store(
        app: App,
        store: TuningStore,
        backend: &'b dyn TuningBackend,
        features: FeatureSet,
    ) -> Tuned<'b> {
        let mut t = Tuned {
            app,
            backend,
            features,
            state: State::Ready(Box::new(store)),
            variants_ok: OnceLock::new(),
            print_warnings: true,
        };
        if let Err(reason) = t.check_static() {
            t = Tuned::fallback(app, backend, reason);
        }
        if let State::Ready(s) = &t.state {
            s.model.prepare();
        }
        t
    }

    fn fallback(app: App, backend: &'b dyn TuningBackend, reason: String) -> Tuned<'b> {
        let reason = format!("no usable tuning for {app}, using the default variant: {reason}");
        eprintln!("warning: {reason}");
        Tuned {
            app,
            backend,
            features: FeatureSet::for_app(app),
            state: State::Fallback(reason),
            variants_ok: OnceLock::new(),
            print_warnings: true,
        }
    }

    /// Checks everything that does not need an input: app, platform, device, features.
    fn check_static(&self) -> std::result::Result<(), String> {
        let State::Ready(s) = &self.state else {
            return Ok(());
        };
        let pd = self.backend.platform();
        let (platform, device) = super::split_platform(&pd);
        let k = &s.key;
        if k.app != self.app.name() {
            return Err(format!(
                "the store was tuned for app `{}`, not `{}`",
                k.app, self.app
            ));
        }
        if k.platform != platform || k.device != device {
            return Err(format!(
                "the store was tuned on `{}:{}`, this is `{platform}:{device}`",
                k.platform, k.device
            ));
        }
        if s.model.feature_names != self.features.names() {
            return Err(format!(
                "the store's features {:?} differ from this program's {:?}",
                s.model.feature_names,
                self.features.names()
            ));
        }
        if s.variants.is_empty() {
            return Err("the store lists no variants".into());
        }
        s.model
            .validate()
            .map_err(|e| format!("corrupt tuning store: {e}"))?;
        // Checked once here, so a query never has to search the variant set.
        if let Some(c) = s.model.classes.iter().find(|c| !s.variants.contains(c)) {
            return Err(format!(
                "corrupt tuning store: the model's class `{c}` is not in its variant set"
            ));
        }
        Ok(())
    }

    /// Why the default variant is used, if it is.
    pub fn warning(&self) -> Option<&str> {
        match &self.state {
            State::Fallback(r) => Some(r),
            State::Ready(_) => None,
        }
    }

    pub fn store(&self) -> Option<&TuningStore> {
        match &self.state {
            State::Ready(s) => Some(s),
            State::Fallback(_) => None,
        }
    }

    fn default_selection(&self, input: &TuneInput, reason: &str) -> Result<Selection> {
        Ok(Selection {
            variant: self.backend.default_variant(input)?,
            from_model: false,
            warnings: vec![reason.to_string()],
            features: Vec::new(),
            feature_seconds: 0.0,
            query_seconds: 0.0,
        })
    }

    /// Picks the variant for `input`.
    pub fn select(&self, input: &TuneInput) -> Result<Selection> {
        let store = match &self.state {
            State::Fallback(r) => return self.default_selection(input, r),
            State::Ready(s) => s,
        };
        let variants_problem = self.variants_ok.get_or_init(|| {
            let key = match self.backend.variants(input) {
                Ok(v) => StoreKey::new(self.app.name(), &self.backend.platform(), &v),
                Err(e) => return Some(format!("cannot list the backend's variants: {e}")),
            };
            store.check_key(&key).err().map(|r| {
                let r = format!(
                    "no usable tuning for {}, using the default variant: {r}",
                    self.app
                );
                if self.print_warnings {
                    eprintln!("warning: {r}");
                }
                r
            })
        });
        if let Some(r) = variants_problem {
            return self.default_selection(input, r);
        }
        let t = Instant::now();
        let f = self.features.evaluate(input)?;
        let feature_seconds = t.elapsed().as_secs_f64();
        let mut sel = self.select_from_features(&f.values);
        sel.feature_seconds = feature_seconds;
        if self.print_warnings {
            for w in &sel.warnings {
                eprintln!("warning: input `{}`: {w}", input.name);
            }
        }
        if !sel.from_model {
            sel.variant = self.backend.default_variant(input)?;
        }
        Ok(sel)
    }

    /// The model query alone on precomputed raw features: scaling and the classifier, no
    /// allocation, no formatting. None without a usable model. The variant is one the store's
    /// variant set holds (checked when the store was loaded).
    pub fn choose(&self, raw: &[f64]) -> Option<&str> {
        match &self.state {
            State::Ready(store) => Some(store.model.predict(raw)),
            State::Fallback(_) => None,
        }
    }

    /// [`choose`](Self::choose) with its time, the out-of-range warnings and the features, as
    /// a [`Selection`] (what `select` adds to the feature pass). `from_model` is false (and
    /// `variant` empty) without a usable model.
    pub fn select_from_features(&self, raw: &[f64]) -> Selection {
        let State::Ready(store) = &self.state else {
            return Selection {
                variant: String::new(),
                from_model: false,
                warnings: self.warning().map(String::from).into_iter().collect(),
                features: raw.to_vec(),
                feature_seconds: 0.0,
                query_seconds: 0.0,
            };
        };
        let t = Instant::now();
        let variant = store.model.predict(raw);
        let query_seconds = t.elapsed().as_secs_f64();
        // Formats only when a feature is out of range.
        let warnings = if store.model.in_range(raw) {
            Vec::new()
        } else {
            store.model.out_of_range(raw)
        };
        Selection {
            variant: variant.to_string(),
            from_model: true,
            warnings,
            features: raw.to_vec(),
            feature_seconds: 0.0,
            query_seconds,
        }
    }
}

impl Tuned<'_> {
    /// Runs `input`'s computation on `target` with the variant this model picks for it. When
    /// the pick cannot run there (e.g. `target` is another machine than the one tuned for),
    /// the default variant runs instead and the reason is added to the warnings.
    pub fn execute(
        &self,
        input: &TuneInput,
        target: &crate::Target,
    ) -> Result<(crate::Output, Selection)> {
        let c = &input.built.computation;
        let mut sel = self.select(input)?;
        match crate::execute_variant(c, target, &sel.variant) {
            Ok(out) => Ok((out, sel)),
            Err(e @ crate::SurgeError::Usage(_)) => {
                let w = format!(
                    "the chosen variant `{}` cannot run on this target ({e}); running the default",
                    sel.variant
                );
                if self.print_warnings {
                    eprintln!("warning: {w}");
                }
                sel.warnings.push(w);
                sel.from_model = false;
                let out = crate::execute(c, target)?;
                // The default's id where the model's platform is the target's (a CPU model
                // on a CUDA target ran CUDA's default, which this backend cannot name).
                sel.variant = if super::split_platform(&self.backend.platform()).0 == target.kind()
                {
                    self.backend.default_variant(input)?
                } else {
                    String::new()
                };
                Ok((out, sel))
            }
            Err(e) => Err(e),
        }
    }
}

/// Runs `input`'s computation on the CPU `target` with the variant the stored tuning model (of
/// `surge tune APP --platform cpu`) picks from its features, falling back to the default
/// variant with a warning on stderr when there is no usable store. Loads the store on every
/// call: to run many inputs, hold a [`Tuned`] and call [`Tuned::execute`].
///
/// ```no_run
/// use surge::tune::{self, TuneInput};
/// let input = TuneInput::spmv("lap", surge::apps::matgen::laplacian_2d(100))?;
/// let target = surge::Target::cpu();
/// let (out, sel) = tune::execute_tuned(&input, &target)?;
/// println!("{} (from the model: {})", sel.variant, sel.from_model);
/// # Ok::<(), surge::SurgeError>(())
/// ```
pub fn execute_tuned(
    input: &TuneInput,
    target: &crate::Target,
) -> Result<(crate::Output, Selection)> {
    let backend = super::cpu::CpuBackend::new();
    let tuned = Tuned::load(input.app(), &backend);
    tuned.execute(input, target)
}
