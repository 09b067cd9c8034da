//! `rpconform proxy` on the command line: it refuses a non-loopback listener unless told, passes
//! requests and answers unchanged (header spelling, body bytes) in reverse and forward mode,
//! judges what passes, never writes a token unmasked, and writes its reports on SIGTERM.
//! The target here is a tiny raw-TCP server that records the bytes it receives and answers
//! with fixed bytes.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{QUICK_TIMEOUT, Scratch, finish, read_report, results, rpconform, signal};

const PATH: &str = "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/Microsoft.Contoso/widgets/w?api-version=2024-05-01";
const ANSWER_BODY: &str = r#"{"Odd":  "spacing kept" }"#;
const TOKEN: &str = "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJzZWNyZXQifQ.c2lnbmF0dXJl";

/// A server that records each raw request and answers a fixed 202 (Retry-After 3: LOC-04).
fn upstream() -> (u16, Arc<Mutex<Vec<String>>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    std::thread::spawn(move || {
        for conn in l.incoming().flatten() {
            let mut r = BufReader::new(conn.try_clone().unwrap());
            let mut head = String::new();
            let mut len = 0;
            loop {
                let mut line = String::new();
                if r.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
                head.push_str(&line);
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0; len];
            let _ = r.read_exact(&mut body);
            head.push_str(&String::from_utf8_lossy(&body));
            s2.lock().unwrap().push(head);
            let answer = format!(
                "HTTP/1.1 202 Accepted\r\nLocation: http://127.0.0.1:{port}/op/1?api-version=2024-05-01\r\nRetry-After: 3\r\nX-Odd-Header: Yes\r\nx-ms-request-id: r-1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{ANSWER_BODY}",
                ANSWER_BODY.len()
            );
            let mut c = conn;
            let _ = c.write_all(answer.as_bytes());
        }
    });
    (port, seen)
}

fn target(s: &Scratch, port: u16) -> String {
    s.write(
        "target.yaml",
        &format!(
            "base_url: http://127.0.0.1:{port}\nsubscription: 00000000-0000-0000-0000-000000000001\n\
             resource_group: {{name: rg}}\nnamespace: Microsoft.Contoso\napi_version: \"2024-05-01\"\n\
             types:\n  widgets: {{create_body: {{location: x}}}}\n"
        ),
    )
    .display()
    .to_string()
}

/// The address the proxy's first line says it listens on.
fn listening_on(first: &str) -> String {
    first
        .split("http://")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no address in {first:?}"))
        .to_string()
}

