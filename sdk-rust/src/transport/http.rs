//! The HTTP transport: Connect's unary protocol against `agentfs serve
//! http` (spec/PROTOCOL.md): `POST {base}{procedure}` with the serialized
//! request as `application/proto`, a bearer token when given, and the
//! agent's id in `Agentfs-Agent`. Failures come back as a JSON body whose
//! `agentfs.v1.Error` detail carries the errno and path. A server stream
//! (`ProcessService/StreamProcess`) uses Connect's streaming protocol on
//! a connection of its own, read an envelope at a time as the caller asks.

use std::io::{self, Read};
use std::sync::{Arc, Mutex, Weak};

use prost::Message;

use super::{Feed, Pull, Transport};
use crate::error;
use crate::pb;

/// Where and as whom to call.
#[derive(Debug, Clone, Default)]
pub struct HttpConfig {
    /// Server base URL, e.g. `http://127.0.0.1:7777`.
    pub url: String,
    /// Bearer token (required by servers not bound to loopback).
    pub token: Option<String>,
    /// Agent id sent as `Agentfs-Agent`.
    pub agent: String,
}

/// A Connect client of one agent on an `agentfs serve http` server.
pub struct Http {
    agent: ureq::Agent,
    base: String,
    auth: Option<String>,
    agent_id: String,
    /// The streams in flight: close ends them (the server then kills
    /// their processes), as the stdio transport's close does.
    streams: Mutex<Vec<Weak<Feed>>>,
}

impl Http {
    /// A client; no request is made until the first call.
    pub fn new(cfg: HttpConfig) -> Http {
        let agent = ureq::Agent::config_builder().http_status_as_error(false).build().new_agent();
        Http {
            agent,
            base: cfg.url.trim_end_matches('/').to_string(),
            auth: cfg.token.filter(|t| !t.is_empty()).map(|t| format!("Bearer {t}")),
            agent_id: cfg.agent,
            streams: Mutex::new(Vec::new()),
        }
    }

    fn post(&self, url: &str, content_type: &str, procedure: &str) -> ureq::RequestBuilder<ureq::typestate::WithBody> {
        let mut req = self.agent.post(url).header("Content-Type", content_type).header("Connect-Protocol-Version", "1");
        if let Some(a) = &self.auth {
            req = req.header("Authorization", a);
        }
        // Every service but the agent directory's own calls is for one
        // agent (spec/PROTOCOL.md).
        let per_agent =
            !matches!(procedure, "/agentfs.v1.AgentService/ListAgents" | "/agentfs.v1.AgentService/CreateAgent");
        if per_agent && !self.agent_id.is_empty() {
            req = req.header("Agentfs-Agent", &self.agent_id);
        }
        req
    }
}

/// The body of a Connect server stream, read one envelope (a flags byte,
/// a 4-byte big-endian length, the message) per `next`.
struct Envelopes {
    body: ureq::BodyReader<'static>,
    procedure: &'static str,
    url: String,
}

impl Pull for Envelopes {
    fn next(&mut self) -> io::Result<Option<Vec<u8>>> {
        let broken = |e: io::Error| {
            let msg = if e.kind() == io::ErrorKind::UnexpectedEof {
                "the stream ended without its end message".to_string()
            } else {
                e.to_string()
            };
            error::other(pb::ErrorKind::Unavailable, format!("POST {}: {msg}", self.url))
        };
        let mut head = [0u8; 5];
        self.body.read_exact(&mut head).map_err(broken)?;
        let n = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
        if n > 1 << 30 {
            return Err(error::other(pb::ErrorKind::Internal, format!("{}: an envelope of {n} bytes", self.procedure)));
        }
        let mut msg = vec![0u8; n];
        self.body.read_exact(&mut msg).map_err(broken)?;
        if head[0] & 0x02 != 0 {
            // The end: `{}` or `{"error": {...}}` as a unary error's body.
            // Reading the body's end too lets ureq keep the connection for
            // the next call (nothing follows the end envelope).
            let _ = io::copy(&mut self.body, &mut io::sink());
            let v: serde_json::Value = serde_json::from_slice(&msg).unwrap_or(serde_json::Value::Null);
            return match v.get("error") {
                Some(e) if !e.is_null() => Err(connect_error(self.procedure, 200, e.to_string().as_bytes())),
                _ => Ok(None),
            };
        }
        if head[0] & 0x01 != 0 {
            // Compression is never asked for (no Connect-Accept-Encoding).
            return Err(error::other(
                pb::ErrorKind::Internal,
                format!("{}: a compressed stream message that was not asked for", self.procedure),
            ));
        }
        Ok(Some(msg))
    }
}

impl Transport for Http {
    fn call(&self, procedure: &'static str, payload: Vec<u8>) -> io::Result<Vec<u8>> {
        let url = format!("{}{procedure}", self.base);
        let req = self.post(&url, "application/proto", procedure);
        let mut resp = req.send(&payload[..]).map_err(|e| unavailable(&url, e))?;
        let status = resp.status().as_u16();
        let body = resp.body_mut().with_config().limit(u64::MAX).read_to_vec().map_err(|e| unavailable(&url, e))?;
        if status == 200 {
            return Ok(body);
        }
        Err(connect_error(procedure, status, &body))
    }

    fn ping(&self) -> io::Result<()> {
        let url = format!("{}/healthz", self.base);
        let mut resp = self.agent.get(&url).call().map_err(|e| unavailable(&url, e))?;
        let status = resp.status().as_u16();
        let body = resp.body_mut().read_to_vec().map_err(|e| unavailable(&url, e))?;
        if status != 200 {
            return Err(connect_error("/healthz", status, &body));
        }
        Ok(())
    }

