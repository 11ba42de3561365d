//! SQLite engine for the log: one table of revisions, written by a single thread in
//! WAL mode, one transaction per group of writes.

use std::path::Path;

use anyhow::Context;
use rusqlite::{Connection, params};

use super::backend::{Backend, LoadInfo, LogRow};

/// How hard a commit waits for the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SyncMode {
    /// fsync on every commit: survives power loss.
    #[default]
    Full,
    /// WAL written before commit returns, fsync at checkpoints: survives a process crash.
    Normal,
}

pub struct SqliteBackend {
    conn: Connection,
}

impl SqliteBackend {
    pub fn open(path: &Path, sync: SyncMode) -> anyhow::Result<Self> {
        let conn = Connection::open(path).with_context(|| format!("opening {}", path.display()))?;
        let sync = match sync {
            SyncMode::Full => "FULL",
            SyncMode::Normal => "NORMAL",
        };
        // 8 KiB pages (for a new log; SQLite keeps an existing one's): an object with its
        // managedFields is often over 4 KiB, and a row larger than its page spills into
        // overflow pages, each one more page to write and checksum in the WAL.
        conn.execute_batch(&format!(
            "PRAGMA page_size=8192;
             PRAGMA journal_mode=WAL;
             PRAGMA synchronous={sync};
             PRAGMA wal_autocheckpoint=4000;
             CREATE TABLE IF NOT EXISTS log (
                 id INTEGER PRIMARY KEY,
                 name TEXT NOT NULL,
                 deleted INTEGER NOT NULL,
                 prev_revision INTEGER NOT NULL,
                 value BLOB NOT NULL
             );
             CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
        ))
        .context("initialising the SQLite log")?;
        Ok(Self { conn })
    }
}

impl Backend for SqliteBackend {
    fn load(&mut self, f: &mut dyn FnMut(LogRow) -> anyhow::Result<()>) -> anyhow::Result<LoadInfo> {
        let compacted: i64 = self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'compacted'", [], |r| r.get(0))
            .or_else(|e| if e == rusqlite::Error::QueryReturnedNoRows { Ok(0) } else { Err(e) })?;
        let compacted = compacted as u64;
        let mut stmt = self.conn.prepare("SELECT id, name, deleted, prev_revision, value FROM log ORDER BY id")?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let value: Vec<u8> = r.get(4)?;
            f(LogRow {
                id: r.get::<_, i64>(0)? as u64,
                key: r.get(1)?,
                deleted: r.get::<_, i64>(2)? != 0,
                prev: r.get::<_, i64>(3)? as u64,
                value: value.into(),
            })?;
        }
        Ok(LoadInfo { compacted })
    }

    fn append(&mut self, rows: &[LogRow]) -> anyhow::Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut stmt = tx.prepare_cached(
                "INSERT INTO log (id, name, deleted, prev_revision, value) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?;
            for row in rows {
                stmt.execute(params![row.id as i64, row.key, row.deleted as i64, row.prev as i64, row.value.as_ref()])?;
            }
        }
        tx.commit().context("committing to the SQLite log")?;
        Ok(())
    }

    fn compact(&mut self, ids: &[u64], compacted: u64) -> anyhow::Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut stmt = tx.prepare_cached("DELETE FROM log WHERE id = ?1")?;
            for id in ids {
                stmt.execute([*id as i64])?;
            }
            tx.execute(
                "INSERT INTO meta (key, value) VALUES ('compacted', ?1)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [compacted as i64],
            )?;
        }
        tx.commit().context("compacting the SQLite log")?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_loads_and_compacts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.db");
        let row = |id, prev, deleted| LogRow {
            id,
            key: "root//configmaps/default/a".into(),
            deleted,
            prev,
            value: bytes::Bytes::from_static(b"{}"),
        };
        {
            let mut b = SqliteBackend::open(&path, SyncMode::Full).unwrap();
            b.append(&[row(1, 0, false), row(2, 1, false)]).unwrap();
            b.append(&[row(3, 2, true)]).unwrap();
            b.compact(&[1], 2).unwrap();
        }
        let mut b = SqliteBackend::open(&path, SyncMode::Full).unwrap();
        let mut ids = vec![];
        let info = b
            .load(&mut |r| {
                ids.push((r.id, r.deleted));
                Ok(())
            })
            .unwrap();
        assert_eq!(ids, vec![(2, false), (3, true)]);
        assert_eq!(info.compacted, 2);
    }
}
