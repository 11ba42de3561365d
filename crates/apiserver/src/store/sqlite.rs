//! SQLite engine for the log: one table of revisions, written by a single thread in
//! WAL mode, one transaction per group of writes. Values are stored LZ4-compressed
//! (`encoding` 1) when that makes them smaller: objects are JSON with long repeated keys
//! (managedFields above all), and every byte saved is a byte less to write, checksum and
//! fsync in the WAL, which is most of a commit's cost.

use std::borrow::Cow;
use std::path::Path;

use anyhow::Context;
use bytes::Bytes;
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
        upgrade_schema(&conn)?;
        Ok(Self { conn })
    }
}

/// The schema this build writes, kept in `PRAGMA user_version`: 0 had no `encoding`
/// column (every value raw), 1 adds it.
const SCHEMA_VERSION: i64 = 1;

/// How a row's `value` is stored.
const RAW: i64 = 0;
/// LZ4 block with the uncompressed length first (4 bytes, little endian).
const LZ4: i64 = 1;

/// No object comes near this; a larger length in a compressed row means the row is damaged,
/// and decoding it must not allocate that much.
const MAX_VALUE_BYTES: usize = 256 << 20;

fn upgrade_schema(conn: &Connection) -> anyhow::Result<()> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version > SCHEMA_VERSION {
        anyhow::bail!(
            "the SQLite log has schema version {version}, newer than this drydock knows ({SCHEMA_VERSION}); \
             use the drydock that wrote it"
        );
    }
    if version < 1 {
        // A new table also lacks the column; either way existing rows stay raw.
        conn.execute_batch(&format!(
            "BEGIN;
             ALTER TABLE log ADD COLUMN encoding INTEGER NOT NULL DEFAULT {RAW};
             PRAGMA user_version = {SCHEMA_VERSION};
             COMMIT;"
        ))
        .context("upgrading the SQLite log to schema version 1")?;
    }
    Ok(())
}

/// The stored form of `value`: compressed when that is smaller.
fn encode(value: &[u8]) -> (i64, Cow<'_, [u8]>) {
    let packed = lz4_flex::block::compress_prepend_size(value);
    if packed.len() < value.len() { (LZ4, Cow::Owned(packed)) } else { (RAW, Cow::Borrowed(value)) }
}

