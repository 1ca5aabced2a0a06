//! The small-file workloads and the empty-call round trip from Rust, for
//! docs/BENCHMARKS.md:
//!
//!     AGENTFS_BIN=bin/agentfs cargo run --release --example bench -- [N]
//!
//! Each workload runs N times (default 2000) through the blocking API, one
//! call after another, on a temporary database over stdio, then on an agent
//! of a local `agentfs serve http`. Prints a Markdown table: calls per
//! second and per-call latency percentiles.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use agentfs::{AgentFS, Options, ToolRecord};

fn main() -> std::io::Result<()> {
    let n: usize = std::env::args().nth(1).map(|s| s.parse().expect("N")).unwrap_or(2000);
    let engine = agentfs::find_engine(None)?;

    // Cold start: engine process start, handshake, first write.
    let mut starts = Vec::new();
    for _ in 0..10 {
        let t = Instant::now();
        let a = AgentFS::open(Options::default())?;
        a.fs().write_file("/first", "x")?;
        starts.push(t.elapsed());
        a.close()?;
    }
    starts.sort();
    println!("open (engine start + handshake) + first write_file, 10 runs: median {:.1} ms\n", ms(starts[5]));

    println!("| transport | workload | calls/s | p50 µs | p99 µs |");
    println!("|---|---|---:|---:|---:|");
    let a = AgentFS::open(Options::default())?;
    run("stdio", &a, n);
    let a = Arc::new(a);
    threads("stdio", &a, n);
    drop(a);

    let data = std::env::temp_dir().join(format!("agentfs-rs-bench-{}", std::process::id()));
    std::fs::create_dir_all(&data)?;
    let mut srv = Command::new(&engine)
        .args(["serve", "http", "--listen", "127.0.0.1:0", "--quiet", "--data"])
        .arg(&data)
        .stderr(Stdio::piped())
        .spawn()?;
    let mut line = String::new();
    let mut err = BufReader::new(srv.stderr.take().unwrap());
    while !line.contains("at http://") {
        line.clear();
        if err.read_line(&mut line)? == 0 {
            panic!("serve http did not start");
        }
    }
    let url = line[line.find("at http://").unwrap() + 3..].split_whitespace().next().unwrap().to_string();
    let a = AgentFS::open(Options::http(url, "bench"))?;
    run("http", &a, n);
    srv.kill()?;
    srv.wait()?;
    std::fs::remove_dir_all(&data)?;
    Ok(())
}

fn run(transport: &str, a: &AgentFS, n: usize) {
    let fs = a.fs();
    let kb = vec![b'x'; 1024];
    fs.mkdir("/bench").unwrap();
    let ping = if transport == "stdio" { "empty call: ping (Ping/Pong frame)" } else { "empty call: GET /healthz" };
    report(transport, ping, n, |_| a.ping().unwrap());
    report(transport, "empty call: AgentService.Info", n, |_| {
        a.info().unwrap();
    });
    report(transport, "write_file 1 KiB (new files)", n, |i| fs.write_file(format!("/bench/f{i}"), &kb).unwrap());
    report(transport, "read_file 1 KiB", n, |i| {
        fs.read_file(format!("/bench/f{i}")).unwrap();
    });
    report(transport, "stat", n, |i| {
        fs.stat(format!("/bench/f{i}")).unwrap();
    });
    let kv = a.kv();
    let value = serde_json::json!({"step": 1, "note": "a small JSON value"});
    report(transport, "kv set", n, |i| kv.set(format!("k{i}"), &value).unwrap());
    report(transport, "kv get", n, |i| {
        kv.get::<serde_json::Value>(format!("k{i}")).unwrap().unwrap();
    });
    let tools = a.tools();
    report(transport, "tools.record", n, |i| {
        tools
            .record(&ToolRecord {
                name: "search".into(),
                started_at: 1_700_000_000 + i as i64,
                completed_at: 1_700_000_001 + i as i64,
                parameters: Some(serde_json::json!({"q": i})),
                result: Some(serde_json::json!({"hits": 3})),
                error: None,
            })
            .unwrap();
    });
}

/// The empty call and 1 KiB reads from 8 threads at once over one
/// connection (calls in flight together).
fn threads(transport: &str, a: &Arc<AgentFS>, n: usize) {
    for (name, read) in [("ping, 8 threads", false), ("read_file 1 KiB, 8 threads", true)] {
        let per = n / 8;
        let t = Instant::now();
        let hs: Vec<_> = (0..8)
            .map(|_| {
                let a = Arc::clone(a);
                thread::spawn(move || {
                    for i in 0..per {
                        if read {
                            a.fs().read_file(format!("/bench/f{i}")).unwrap();
                        } else {
                            a.ping().unwrap();
                        }
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        let el = t.elapsed();
        println!("| {transport} | {name} | {:.0} | | |", (per * 8) as f64 / el.as_secs_f64());
    }
}

fn report(transport: &str, name: &str, n: usize, mut f: impl FnMut(usize)) {
    let mut lat = Vec::with_capacity(n);
    let t = Instant::now();
    for i in 0..n {
        let s = Instant::now();
        f(i);
        lat.push(s.elapsed());
    }
    let el = t.elapsed();
    lat.sort();
    let p = |q: f64| us(lat[((n as f64 * q) as usize).min(n - 1)]);
    println!("| {transport} | {name} | {:.0} | {:.1} | {:.1} |", n as f64 / el.as_secs_f64(), p(0.5), p(0.99));
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
