//! The campaign journal: every training input's record appended, as it is measured, to a file
//! beside the store (`<store>.journal`, JSON lines: a header naming the campaign, then one
//! [`InputRecord`] per line). A campaign that dies midway (killed, out of time) is resumed with
//! `--resume` ([`Journal::open`] with `resume`): the journal's records are kept and only the
//! inputs it lacks are measured. The campaign removes the journal once the store is written.
//!
//! The header holds the store key (workload, structure, platform and device, the variant set's
//! checksum, the feature set) and the training protocol: records measured otherwise are never
//! mixed in, and a journal left by an unfinished campaign is never overwritten unless asked.

use super::record::InputRecord;
use super::store::StoreKey;
use super::training::TrainingConfig;
use super::tune_err;
use crate::Result;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

/// Where and how a campaign journals its training records.
#[derive(Debug, Clone, PartialEq)]
pub struct JournalOptions {
    pub path: PathBuf,
    /// Keep the records of an earlier run of the same campaign (else an existing journal is an
    /// error: it belongs to a campaign that did not finish).
    pub resume: bool,
}

/// The journal beside the store at `store`.
pub fn path_beside(store: &Path) -> PathBuf {
    let mut name = store.file_name().unwrap_or_default().to_os_string();
    name.push(".journal");
    store.with_file_name(name)
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Header {
    journal: String,
    key: StoreKey,
    training: TrainingConfig,
}

const MAGIC: &str = "surge tuning journal 1";

/// An open journal: the records found (when resuming) and the file appended to.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: File,
    found: HashMap<String, InputRecord>,
}

impl Journal {
    /// Opens the journal for the campaign `key` measured with `training`.
    pub fn open(
        opts: &JournalOptions,
        key: &StoreKey,
        training: &TrainingConfig,
    ) -> Result<Journal> {
        let path = &opts.path;
        let header = Header {
            journal: MAGIC.into(),
            key: key.clone(),
            training: training.clone(),
        };
        let found = match (path.exists(), opts.resume) {
            (true, true) => read(path, &header)?,
            (true, false) => {
                return Err(crate::SurgeError::Usage(format!(
                    "{} holds the records of a campaign that did not finish: continue it with \
                     --resume, or delete the file to start again",
                    path.display()
                )));
            }
            (false, _) => HashMap::new(),
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                tune_err(format!(
                    "cannot create the directory {}: {e}",
                    dir.display()
                ))
            })?;
        }
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| tune_err(format!("cannot open the journal {}: {e}", path.display())))?;
        if found.is_empty() {
            file.set_len(0).map_err(|e| io_err(path, e))?;
            write_line(&mut file, path, &header)?;
        }
        Ok(Journal {
            path: path.clone(),
            file,
            found,
        })
    }

    /// The record of input `name` from an earlier run, if the journal has one.
    pub fn take(&mut self, name: &str) -> Option<InputRecord> {
        self.found.remove(name)
    }

    /// Appends `record` (flushed to the disk before the next input is measured).
    pub fn append(&mut self, record: &InputRecord) -> Result<()> {
        write_line(&mut self.file, &self.path, record)?;
        self.file.sync_data().map_err(|e| io_err(&self.path, e))
    }
}

fn io_err(path: &Path, e: std::io::Error) -> crate::SurgeError {
    tune_err(format!("writing the journal {}: {e}", path.display()))
}

fn write_line<T: Serialize>(file: &mut File, path: &Path, value: &T) -> Result<()> {
    let mut line = serde_json::to_string(value)
        .map_err(|e| tune_err(format!("internal: a journal line: {e}")))?;
    line.push('\n');
    file.write_all(line.as_bytes()).map_err(|e| io_err(path, e))
}

