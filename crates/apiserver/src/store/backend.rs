//! The durable log behind the in-memory store. Every write is one row; the row id is the
//! revision (the resourceVersion clients see), as in kine. Engines implement [`Backend`].

use bytes::Bytes;

/// One entry of the log.
#[derive(Clone, Debug)]
pub struct LogRow {
    /// The revision of this write.
    pub id: u64,
    /// `<logical cluster>/<group>/<resource>/<namespace>/<name>` (empty group and namespace allowed).
    pub key: String,
    pub deleted: bool,
    /// Revision of the row this one supersedes (0 for the first write of a key).
    pub prev: u64,
    /// The object as stored; for a deletion, the last state with the deletion's revision.
    pub value: Bytes,
}

/// What loading the log found.
#[derive(Clone, Copy, Debug, Default)]
pub struct LoadInfo {
    /// Revisions up to here may have lost superseded rows: watches from older revisions get 410.
    pub compacted: u64,
}

/// A durable, append-only log of revisions.
pub trait Backend: Send + 'static {
    /// Streams every retained row in revision order.
    fn load(&mut self, f: &mut dyn FnMut(LogRow) -> anyhow::Result<()>) -> anyhow::Result<LoadInfo>;
    /// Appends rows durably, as one transaction. Returns only once they survive a crash.
    fn append(&mut self, rows: &[LogRow]) -> anyhow::Result<()>;
    /// Deletes superseded rows and tombstones (`ids`) and records that revisions up to
    /// `compacted` are no longer complete.
    fn compact(&mut self, ids: &[u64], compacted: u64) -> anyhow::Result<()>;
    /// Whether an append waits for the disk, so that fewer, larger appends are cheaper.
    fn syncs(&self) -> bool {
        true
    }
}

/// A backend that keeps nothing: for tests and throwaway servers.
#[derive(Default)]
pub struct MemoryBackend;

impl Backend for MemoryBackend {
    fn load(&mut self, _f: &mut dyn FnMut(LogRow) -> anyhow::Result<()>) -> anyhow::Result<LoadInfo> {
        Ok(LoadInfo::default())
    }
    fn append(&mut self, _rows: &[LogRow]) -> anyhow::Result<()> {
        Ok(())
    }
    fn compact(&mut self, _ids: &[u64], _compacted: u64) -> anyhow::Result<()> {
        Ok(())
    }
    fn syncs(&self) -> bool {
        false
    }
}
