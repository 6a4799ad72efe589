//! Keeping the kernel cache bounded. Every program structure compiles to its own library (a
//! few MB each), and nothing ever removed one: after a few weeks of development the cache here
//! held 9,417 files, 14 GB. After each compile the backend trims its cache directory to
//! [`max_bytes`] (`SURGE_CACHE_MAX_MB`, default 4096), deleting the least recently used
//! libraries with their sources and checksums; a cache hit marks its library used ([`touch`]).
//! Debris of interrupted builds (temporary files, `.build-*` directories) older than an hour
//! goes too. A library deleted while another process has it loaded stays mapped there (Linux
//! keeps an unlinked file until it is unmapped); one deleted between another process's check
//! and its load is rebuilt there.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The default bound of a cache directory, in MiB.
pub const DEFAULT_MAX_MB: u64 = 4096;

/// Debris older than this is removed.
const DEBRIS_AGE: Duration = Duration::from_secs(3600);

/// The cache bound: `SURGE_CACHE_MAX_MB` MiB (a positive whole number), else
/// [`DEFAULT_MAX_MB`].
pub fn max_bytes() -> u64 {
    std::env::var("SURGE_CACHE_MAX_MB")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&mb| mb > 0)
        .unwrap_or(DEFAULT_MAX_MB)
        << 20
}

/// Marks cached library `so` as just used (its modification time), for the LRU order.
pub fn touch(so: &Path) {
    if let Ok(f) = std::fs::File::open(so) {
        let _ = f.set_modified(SystemTime::now());
    }
}

/// A file of the cache directory.
struct Entry {
    path: PathBuf,
    name: String,
    bytes: u64,
    modified: SystemTime,
    dir: bool,
}

fn entries(dir: &Path) -> Vec<Entry> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    rd.filter_map(|e| {
        let e = e.ok()?;
        let m = e.metadata().ok()?;
        Some(Entry {
            path: e.path(),
            name: e.file_name().to_string_lossy().into_owned(),
            bytes: if m.is_file() { m.len() } else { 0 },
            modified: m.modified().ok()?,
            dir: m.is_dir(),
        })
    })
    .collect()
}

/// A temporary file or build directory left by an interrupted build.
fn is_debris(e: &Entry) -> bool {
    if e.dir {
        return e.name.starts_with(".build-");
    }
    e.name.contains(".tmp") || e.name.contains(".rs.")
}

/// The key of library file `libsurge_<key>.so` (also `libsurge_emu_<key>.so`).
fn library_key(name: &str) -> Option<&str> {
    let stem = name.strip_prefix("libsurge_")?.strip_suffix(".so")?;
    Some(stem.strip_prefix("emu_").unwrap_or(stem))
}

/// Trims `dir` to at most `max` bytes of files: debris older than an hour first, then the least
/// recently used libraries (and every file named by their key), never `keep`. Returns the bytes
/// removed. Errors are ignored: a file that cannot be removed stays.
pub fn trim(dir: &Path, max: u64, keep: Option<&Path>) -> u64 {
    let now = SystemTime::now();
    let mut removed = 0;
    let mut all = entries(dir);
    all.retain(|e| {
        let old = now.duration_since(e.modified).unwrap_or_default() > DEBRIS_AGE;
        if !(old && is_debris(e)) {
            return true;
        }
        let gone = if e.dir {
            std::fs::remove_dir_all(&e.path).is_ok()
        } else {
            std::fs::remove_file(&e.path).is_ok()
        };
        removed += if gone { e.bytes } else { 0 };
        !gone
    });
    let mut total: u64 = all.iter().map(|e| e.bytes).sum();
    if total <= max {
        return removed;
    }
    let mut libs: Vec<&Entry> = all
        .iter()
        .filter(|e| library_key(&e.name).is_some() && Some(e.path.as_path()) != keep)
        .collect();
    libs.sort_by_key(|e| e.modified);
    for lib in libs {
        if total <= max {
            break;
        }
        let key = library_key(&lib.name).expect("filtered");
        for e in all.iter().filter(|e| !e.dir && e.name.contains(key)) {
            if std::fs::remove_file(&e.path).is_ok() {
                total = total.saturating_sub(e.bytes);
                removed += e.bytes;
            }
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(dir: &Path, name: &str, bytes: usize, age_s: u64) {
        let p = dir.join(name);
        std::fs::write(&p, vec![0u8; bytes]).unwrap();
        let f = std::fs::File::options().write(true).open(&p).unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(age_s))
            .unwrap();
    }

    #[test]
    fn the_least_recently_used_libraries_go_first_with_their_files() {
        let dir = std::env::temp_dir().join(format!("surge-trim-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (key, age) in [("aaa", 300), ("bbb", 200), ("ccc", 100)] {
            file(&dir, &format!("libsurge_{key}.so"), 1000, age);
            file(&dir, &format!("libsurge_{key}.so.sum"), 10, age);
            file(&dir, &format!("surge_{key}.rs"), 90, age);
        }
        // Debris: an old temporary source and build directory go, a fresh one stays.
        file(&dir, "surge_ddd.rs.123-4", 50, 7200);
        file(&dir, "surge_eee.rs.123-5", 50, 10);
        std::fs::create_dir_all(dir.join(".build-fff-1-2")).unwrap();
        let old = std::fs::File::open(dir.join(".build-fff-1-2")).unwrap();
        old.set_modified(SystemTime::now() - Duration::from_secs(7200))
            .unwrap();
        // 3 × 1100 + 50 + 50 bytes; a bound of 2300 keeps two libraries.
        let removed = trim(&dir, 2300, None);
        let left: Vec<String> = {
            let mut v: Vec<String> = entries(&dir).into_iter().map(|e| e.name).collect();
            v.sort();
            v
        };
        assert_eq!(removed, 1100 + 50);
        assert_eq!(
            left,
            [
                "libsurge_bbb.so",
                "libsurge_bbb.so.sum",
                "libsurge_ccc.so",
                "libsurge_ccc.so.sum",
                "surge_bbb.rs",
                "surge_ccc.rs",
                "surge_eee.rs.123-5"
            ]
        );
        // The library being kept survives even when it is the oldest left.
        trim(&dir, 1200, Some(&dir.join("libsurge_ccc.so")));
        assert!(dir.join("libsurge_ccc.so").exists());
        assert!(!dir.join("libsurge_bbb.so").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn library_keys_name_cpu_and_emulator_libraries() {
        assert_eq!(DEFAULT_MAX_MB << 20, 4 << 30);
        assert_eq!(library_key("libsurge_emu_0f.so"), Some("0f"));
        assert_eq!(library_key("libsurge_0f.so.sum"), None);
    }
}
