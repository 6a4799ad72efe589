//! The on-disk kernel cache shared by the backends (rustc-built CPU libraries, the CUDA
//! emulator's host libraries): its directory ([`dir`]), a checksum beside every cached library,
//! compiler child processes with a time limit ([`child`]), and a size bound ([`trim`]).
//!
//! A library truncated by a full disk loads and then kills the process with `SIGBUS` when a
//! kernel touches a missing page; a foreign file under the cached name fails every later
//! `dlopen`. So each library `libsurge_<key>.so` has a `libsurge_<key>.so.sum` holding its length
//! and a hash of its bytes, written (atomically) after the library is complete and renamed into
//! place. Before loading, [`verify`] checks the library against it; a missing sum, a mismatch or
//! a library that does not load is [`discard`]ed and rebuilt by the caller.

use std::path::{Path, PathBuf};

pub mod child;
pub mod trim;

/// The kernel cache directory of both backends: `$SURGE_CACHE`, else `$XDG_CACHE_HOME/surge`,
/// else `~/.cache/surge`, else the system temp dir.
pub fn dir() -> PathBuf {
    if let Some(d) = std::env::var_os("SURGE_CACHE") {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(d).join("surge");
    }
    if let Some(h) = std::env::var_os("HOME") {
        return PathBuf::from(h).join(".cache").join("surge");
    }
    std::env::temp_dir().join("surge-cache")
}

/// The checksum file of library `so`.
pub fn sum_path(so: &Path) -> PathBuf {
    let mut p = so.as_os_str().to_owned();
    p.push(".sum");
    PathBuf::from(p)
}

/// The checksum of `bytes`: their length and a 64-bit hash over 8-byte words (a multiply and a
/// shift per word: a 4 MiB library in about a millisecond). It detects truncation, corruption and
/// foreign files, not deliberate tampering.
pub fn checksum(bytes: &[u8]) -> String {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = K ^ bytes.len() as u64;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        h = (h ^ w).wrapping_mul(K);
        h ^= h >> 29;
    }
    let mut tail = [0u8; 8];
    tail[..words.remainder().len()].copy_from_slice(words.remainder());
    h = (h ^ u64::from_le_bytes(tail)).wrapping_mul(K);
    h ^= h >> 32;
    format!("{} {h:016x}\n", bytes.len())
}

/// A suffix for temporary files unique to this process and call: two threads building the same
/// library must not write one file.
pub fn temp_suffix() -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let k = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{k}", std::process::id())
}

/// Writes the checksum of `bytes`, the content of library `so`, beside it (a temporary file
/// renamed into place, so a reader sees the whole sum or none).
pub fn write_sum(so: &Path, bytes: &[u8]) -> Result<(), String> {
    let sum = sum_path(so);
    let tmp = sum.with_extension(format!("sum.{}.tmp", temp_suffix()));
    std::fs::write(&tmp, checksum(bytes))
        .and_then(|()| std::fs::rename(&tmp, &sum))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            format!("cannot write {}: {e}", sum.display())
        })
}

/// Checks cached library `so` against its checksum; the error says what is wrong.
pub fn verify(so: &Path) -> Result<(), String> {
    let sum = sum_path(so);
    let want = std::fs::read_to_string(&sum)
        .map_err(|e| format!("its checksum {} cannot be read: {e}", sum.display()))?;
    let bytes = std::fs::read(so).map_err(|e| format!("it cannot be read: {e}"))?;
    let got = checksum(&bytes);
    if got != want {
        return Err(format!(
            "its checksum is `{}`, {} says `{}`",
            got.trim(),
            sum.display(),
            want.trim()
        ));
    }
    Ok(())
}

/// Deletes a damaged cached library and its checksum, saying so on stderr (one line).
pub fn discard(so: &Path, why: &str) {
    eprintln!(
        "surge: the cached kernel library {} is damaged ({why}); deleting and rebuilding it",
        so.display()
    );
    let _ = std::fs::remove_file(so);
    let _ = std::fs::remove_file(sum_path(so));
}
