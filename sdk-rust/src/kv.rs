//! The agent's key-value store: JSON values under string keys.

use std::io;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::agent::Clients;
use crate::pb;

/// The key-value store (blocking). Values are any `serde` type, stored as
/// JSON text (so other SDKs read them as the same JSON).
#[derive(Clone)]
pub struct Kv {
    pub(crate) c: Arc<Clients>,
}

impl Kv {
    kv_ops!(gen_blocking);

    /// Stores `value` (as JSON) under `key`, replacing the old value.
    pub fn set<T: Serialize + ?Sized>(&self, key: impl AsRef<str>, value: &T) -> io::Result<()> {
        self.c.kv.kv_set(&set_request(key.as_ref(), value)?).map(|_| ())
    }

    /// The value under `key`, decoded as `T` (`serde_json::Value` for any
    /// JSON); `None` when the key does not exist.
    pub fn get<T: DeserializeOwned>(&self, key: impl AsRef<str>) -> io::Result<Option<T>> {
        let key = key.as_ref();
        decode_get(key, self.c.kv.kv_get(&pb::KvGetRequest { key: key.into() })?)
    }
}

/// One entry of [`Kv::list`].
#[derive(Debug, Clone, PartialEq)]
pub struct KvEntry {
    pub key: String,
    pub value: serde_json::Value,
    /// Unix seconds.
    pub created_at: i64,
    pub updated_at: i64,
}

impl KvEntry {
    pub(crate) fn from_pb(e: pb::KvEntry) -> io::Result<KvEntry> {
        let value = parse(&e.key, &e.value_json)?;
        Ok(KvEntry { key: e.key, value, created_at: e.created_at, updated_at: e.updated_at })
    }
}

pub(crate) fn set_request<T: Serialize + ?Sized>(key: &str, value: &T) -> io::Result<pb::KvSetRequest> {
    let value_json = serde_json::to_string(value)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("kv {key}: {e}")))?;
    Ok(pb::KvSetRequest { key: key.into(), value_json })
}

pub(crate) fn decode_get<T: DeserializeOwned>(key: &str, r: pb::KvGetResponse) -> io::Result<Option<T>> {
    if !r.found {
        return Ok(None);
    }
    serde_json::from_str(&r.value_json)
        .map(Some)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("kv {key}: {e}")))
}

fn parse(key: &str, json: &str) -> io::Result<serde_json::Value> {
    serde_json::from_str(json).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("kv {key}: {e}")))
}