/// The records of the journal at `path`, refused when its header is another campaign's. A last
/// line cut short (the process died while writing it) is dropped: that input is measured again.
fn read(path: &Path, want: &Header) -> Result<HashMap<String, InputRecord>> {
    let file =
        File::open(path).map_err(|e| tune_err(format!("cannot read {}: {e}", path.display())))?;
    let lines: Vec<String> = BufReader::new(file)
        .lines()
        .collect::<std::io::Result<_>>()
        .map_err(|e| tune_err(format!("cannot read {}: {e}", path.display())))?;
    let Some(first) = lines.first() else {
        return Ok(HashMap::new());
    };
    let header: Header = serde_json::from_str(first).map_err(|e| {
        crate::SurgeError::Usage(format!(
            "{} line 1 is not a tuning journal's header: {e}",
            path.display()
        ))
    })?;
    if header.key != want.key || header.training != want.training {
        let what = if header.key != want.key {
            "another campaign (workload, program, features, machine or variant set)"
        } else {
            "another training protocol"
        };
        return Err(crate::SurgeError::Usage(format!(
            "{} is the journal of {what}; it cannot be resumed here: delete it to start again",
            path.display()
        )));
    }
    let mut out = HashMap::new();
    for (k, line) in lines.iter().enumerate().skip(1) {
        match serde_json::from_str::<InputRecord>(line) {
            Ok(r) => {
                out.insert(r.name.clone(), r);
            }
            Err(_) if k + 1 == lines.len() => {}
            Err(e) => {
                return Err(tune_err(format!(
                    "{} line {} is not a training record: {e}",
                    path.display(),
                    k + 1
                )));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;
    use crate::tune::simulated::SimulatedBackend;
    use crate::tune::{self, TuneInput, TuneOptions, TuningBackend, Workload};
    use std::collections::BTreeSet;
    use std::sync::Mutex;
    use std::time::Duration;

    /// The simulated backend, noting the inputs it times.
    struct Counting(SimulatedBackend, Mutex<BTreeSet<String>>);

    impl Counting {
        fn measured(&self) -> Vec<String> {
            self.1.lock().expect("lock").iter().cloned().collect()
        }
    }

    impl TuningBackend for Counting {
        fn platform(&self) -> String {
            self.0.platform()
        }
        fn variants(&self, i: &TuneInput) -> Result<Vec<String>> {
            self.0.variants(i)
        }
        fn run_once(&self, i: &TuneInput, v: &str) -> std::result::Result<Duration, String> {
            self.1.lock().expect("lock").insert(i.name.clone());
            self.0.run_once(i, v)
        }
        fn default_variant(&self, i: &TuneInput) -> Result<String> {
            self.0.default_variant(i)
        }
    }

    fn inputs(w: &Workload) -> Result<Vec<TuneInput>> {
        [100usize, 1_000, 5_000, 20_000, 100_000, 400_000]
            .into_iter()
            .map(|n| {
                let x = Seq::input("x", vec![1.0f64; n])?;
                w.input(format!("n={n}"), Computation::new(&reduce(add, &x)?)?)
            })
            .collect()
    }

    fn options(path: &Path, resume: bool) -> TuneOptions {
        TuneOptions {
            journal: Some(JournalOptions {
                path: path.to_path_buf(),
                resume,
            }),
            ..TuneOptions::default()
        }
    }

    fn backend() -> Counting {
        Counting(SimulatedBackend::sized("sum"), Mutex::default())
    }

    #[test]
    fn a_resumed_campaign_measures_only_what_its_journal_lacks() -> Result<()> {
        let dir = tempfile_dir("resume");
        let path = dir.join("sum.json.journal");
        let w = Workload::new("sum");
        let all = inputs(&w)?;
        // A first campaign that got through three inputs (then died: its journal stays).
        let b = backend();
        let first = tune::tune(&b, &w, &all[..3], &options(&path, false), &mut |_| {})?;
        assert_eq!(b.measured().len(), 3);
        let text = std::fs::read_to_string(&path).expect("journal written");
        assert_eq!(text.lines().count(), 4, "header and three records");
        // Without --resume the journal is not overwritten.
        let e = tune::tune(&b, &w, &all, &options(&path, false), &mut |_| {}).unwrap_err();
        assert!(
            e.to_string()
                .contains("did not finish: continue it with --resume"),
            "{e}"
        );
        // Resumed: three inputs measured, three taken from the journal as they were.
        let b = backend();
        let store = tune::tune(&b, &w, &all, &options(&path, true), &mut |_| {})?;
        assert_eq!(b.measured(), ["n=100000", "n=20000", "n=400000"]);
        assert_eq!(&store.inputs[..3], &first.inputs[..]);
        assert_eq!(store.inputs.len(), 6);
        // A record cut short by a crash is measured again.
        let text = std::fs::read_to_string(&path).expect("journal");
        let cut = &text[..text.len() - 10];
        std::fs::write(&path, cut).expect("cut");
        let b = backend();
        tune::tune(&b, &w, &all, &options(&path, true), &mut |_| {})?;
        assert_eq!(b.measured(), ["n=400000"], "the last record, cut short");
        Ok(())
    }

    #[test]
    fn another_campaigns_journal_is_refused() -> Result<()> {
        let dir = tempfile_dir("other");
        let path = dir.join("j");
        let w = Workload::new("sum");
        let all = inputs(&w)?;
        tune::tune(
            &backend(),
            &w,
            &all[..2],
            &options(&path, false),
            &mut |_| {},
        )?;
        let mut other = options(&path, true);
        other.training.repetitions += 1;
        let e = tune::tune(&backend(), &w, &all, &other, &mut |_| {}).unwrap_err();
        assert!(
            e.to_string()
                .contains("is the journal of another training protocol"),
            "{e}"
        );
        // Records whose features were computed otherwise are another campaign's.
        let w2 = w.clone().with_feature("n", true, |i| Ok(i.work));
        let all2 = inputs(&w2)?;
        let e = tune::tune(&backend(), &w2, &all2, &options(&path, true), &mut |_| {})
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("is the journal of another campaign (workload, program, features,"),
            "{e}"
        );
        std::fs::write(&path, "not json\n").expect("write");
        let e = tune::tune(&backend(), &w, &all, &options(&path, true), &mut |_| {}).unwrap_err();
        assert!(
            e.to_string()
                .contains("line 1 is not a tuning journal's header"),
            "{e}"
        );
        Ok(())
    }

    fn tempfile_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("surge-journal-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("temp dir");
        d
    }
}
