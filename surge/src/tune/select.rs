//! Run-time selection: load the tuned model once, then pick a variant per input from its
//! features. Two ways to open a model:
//!
//! * [`Tuned::open`] (what `surge run --tuned` uses) refuses anything doubtful with an error
//!   saying what to do: no store, a corrupt store, another schema, another machine, another
//!   variant set, other features, a computation whose structure changed.
//! * [`Tuned::load`] degrades to the backend's default variant with a warning instead: slower
//!   perhaps, never wrong.

use super::store::{StoreKey, TuningStore, default_path, feature_difference, stale};
use super::{TuneInput, TuningBackend, Workload};
use crate::{Result, SurgeError};
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

/// A tuned workload on one backend.
pub struct Tuned<'b> {
    workload: Workload,
    backend: &'b dyn TuningBackend,
    state: State,
    /// Result of checking the store's variant checksum against the backend (first `select`).
    variants_ok: OnceLock<Option<String>>,
    /// The IR of an input whose structure hash matched the store's. A later input equal to it
    /// but for literal values and lengths (`structure_difference`, which allocates nothing when
    /// they are equal) has that hash too, so it is checked without hashing its IR: the hash
    /// (the IR cloned, erased, written as JSON, FNV-1a) cost 6-19 µs per SpMV input here, more
    /// than its features.
    verified: OnceLock<surge_codegen::ir::Computation>,
    /// The features whose out-of-range warning was printed: each is printed once per `Tuned`
    /// (a loop of selections repeated it on every call, and printing it cost one selection
    /// 94 µs here); [`Selection::warnings`] still holds every input's.
    printed: std::sync::Mutex<std::collections::BTreeSet<String>>,
    /// Print warnings to stderr as well as returning them.
    pub print_warnings: bool,
}

impl fmt::Debug for Tuned<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tuned")
            .field("workload", &self.workload.name())
            .field("platform", &self.backend.platform())
            .field("warning", &self.warning())
            .finish_non_exhaustive()
    }
}

impl<'b> Tuned<'b> {
    /// Loads the workload's store from the default location for the backend's platform; the
    /// default variant (with a warning) when it is missing or unusable.
    pub fn load(workload: &Workload, backend: &'b dyn TuningBackend) -> Tuned<'b> {
        match default_path(workload.name(), &backend.platform()) {
            Ok(p) => Tuned::load_from(&p, workload, backend),
            Err(e) => Tuned::fallback(workload, backend, e.to_string()),
        }
    }

    /// Loads a store from a file; the default variant (with a warning) when it is unusable.
    pub fn load_from(
        path: &Path,
        workload: &Workload,
        backend: &'b dyn TuningBackend,
    ) -> Tuned<'b> {
        match TuningStore::load(path) {
            Ok(s) => Tuned::from_store(workload, s, backend),
            Err(e) => Tuned::fallback(workload, backend, e.to_string()),
        }
    }

    /// Opens the workload's store from the default location, or says why it cannot be used
    /// (missing, corrupt, another machine, another computation) and what to do.
    pub fn open(workload: &Workload, backend: &'b dyn TuningBackend) -> Result<Tuned<'b>> {
        Tuned::open_from(
            &default_path(workload.name(), &backend.platform())?,
            workload,
            backend,
        )
    }

    /// [`open`](Self::open) from a file.
    pub fn open_from(
        path: &Path,
        workload: &Workload,
        backend: &'b dyn TuningBackend,
    ) -> Result<Tuned<'b>> {
        let refused = |message: String| SurgeError::Input {
            input: path.display().to_string(),
            message,
        };
        if !path.exists() {
            return Err(refused(format!(
                "no tuning store for `{}` on `{}`: tune it first (`surge tune {}`, or \
                 `surge::tune::tune` from Rust)",
                workload.name(),
                backend.platform(),
                workload.name()
            )));
        }
        let store = TuningStore::load(path)?;
        let mut t = Tuned::ready(workload, store, backend);
        t.print_warnings = false;
        t.check_static().map_err(refused)?;
        if let State::Ready(s) = &t.state {
            s.model.prepare();
        }
        t.print_warnings = true;
        Ok(t)
    }

