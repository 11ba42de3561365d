//! Ownership of a data dir: an exclusive lock on `<dir>/drydock.lock`, taken before the
//! store is opened and held while the server lives. It is an OS file lock (`flock`), so
//! the OS releases it when the process ends, crash or not: a stale file never blocks a
//! restart. The file names the holder's PID and, once it listens, its address, so a
//! second server on the same dir can say who owns it.

use std::fmt;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Seek, SeekFrom, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// The lock file's name inside the data dir.
pub const LOCK_FILE: &str = "drydock.lock";

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("data dir {} is in use by another drydock ({holder})", dir.display())]
    Held { dir: PathBuf, holder: Holder },
    #[error("{action} lock file {}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Who holds a data dir, as its lock file says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Holder {
    pub pid: Option<u32>,
    pub address: Option<String>,
}

impl Holder {
    fn parse(text: &str) -> Self {
        let mut h = Self::default();
        for line in text.lines() {
            match line.split_once('=') {
                Some(("pid", v)) => h.pid = v.trim().parse().ok(),
                Some(("address", v)) => h.address = Some(v.trim().to_string()),
                _ => {}
            }
        }
        h
    }

    fn render(&self) -> String {
        let mut s = String::new();
        if let Some(pid) = self.pid {
            s.push_str(&format!("pid={pid}\n"));
        }
        if let Some(a) = &self.address {
            s.push_str(&format!("address={a}\n"));
        }
        s
    }
}

impl fmt::Display for Holder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.pid, &self.address) {
            (Some(pid), Some(a)) => write!(f, "pid {pid}, listening on {a}"),
            (Some(pid), None) => write!(f, "pid {pid}, not listening yet"),
            (None, _) => write!(f, "holder unknown"),
        }
    }
}

/// The held lock; dropping it (or the process ending) releases the dir.
#[derive(Debug)]
pub struct DataDirLock {
    file: File,
    path: PathBuf,
}

impl DataDirLock {
    /// Takes the lock on `dir` (which must exist) without waiting, and records this process's PID.
    pub fn acquire(dir: &Path) -> Result<Self, LockError> {
        let path = dir.join(LOCK_FILE);
        let io = |action: &'static str, source| LockError::Io { action, path: path.clone(), source };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| io("opening", e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let holder = std::fs::read_to_string(&path).map(|t| Holder::parse(&t)).unwrap_or_default();
                return Err(LockError::Held { dir: dir.to_path_buf(), holder });
            }
            Err(TryLockError::Error(e)) => return Err(io("locking", e)),
        }
        let lock = Self { file, path };
        lock.record(&Holder { pid: Some(std::process::id()), address: None })?;
        Ok(lock)
    }

    /// Records the address this process listens on.
    pub fn record_address(&self, addr: SocketAddr) -> Result<(), LockError> {
        self.record(&Holder { pid: Some(std::process::id()), address: Some(addr.to_string()) })
    }

    /// Rewrites the file in place. Each record is at least as long as the one before, so
    /// writing first and trimming after never shows a reader an empty file.
    fn record(&self, holder: &Holder) -> Result<(), LockError> {
        let text = holder.render();
        let err = |source| LockError::Io { action: "writing", path: self.path.clone(), source };
        let mut f = &self.file;
        f.seek(SeekFrom::Start(0)).map_err(err)?;
        f.write_all(text.as_bytes()).map_err(err)?;
        f.set_len(text.len() as u64).map_err(err)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_the_dir_names_the_holder_until_the_first_is_released() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = DataDirLock::acquire(dir.path()).expect("first lock");
        let pid = std::process::id();
        match DataDirLock::acquire(dir.path()) {
            Err(LockError::Held { holder, .. }) => assert_eq!(holder, Holder { pid: Some(pid), address: None }),
            other => panic!("expected Held, got {other:?}"),
        }
        first.record_address("127.0.0.1:6443".parse().expect("addr")).expect("record");
        let err = DataDirLock::acquire(dir.path()).expect_err("still held");
        assert_eq!(
            err.to_string(),
            format!(
                "data dir {} is in use by another drydock (pid {pid}, listening on 127.0.0.1:6443)",
                dir.path().display()
            )
        );
        drop(first);
        DataDirLock::acquire(dir.path()).expect("free again once released");
    }

    #[test]
    fn holder_parses_what_it_renders() {
        let h = Holder { pid: Some(42), address: Some("[::1]:6443".into()) };
        assert_eq!(Holder::parse(&h.render()), h);
        assert_eq!(Holder::parse("garbage"), Holder::default());
        assert_eq!(Holder::default().to_string(), "holder unknown");
    }
}
