//! A child process with a time limit: a compiler (`rustc`, or the C++ compiler of the CUDA
//! emulator) on generated kernels is stopped when it runs past `SURGE_RUSTC_TIMEOUT` seconds
//! (default 300), so a pathological compile is an error that
//! names the source instead of a hang. (Seen: LLVM fully unrolling a 39-step select chain whose
//! trip count a literal made known took minutes; sizes are now kernel arguments, but the limit
//! stays as the defence.)

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The time limit of one compiler call (`rustc`, or the emulator's C++ compiler).
pub fn compile_limit() -> Duration {
    let secs = std::env::var("SURGE_RUSTC_TIMEOUT")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(300);
    Duration::from_secs(secs)
}

/// Runs `cmd` to completion, or kills it after `limit` (`Ok(None)`). Its output is drained by two
/// threads, so a child that writes a lot cannot block on a full pipe.
pub fn output_within(cmd: &mut Command, limit: Duration) -> std::io::Result<Option<Output>> {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (stdout, stderr) = (
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
    );
    Ok(status.map(|status| Output {
        status,
        stdout,
        stderr,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_past_its_limit_is_stopped() {
        let t = Instant::now();
        let r = output_within(Command::new("sleep").arg("5"), Duration::from_millis(200))
            .expect("sleep runs");
        assert!(r.is_none(), "the child should have been stopped");
        assert!(t.elapsed() < Duration::from_secs(3));
    }

    #[test]
    fn a_child_within_its_limit_gives_its_output() {
        let r = output_within(
            Command::new("sh").args(["-c", "echo out; echo err >&2"]),
            Duration::from_secs(10),
        )
        .expect("sh runs")
        .expect("finished in time");
        assert!(r.status.success());
        assert_eq!(String::from_utf8_lossy(&r.stdout), "out\n");
        assert_eq!(String::from_utf8_lossy(&r.stderr), "err\n");
    }
}