    /// Uses a store in memory (user-defined features are the workload's: functions are not
    /// stored, only their names, which must match).
    pub fn from_store(
        workload: &Workload,
        store: TuningStore,
        backend: &'b dyn TuningBackend,
    ) -> Tuned<'b> {
        let mut t = Tuned::ready(workload, store, backend);
        if let Err(reason) = t.check_static() {
            t = Tuned::fallback(workload, backend, reason);
        }
        if let State::Ready(s) = &t.state {
            s.model.prepare();
        }
        t
    }

    fn ready(workload: &Workload, store: TuningStore, backend: &'b dyn TuningBackend) -> Tuned<'b> {
        Tuned {
            workload: workload.clone(),
            backend,
            state: State::Ready(Box::new(store)),
            variants_ok: OnceLock::new(),
            verified: OnceLock::new(),
            printed: Default::default(),
            print_warnings: true,
        }
    }

    fn fallback(workload: &Workload, backend: &'b dyn TuningBackend, reason: String) -> Tuned<'b> {
        let reason = format!(
            "no usable tuning for `{}`, using the default variant: {reason}",
            workload.name()
        );
        eprintln!("warning: {reason}");
        Tuned {
            workload: workload.clone(),
            backend,
            state: State::Fallback(reason),
            variants_ok: OnceLock::new(),
            verified: OnceLock::new(),
            printed: Default::default(),
            print_warnings: true,
        }
    }

    pub fn workload(&self) -> &Workload {
        &self.workload
    }

    /// Checks everything that does not need an input: workload, platform, device, features.
    fn check_static(&self) -> std::result::Result<(), String> {
        let State::Ready(s) = &self.state else {
            return Ok(());
        };
        let pd = self.backend.platform();
        let (platform, device) = super::split_platform(&pd);
        let k = &s.key;
        if k.computation != self.workload.name() {
            return Err(format!(
                "the store was tuned for `{}`, not `{}`",
                k.computation,
                self.workload.name()
            ));
        }
        if k.platform != platform || k.device != device {
            return Err(format!(
                "the store was tuned on `{}:{}`, this is `{platform}:{device}`",
                k.platform, k.device
            ));
        }
        let current = self.workload.features().key();
        if let Some(why) = feature_difference(&k.computation, &k.features, &current) {
            return Err(why);
        }
        let names = self.workload.features().names();
        if s.model.feature_names != names {
            return Err(format!(
                "the store's features {:?} differ from this program's {:?}",
                s.model.feature_names, names
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

    /// Why `input` cannot be selected for by this model, if it cannot: it belongs to another
    /// workload, or its computation has another structure than the one tuned (the program
    /// changed since: retune).
    pub fn mismatch(&self, input: &TuneInput) -> Option<String> {
        let State::Ready(store) = &self.state else {
            return None;
        };
        if input.workload != self.workload.name() {
            return Some(format!(
                "input `{}` is an input of `{}`, this model tunes `{}`",
                input.name,
                input.workload,
                self.workload.name()
            ));
        }
        let plain = input.data::<super::algorithms::AlgorithmInputs>().is_none();
        let ir = input.computation.ir();
        if let Some(known) = self.verified.get().filter(|_| plain)
            && surge_codegen::ir::structure_difference(known, ir).is_none()
        {
            return None;
        }
        if input.structure() != store.key.structure {
            return Some(format!(
                "input `{}`: {}",
                input.name,
                stale(&store.key.computation)
            ));
        }
        if plain {
            let _ = self.verified.set(ir.clone());
        }
        None
    }

    /// Picks the variant for `input`. An input of another structure than the model's gets
    /// the default variant with a warning ([`mismatch`](Self::mismatch) says why first).
    pub fn select(&self, input: &TuneInput) -> Result<Selection> {
        let store = match &self.state {
            State::Fallback(r) => return self.default_selection(input, r),
            State::Ready(s) => s,
        };
        if let Some(why) = self.mismatch(input) {
            let r = format!("using the default variant: {why}");
            if self.print_warnings {
                eprintln!("warning: {r}");
            }
            return self.default_selection(input, &r);
        }
        let variants_problem = self.variants_ok.get_or_init(|| {
            let key = match self.backend.variants(input) {
                Ok(v) => StoreKey::new(
                    self.workload.name(),
                    &input.structure(),
                    &self.backend.platform(),
                    &v,
                    self.workload.features(),
                ),
                Err(e) => return Some(format!("cannot list the backend's variants: {e}")),
            };
            store.check_key(&key).err().map(|r| {
                let r = format!(
                    "no usable tuning for `{}`, using the default variant: {r}",
                    self.workload.name()
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
        let f = self.workload.features().evaluate(input)?;
        let feature_seconds = t.elapsed().as_secs_f64();
        let mut sel = self.select_from_features(&f.values);
        sel.feature_seconds = feature_seconds;
        if self.print_warnings {
            self.print_once(&input.name, &sel.warnings);
        }
        if !sel.from_model {
            sel.variant = self.backend.default_variant(input)?;
        }
        Ok(sel)
    }

    /// Prints each out-of-range warning (`feature = value outside ...`) whose feature has not
    /// had one printed yet.
    fn print_once(&self, input: &str, warnings: &[String]) {
        if warnings.is_empty() {
            return;
        }
        let mut printed = self.printed.lock().unwrap_or_else(|e| e.into_inner());
        for w in warnings {
            let feature = w.split(" = ").next().unwrap_or(w);
            if printed.insert(feature.to_string()) {
                eprintln!(
                    "warning: input `{input}`: {w} (printed once per feature; later inputs' are in \
                     the selection's warnings)"
                );
            }
        }
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
        let c = &input.computation;
        let mut sel = self.select(input)?;
        let (chosen, variant) = super::algorithms::resolve(input, &sel.variant)?;
        match crate::execute_variant(chosen, target, variant) {
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

/// Runs `input`'s computation (of `workload`) on the CPU `target` with the variant the stored
/// tuning model (of `surge tune APP --platform cpu`, or `tune::tune` on the CPU) picks from its
/// features, falling back to the default
/// variant with a warning on stderr when there is no usable store. Loads the store on every
/// call: to run many inputs, hold a [`Tuned`] and call [`Tuned::execute`].
///
/// ```no_run
/// use surge::tune::{self, TuneInput};
/// let input = TuneInput::spmv("lap", surge::apps::matgen::laplacian_2d(100))?;
/// let target = surge::Target::cpu();
/// let spmv = surge::apps::App::Spmv.workload();
/// let (out, sel) = tune::execute_tuned(&spmv, &input, &target)?;
/// println!("{} (from the model: {})", sel.variant, sel.from_model);
/// # Ok::<(), surge::SurgeError>(())
/// ```
pub fn execute_tuned(
    workload: &Workload,
    input: &TuneInput,
    target: &crate::Target,
) -> Result<(crate::Output, Selection)> {
    let backend = super::cpu::CpuBackend::new();
    let tuned = Tuned::load(workload, &backend);
    tuned.execute(input, target)
}