/// The value of a stored row.
fn decode(id: u64, encoding: i64, stored: Vec<u8>) -> anyhow::Result<Bytes> {
    match encoding {
        RAW => Ok(stored.into()),
        LZ4 => {
            let len = stored.get(..4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
            match len {
                Some(len) if len <= MAX_VALUE_BYTES => {
                    let value = lz4_flex::block::decompress_size_prepended(&stored)
                        .with_context(|| format!("decompressing revision {id} of the SQLite log"))?;
                    anyhow::ensure!(
                        value.len() == len,
                        "revision {id} of the SQLite log is damaged: {} bytes decompressed, {len} recorded",
                        value.len()
                    );
                    Ok(value.into())
                }
                _ => anyhow::bail!("revision {id} of the SQLite log is damaged: bad compressed length"),
            }
        }
        other => anyhow::bail!("revision {id} of the SQLite log has an unknown encoding {other}"),
    }
}

impl Backend for SqliteBackend {
    fn load(&mut self, f: &mut dyn FnMut(LogRow) -> anyhow::Result<()>) -> anyhow::Result<LoadInfo> {
        let compacted: i64 = self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'compacted'", [], |r| r.get(0))
            .or_else(|e| if e == rusqlite::Error::QueryReturnedNoRows { Ok(0) } else { Err(e) })?;
        let compacted = compacted as u64;
        let mut stmt =
            self.conn.prepare("SELECT id, name, deleted, prev_revision, value, encoding FROM log ORDER BY id")?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let id = r.get::<_, i64>(0)? as u64;
            f(LogRow {
                id,
                key: r.get(1)?,
                deleted: r.get::<_, i64>(2)? != 0,
                prev: r.get::<_, i64>(3)? as u64,
                value: decode(id, r.get(5)?, r.get(4)?)?,
            })?;
        }
        Ok(LoadInfo { compacted })
    }

    fn append(&mut self, rows: &[LogRow]) -> anyhow::Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut stmt = tx.prepare_cached(
                "INSERT INTO log (id, name, deleted, prev_revision, value, encoding) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            for row in rows {
                let (encoding, value) = encode(&row.value);
                stmt.execute(params![row.id as i64, row.key, row.deleted as i64, row.prev as i64, value, encoding])?;
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

    fn row(id: u64, prev: u64, deleted: bool, value: &[u8]) -> LogRow {
        LogRow { id, key: "root//configmaps/default/a".into(), deleted, prev, value: Bytes::copy_from_slice(value) }
    }

    fn load_all(b: &mut SqliteBackend) -> (Vec<LogRow>, LoadInfo) {
        let mut rows = vec![];
        let info = b
            .load(&mut |r| {
                rows.push(r);
                Ok(())
            })
            .unwrap();
        (rows, info)
    }

    /// An object whose managedFields repeat its keys, as stored objects do.
    fn large_object() -> Vec<u8> {
        let labels: serde_json::Map<String, serde_json::Value> =
            (0..40).map(|i| (format!("example.com/label-{i}"), format!("value-{i}").into())).collect();
        let fields: serde_json::Map<String, serde_json::Value> =
            labels.keys().map(|k| (format!("f:{k}"), serde_json::json!({}))).collect();
        let obj = serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "labels": labels, "managedFields": [
                {"manager": "kubectl", "operation": "Apply", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:labels": fields}}}]}
        });
        serde_json::to_vec(&obj).unwrap()
    }

    #[test]
    fn appends_loads_and_compacts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.db");
        {
            let mut b = SqliteBackend::open(&path, SyncMode::Full).unwrap();
            b.append(&[row(1, 0, false, b"{}"), row(2, 1, false, b"{}")]).unwrap();
            b.append(&[row(3, 2, true, b"{}")]).unwrap();
            b.compact(&[1], 2).unwrap();
        }
        let mut b = SqliteBackend::open(&path, SyncMode::Full).unwrap();
        let (rows, info) = load_all(&mut b);
        assert_eq!(rows.iter().map(|r| (r.id, r.deleted)).collect::<Vec<_>>(), vec![(2, false), (3, true)]);
        assert_eq!(info.compacted, 2);
    }

    #[test]
    fn large_values_are_stored_compressed_and_load_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.db");
        let big = large_object();
        {
            let mut b = SqliteBackend::open(&path, SyncMode::Full).unwrap();
            b.append(&[row(1, 0, false, &big), row(2, 1, false, b"{}")]).unwrap();
        }
        let conn = Connection::open(&path).unwrap();
        let (encoding, stored): (i64, i64) = conn
            .query_row("SELECT encoding, length(value) FROM log WHERE id = 1", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        assert_eq!(encoding, LZ4);
        assert!(stored as usize * 2 < big.len(), "{stored} bytes stored for {}", big.len());
        // Too small to gain anything: kept as it is.
        let tiny: i64 = conn.query_row("SELECT encoding FROM log WHERE id = 2", [], |r| r.get(0)).unwrap();
        assert_eq!(tiny, RAW);
        drop(conn);

        let mut b = SqliteBackend::open(&path, SyncMode::Full).unwrap();
        let (rows, _) = load_all(&mut b);
        assert_eq!(rows[0].value.as_ref(), big.as_slice());
        assert_eq!(rows[1].value.as_ref(), b"{}");
    }

    #[test]
    fn a_log_written_before_compression_loads_and_takes_new_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.db");
        let big = large_object();
        {
            // The schema as version 0 made it, with one raw row.
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(
                "CREATE TABLE log (id INTEGER PRIMARY KEY, name TEXT NOT NULL, deleted INTEGER NOT NULL,
                     prev_revision INTEGER NOT NULL, value BLOB NOT NULL);
                 CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);",
            )
            .unwrap();
            conn.execute(
                "INSERT INTO log (id, name, deleted, prev_revision, value) VALUES (1, 'root//configmaps/default/a', 0, 0, ?1)",
                [&big],
            )
            .unwrap();
        }
        {
            let mut b = SqliteBackend::open(&path, SyncMode::Full).unwrap();
            b.append(&[row(2, 1, false, &big)]).unwrap();
        }
        let mut b = SqliteBackend::open(&path, SyncMode::Full).unwrap();
        let (rows, _) = load_all(&mut b);
        assert_eq!(rows.iter().map(|r| r.id).collect::<Vec<_>>(), vec![1, 2]);
        assert!(rows.iter().all(|r| r.value.as_ref() == big.as_slice()));
        let version: i64 = b.conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
        assert_eq!(version, SCHEMA_VERSION);
    }

    #[test]
    fn damaged_or_unknown_rows_are_errors_not_panics() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.db");
        let mut b = SqliteBackend::open(&path, SyncMode::Full).unwrap();
        b.append(&[row(1, 0, false, &large_object())]).unwrap();

        b.conn.execute("UPDATE log SET value = x'ffffffff00' WHERE id = 1", []).unwrap();
        let err = b.load(&mut |_| Ok(())).unwrap_err().to_string();
        assert!(err.contains("revision 1") && err.contains("damaged"), "{err}");

        b.conn.execute("UPDATE log SET value = x'10000000ffff', encoding = 1 WHERE id = 1", []).unwrap();
        let err = format!("{:#}", b.load(&mut |_| Ok(())).unwrap_err());
        assert!(err.contains("decompressing revision 1"), "{err}");

        // A valid block shorter than its recorded length.
        b.conn.execute("UPDATE log SET value = x'1000000000' WHERE id = 1", []).unwrap();
        let err = format!("{:#}", b.load(&mut |_| Ok(())).unwrap_err());
        assert!(err.contains("revision 1") && err.contains("damaged"), "{err}");

        b.conn.execute("UPDATE log SET encoding = 7 WHERE id = 1", []).unwrap();
        let err = b.load(&mut |_| Ok(())).unwrap_err().to_string();
        assert!(err.contains("unknown encoding 7"), "{err}");
    }

    #[test]
    fn a_log_from_a_newer_drydock_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.db");
        Connection::open(&path).unwrap().execute_batch("PRAGMA user_version = 99;").unwrap();
        let err = SqliteBackend::open(&path, SyncMode::Full).err().unwrap().to_string();
        assert!(err.contains("schema version 99"), "{err}");
    }
}
