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
    /// Commands that may run (empty: all, unless `default_deny`) and that
    /// may not (builtins included).
    pub allow: Vec<String>,
    pub deny: Vec<String>,
    /// Path prefixes of the agent filesystem the script may read and
    /// write (writable ones are readable too). `None`: everything, unless
    /// `default_deny`; `readable` alone makes nothing writable.
    pub readable: Option<Vec<String>>,
    pub writable: Option<Vec<String>>,
    /// Allow-lists only: nothing is readable, writable or runnable (but
    /// the shell's builtins) unless listed.
    pub default_deny: bool,
    /// Network rules: curl reaches only these URL prefixes (none: no
    /// network).
    pub net: Vec<NetRule>,
    /// Single limits replacing the profile's (0: the profile's); the
    /// server's ceiling applies.
    pub limit_values: Option<pb::SandboxLimits>,
    /// Skip the engine's "exec" record in the tool-call log.
    pub no_audit: bool,
}

/// Lets curl reach URLs under `prefix` (an http:// or https:// URL
/// prefix): only `methods` when not empty; `headers` are added at the
/// boundary, so secrets stay in this process. Loopback, private and
/// link-local addresses stay refused unless `allow_private`.
#[derive(Clone, Debug, Default)]
pub struct NetRule {
    pub prefix: String,
    pub methods: Vec<String>,
    pub headers: HashMap<String, String>,
    pub allow_private: bool,
}

/// The effective policy (`agentfs.v1.EffectivePolicy`): what `agentfs sh
/// --print-policy` prints, and every SDK's `policy()` returns.
pub type Policy = pb::EffectivePolicy;

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
        allow: opts.allow.clone(),
        deny: opts.deny.clone(),
        readable: opts.readable.clone().unwrap_or_default(),
        writable: opts.writable.clone().unwrap_or_default(),
        restrict_paths: opts.readable.is_some() && opts.writable.is_some(),
        default_deny: opts.default_deny,
        net: opts
            .net
            .iter()
            .map(|r| pb::NetRuleSpec {
                prefix: r.prefix.clone(),
                methods: r.methods.clone(),
                headers: r.headers.clone(),
                allow_private: r.allow_private,
            })
            .collect(),
        limit_values: opts.limit_values,
        no_audit: opts.no_audit,
    }
}

/// The request of `policy()`: the options, with nothing to run.
pub(crate) fn policy_request(opts: &ExecOptions) -> pb::PolicyRequest {
    pb::PolicyRequest { exec: Some(exec_request("", opts)) }
}

/// The effective policy of `opts` (see [`crate::AgentFS::policy`]).
pub(crate) fn policy(t: &Arc<dyn Transport>, opts: &ExecOptions) -> io::Result<Policy> {
    let r = SandboxServiceClient::new(Arc::clone(t)).policy(&policy_request(opts))?;
    r.policy.ok_or_else(|| io::Error::other("policy: the engine returned no policy"))
}
