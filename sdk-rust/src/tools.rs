//! The agent's tool-call log.

use std::io;
use std::sync::Arc;

use crate::agent::Clients;
use crate::pb;

/// The append-only log of the agent's tool calls (blocking).
#[derive(Clone)]
pub struct Tools {
    pub(crate) c: Arc<Clients>,
}

impl Tools {
    tools_ops!(gen_blocking);
}

/// State of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolStatus {
    Pending,
    Success,
    Error,
}

impl ToolStatus {
    fn to_pb(self) -> pb::ToolStatus {
        match self {
            ToolStatus::Pending => pb::ToolStatus::Pending,
            ToolStatus::Success => pb::ToolStatus::Success,
            ToolStatus::Error => pb::ToolStatus::Error,
        }
    }
}

/// One logged call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: i64,
    pub name: String,
    pub parameters: Option<serde_json::Value>,
    pub result: Option<serde_json::Value>,
    pub error: Option<String>,
    pub status: ToolStatus,
    /// Unix seconds.
    pub started_at: i64,
    pub completed_at: Option<i64>,
    pub duration_ms: Option<i64>,
}

impl ToolCall {
    pub(crate) fn from_pb(c: pb::ToolCall) -> io::Result<ToolCall> {
        let status = match pb::ToolStatus::try_from(c.status) {
            Ok(pb::ToolStatus::Success) => ToolStatus::Success,
            Ok(pb::ToolStatus::Error) => ToolStatus::Error,
            _ => ToolStatus::Pending,
        };
        Ok(ToolCall {
            id: c.id,
            parameters: json(&c.name, c.parameters_json)?,
            result: json(&c.name, c.result_json)?,
            name: c.name,
            error: c.error,
            status,
            started_at: c.started_at,
            completed_at: c.completed_at,
            duration_ms: c.duration_ms,
        })
    }
}

fn json(name: &str, s: Option<String>) -> io::Result<Option<serde_json::Value>> {
    s.map(|s| serde_json::from_str(&s))
        .transpose()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("tool call {name}: {e}")))
}

/// A finished call for [`Tools::record`].
#[derive(Debug, Clone, Default)]
pub struct ToolRecord {
    pub name: String,
    /// Unix seconds.
    pub started_at: i64,
    pub completed_at: i64,
    pub parameters: Option<serde_json::Value>,
    pub result: Option<serde_json::Value>,
    /// Set for a failed call.
    pub error: Option<String>,
}

impl ToolRecord {
    pub(crate) fn to_pb(&self) -> pb::ToolRecordRequest {
        pb::ToolRecordRequest {
            name: self.name.clone(),
            started_at: self.started_at,
            completed_at: self.completed_at,
            parameters_json: self.parameters.as_ref().map(|v| v.to_string()),
            result_json: self.result.as_ref().map(|v| v.to_string()),
            error: self.error.clone(),
        }
    }
}

/// Filters of [`Tools::list`]; the default lists every call, newest first.
#[derive(Debug, Clone, Default)]
pub struct ToolQuery {
    pub name: Option<String>,
    pub status: Option<ToolStatus>,
    /// Started at or after (Unix seconds).
    pub since: Option<i64>,
    /// Started before (Unix seconds).
    pub until: Option<i64>,
    pub limit: Option<usize>,
    pub ascending: bool,
}

impl ToolQuery {
    pub(crate) fn to_pb(&self) -> pb::ToolListRequest {
        pb::ToolListRequest {
            name: self.name.clone().unwrap_or_default(),
            status: self.status.map_or(0, |s| s.to_pb() as i32),
            since: self.since.unwrap_or(0),
            until: self.until.unwrap_or(0),
            limit: self.limit.map_or(0, |l| l as i64),
            ascending: self.ascending,
        }
    }
}

/// Statistics of one tool name.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolStats {
    pub name: String,
    pub total_calls: i64,
    pub successful: i64,
    pub failed: i64,
    pub pending: i64,
    pub avg_duration_ms: f64,
}

impl ToolStats {
    pub(crate) fn from_pb(s: pb::ToolStats) -> ToolStats {
        ToolStats {
            name: s.name,
            total_calls: s.total_calls,
            successful: s.successful,
            failed: s.failed,
            pending: s.pending,
            avg_duration_ms: s.avg_duration_ms,
        }
    }
}
