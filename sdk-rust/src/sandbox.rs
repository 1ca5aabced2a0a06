//! [`AgentFS::exec`](crate::AgentFS::exec): shell scripts run by the
//! engine's in-process sandbox (POSIX utilities over the agent's files; no
//! host process starts). Bindings are functions of this process that a
//! script runs as commands (`lookup --id 7`): the engine calls back over
//! the stdio connection (`HostService.CallBinding`) while the script runs,
//! each callback on a thread of its own.

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex};

use prost::Message;
use serde_json::Value;

use crate::clients::SandboxServiceClient;
use crate::pb;
use crate::transport::{Handler, Transport};

const CALL_BINDING: &str = "/agentfs.v1.HostService/CallBinding";

/// The function of a binding: parsed arguments in, a JSON result out (or
/// an error message, which fails the command).
pub type BindingFn = Arc<dyn Fn(Value) -> Result<Value, String> + Send + Sync>;

/// A host function a script runs as a command.
#[derive(Clone)]
pub struct Binding {
    pub description: String,
    /// JSON schema of the arguments (an object with properties): flags
    /// such as `--id 7` map onto them.
    pub schema: Option<Value>,
    pub func: BindingFn,
}

impl Binding {
    pub fn new(func: impl Fn(Value) -> Result<Value, String> + Send + Sync + 'static) -> Binding {
        Binding { description: String::new(), schema: None, func: Arc::new(func) }
    }

    pub fn schema(mut self, schema: Value) -> Binding {
        self.schema = Some(schema);
        self
    }
}

/// Options of one script.
#[derive(Clone, Default)]
pub struct ExecOptions {
    /// Working directory in the agent filesystem (default "/").
    pub dir: Option<String>,
    pub stdin: Vec<u8>,
    pub env: HashMap<String, String>,
    /// "normal" (default), "hardened" or "none".
    pub limits: Option<String>,
    /// Host functions by command name (stdio only).
    pub bindings: HashMap<String, Binding>,
}

/// Outcome of a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecResult {
    pub exit_code: i32,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Set when a limit stopped the script.
    pub limit: Option<String>,
}

/// The bindings of the scripts running now on one connection, by name.
#[derive(Default)]
pub(crate) struct Registry {
    fns: Mutex<HashMap<String, (BindingFn, usize)>>,
}

impl Registry {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (BindingFn, usize)>> {
        self.fns.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn register(
        self: &Arc<Self>,
        t: &Arc<dyn Transport>,
        bindings: &HashMap<String, Binding>,
    ) -> io::Result<()> {
        if bindings.is_empty() {
            return Ok(());
        }
        let first = self.lock().is_empty();
        if first {
            let me = Arc::clone(self);
            let handler: Handler = Arc::new(move |payload| me.call(payload));
            t.serve(CALL_BINDING, Some(handler))?;
        }
        let mut fns = self.lock();
        for (name, b) in bindings {
            let users = fns.get(name).map_or(0, |e| e.1);
            fns.insert(name.clone(), (Arc::clone(&b.func), users + 1));
        }
        Ok(())
    }

    pub(crate) fn unregister(&self, t: &Arc<dyn Transport>, bindings: &HashMap<String, Binding>) {
        if bindings.is_empty() {
            return;
        }
        let mut fns = self.lock();
        for name in bindings.keys() {
            match fns.get_mut(name) {
                Some(e) if e.1 > 1 => e.1 -= 1,
                _ => {
                    fns.remove(name);
                }
            }
        }
        if fns.is_empty() {
            drop(fns);
            let _ = t.serve(CALL_BINDING, None);
        }
    }

    fn call(&self, payload: Vec<u8>) -> Result<Vec<u8>, String> {
        let req = pb::CallBindingRequest::decode(payload.as_slice()).map_err(|e| e.to_string())?;
        let func = self.lock().get(&req.name).map(|e| Arc::clone(&e.0));
        let mut resp = pb::CallBindingResponse::default();
        match func {
            None => resp.error = format!("no binding named {} is registered", req.name),
            Some(f) => {
                let args = if req.args_json.is_empty() {
                    Value::Object(Default::default())
                } else {
                    serde_json::from_str(&req.args_json).map_err(|e| e.to_string())?
                };
                match f(args) {
                    Ok(Value::Null) => {}
                    Ok(v) => resp.result_json = v.to_string(),
                    Err(e) => resp.error = e,
                }
            }
        }
        Ok(resp.encode_to_vec())
    }
}

/// Runs one script with its bindings registered for its duration.
pub(crate) fn exec(
    t: &Arc<dyn Transport>,
    reg: &Arc<Registry>,
    script: &str,
    opts: &ExecOptions,
) -> io::Result<ExecResult> {
    reg.register(t, &opts.bindings)?;
    let req = exec_request(script, opts);
    let res = SandboxServiceClient::new(Arc::clone(t)).exec(&req);
    reg.unregister(t, &opts.bindings);
    let r = res?;
    Ok(result(r))
}

pub(crate) fn result(r: pb::ExecResponse) -> ExecResult {
    ExecResult {
        exit_code: r.exit_code,
        stdout: r.stdout,
        stderr: r.stderr,
        limit: (!r.limit.is_empty()).then_some(r.limit),
    }
}

/// The request of a script with its options (exec, spawn, shell).
pub(crate) fn exec_request(script: &str, opts: &ExecOptions) -> pb::ExecRequest {
    pb::ExecRequest {
        script: script.to_string(),
        dir: opts.dir.clone().unwrap_or_default(),
        stdin: opts.stdin.clone(),
        env: opts.env.clone(),
        limits: opts.limits.clone().unwrap_or_default(),
        bindings: opts
            .bindings
            .iter()
            .map(|(name, b)| pb::BindingSpec {
                name: name.clone(),
                description: b.description.clone(),
                schema_json: b.schema.as_ref().map(|s| s.to_string()).unwrap_or_default(),
            })
            .collect(),
        ..Default::default()
    }
}