    fn stream(&self, procedure: &'static str, payload: Vec<u8>) -> Option<io::Result<Arc<Feed>>> {
        Some((|| {
            let url = format!("{}{procedure}", self.base);
            let mut body = Vec::with_capacity(5 + payload.len());
            body.push(0);
            body.extend_from_slice(&(payload.len() as u32).to_be_bytes());
            body.extend_from_slice(&payload);
            let mut resp = self
                .post(&url, "application/connect+proto", procedure)
                .send(&body[..])
                .map_err(|e| unavailable(&url, e))?;
            let status = resp.status().as_u16();
            if status != 200 {
                let b = resp.body_mut().read_to_vec().map_err(|e| unavailable(&url, e))?;
                return Err(connect_error(procedure, status, &b));
            }
            // No limit: a stream is as long as its process's output, and
            // it is read a message at a time.
            let reader = resp.into_body().into_with_config().limit(u64::MAX).reader();
            let feed = Feed::pulling(Box::new(Envelopes { body: reader, procedure, url }));
            let mut streams = self.streams.lock().unwrap_or_else(|p| p.into_inner());
            streams.retain(|w| w.strong_count() > 0);
            streams.push(Arc::downgrade(&feed));
            Ok(feed)
        })())
    }

    fn stream_blocks(&self) -> bool {
        true
    }

    fn close(&self) -> io::Result<()> {
        let streams = std::mem::take(&mut *self.streams.lock().unwrap_or_else(|p| p.into_inner()));
        // A stream whose read is in flight (an async read that was
        // dropped) ends with its process: the agent's close does not wait.
        for f in streams.iter().filter_map(Weak::upgrade) {
            f.close();
        }
        Ok(())
    }
}

fn unavailable(url: &str, e: ureq::Error) -> io::Error {
    let e = e.into_io();
    io::Error::new(e.kind(), format!("POST {url}: {e}"))
}

/// Turns a Connect error response into an io::Error: the agentfs.v1.Error
/// detail when present (errno, path), else the Connect code.
fn connect_error(procedure: &str, status: u16, body: &[u8]) -> io::Error {
    let v: serde_json::Value = serde_json::from_slice(body).unwrap_or(serde_json::Value::Null);
    if let Some(details) = v.get("details").and_then(|d| d.as_array()) {
        for d in details {
            let ty = d.get("type").and_then(|t| t.as_str()).unwrap_or("");
            if ty != "agentfs.v1.Error" {
                continue;
            }
            let raw = d.get("value").and_then(|t| t.as_str()).and_then(base64_decode);
            if let Some(e) = raw.and_then(|b| pb::Error::decode(&b[..]).ok()) {
                return error::from_pb(e);
            }
        }
    }
    let code = v.get("code").and_then(|c| c.as_str()).unwrap_or("");
    let msg = v.get("message").and_then(|c| c.as_str()).unwrap_or("");
    let kind = match code {
        "invalid_argument" | "out_of_range" => pb::ErrorKind::InvalidArgument,
        "not_found" => pb::ErrorKind::NotFound,
        "already_exists" => pb::ErrorKind::AlreadyExists,
        "permission_denied" | "unauthenticated" => pb::ErrorKind::PermissionDenied,
        "failed_precondition" => pb::ErrorKind::FailedPrecondition,
        "canceled" => pb::ErrorKind::Canceled,
        "unimplemented" => pb::ErrorKind::Unimplemented,
        "resource_exhausted" => pb::ErrorKind::ResourceExhausted,
        "unavailable" => pb::ErrorKind::Unavailable,
        _ => match status {
            401 | 403 => pb::ErrorKind::PermissionDenied,
            404 => pb::ErrorKind::Unimplemented,
            413 => pb::ErrorKind::ResourceExhausted,
            _ => pb::ErrorKind::Internal,
        },
    };
    let text = if code.is_empty() {
        format!("{procedure}: HTTP {status}: {}", String::from_utf8_lossy(body).trim())
    } else {
        format!("{procedure}: {code}: {msg}")
    };
    error::other(kind, text)
}

/// Decodes standard or URL-safe base64, padded or not (Connect sends it
/// unpadded).
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            _ => return None,
        };
        acc = (acc << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64() {
        assert_eq!(base64_decode("aGVsbG8").unwrap(), b"hello");
        assert_eq!(base64_decode("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(base64_decode("/+8").unwrap(), [0xff, 0xef]);
        assert_eq!(base64_decode("_-8").unwrap(), [0xff, 0xef]);
        assert!(base64_decode("a*b").is_none());
    }

    #[test]
    fn connect_errors() {
        let detail = pb::Error {
            code: "ENOENT".into(),
            errno: 2,
            syscall: "stat".into(),
            path: "/nope".into(),
            kind: pb::ErrorKind::Errno as i32,
            ..Default::default()
        }
        .encode_to_vec();
        let b64: String = {
            // Encode with the standard alphabet, unpadded, as Connect does.
            const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
            let mut s = String::new();
            for ch in detail.chunks(3) {
                let n = ch.iter().enumerate().fold(0u32, |a, (i, b)| a | (*b as u32) << (16 - 8 * i));
                for i in 0..=ch.len() {
                    s.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
                }
            }
            s
        };
        let body = format!(
            r#"{{"code":"not_found","message":"x","details":[{{"type":"agentfs.v1.Error","value":"{b64}"}}]}}"#
        );
        let e = connect_error("/p", 404, body.as_bytes());
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert_eq!(crate::ErrorExt::errno(&e), Some(2));
        assert_eq!(e.to_string(), "ENOENT: no such file or directory, stat '/nope'");

        let e = connect_error("/p", 401, br#"{"code":"unauthenticated","message":"missing bearer token"}"#);
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
        assert!(e.to_string().contains("unauthenticated"), "{e}");
    }
}