/// Send raw bytes, return the raw answer.
fn raw(addr: &str, request: &str) -> String {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    c.write_all(request.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = c.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn a_non_loopback_listener_needs_allow_remote() {
    let s = Scratch::new("proxy-remote");
    let t = target(&s, 9);
    let out = rpconform(
        &["proxy", "--target", &t, "--listen", "0.0.0.0:0"],
        QUICK_TIMEOUT,
    );
    assert_eq!(out.code(), 2, "{}", out.tail(2000));
    assert!(out.stderr.contains("--allow-remote"), "{}", out.tail(2000));
}

#[test]
fn traffic_passes_unchanged_is_judged_and_reported_on_sigterm() {
    let s = Scratch::new("proxy-cli");
    let (port, seen) = upstream();
    let t = target(&s, port);
    let mut child = Command::new(env!("CARGO_BIN_EXE_rpconform"))
        .args(["proxy", "--target", &t, "--report-dir", &s.str("rep")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    let addr = listening_on(&first);
    // Reverse mode: origin-form request, odd header spelling, a token, a body.
    let body = r#"{"location":  "x"}"#;
    let answer = raw(
        &addr,
        &format!(
            "PUT {PATH} HTTP/1.1\r\nHost: {addr}\r\nX-Custom-CASE: v\r\nAuthorization: {TOKEN}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    );
    assert!(answer.starts_with("HTTP/1.1 202"), "{answer}");
    assert!(answer.contains("X-Odd-Header: Yes"), "{answer}");
    assert!(answer.ends_with(ANSWER_BODY), "{answer}");
    assert!(
        answer.contains(&format!("Location: http://127.0.0.1:{port}/op/1")),
        "links pass unchanged: {answer}"
    );
    // Forward mode: absolute-form request.
    let fwd = raw(
        &addr,
        &format!(
            "GET http://127.0.0.1:{port}{PATH} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
        ),
    );
    assert!(fwd.starts_with("HTTP/1.1 202"), "{fwd}");
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert!(
            seen[0].starts_with(&format!("PUT {PATH} HTTP/1.1")),
            "{}",
            seen[0]
        );
        assert!(seen[0].contains("X-Custom-CASE: v\r\n"), "{}", seen[0]);
        assert!(
            seen[0].contains(&format!("Authorization: {TOKEN}")),
            "{}",
            seen[0]
        );
        assert!(seen[0].ends_with(body), "{}", seen[0]);
        assert!(
            seen[0].contains(&format!("host: 127.0.0.1:{port}"))
                || seen[0].contains(&format!("Host: 127.0.0.1:{port}")),
            "{}",
            seen[0]
        );
        assert!(
            seen[1].starts_with(&format!("GET {PATH} HTTP/1.1")),
            "{}",
            seen[1]
        );
    }
    signal(&child, "TERM");
    let ended = finish(child, "rpconform proxy after SIGTERM", QUICK_TIMEOUT);
    let mut rest = String::new();
    let _ = out.read_to_string(&mut rest);
    assert_eq!(
        ended.code(),
        1,
        "LOC-04 failed: {first}{rest}{}",
        ended.stderr
    );
    let text = std::fs::read_to_string(s.join("rep/report.json")).unwrap();
    assert!(
        !text.contains("eyJzdWIiOiJzZWNyZXQifQ"),
        "a token was written"
    );
    let report = read_report(&s.join("rep"));
    let r = &results(&report)[0];
    assert_eq!(r["name"], "proxy::Microsoft.Contoso");
    let loc04 = r["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["rule"] == "LOC-04")
        .unwrap();
    assert_eq!(loc04["outcome"], "failed", "{loc04}");
    assert_eq!(loc04["failures"][0]["step"], "Microsoft.Contoso");
}

/// CPU time (user + system, in clock ticks) process `pid` has used.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // After the command name in parentheses: state is field 3, utime 14, stime 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    n(11) + n(12)
}

#[test]
fn out_of_descriptors_the_proxy_waits_instead_of_spinning_and_recovers() {
    if !std::path::Path::new("/proc/self/stat").exists() {
        panic!("this test reads /proc (Linux)");
    }
    let s = Scratch::new("proxy-emfile");
    let (port, _seen) = upstream();
    let t = target(&s, port);
    // Few descriptors: the clients below exhaust them.
    let mut child = Command::new("sh")
        .args([
            "-c",
            &format!(
                "ulimit -n 40 && exec '{}' proxy --target '{t}' --report-dir '{}'",
                env!("CARGO_BIN_EXE_rpconform"),
                s.str("rep")
            ),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let stdout = child.stdout.take().unwrap();
    // Killed whatever happens below (a failed assertion must not leave a proxy spinning).
    struct KillOnDrop(std::process::Child);
    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _child = KillOnDrop(child);
    let mut out = BufReader::new(stdout);
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    let addr = listening_on(&first);
    // Idle clients, more than the proxy has descriptors for.
    let idle: Vec<TcpStream> = (0..60)
        .filter_map(|_| TcpStream::connect(&addr).ok())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(2));
    let used = cpu_ticks(pid) - before;
    // Spinning on accept would use the whole 2 s (200 ticks); waiting uses next to none.
    assert!(
        used < 40,
        "the proxy used {used} ticks of CPU in 2 s with its descriptors exhausted"
    );
    // Once the clients go, it serves again.
    drop(idle);
    std::thread::sleep(Duration::from_millis(1200));
    let answer = raw(
        &addr,
        &format!("GET {PATH} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
    );
    assert!(answer.starts_with("HTTP/1.1 202"), "{answer}");
}
