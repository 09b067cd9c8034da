//! A small HTTP/1.1 server on 127.0.0.1 for tests whose answers a closure decides: every
//! request (method, target, headers) goes to the handler, which returns the raw response
//! bytes, and is logged. One request per connection (`Connection: close`).

#![allow(dead_code)] // each test binary uses a different subset

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncWriteExt;

use crate::common::http::read_request;

/// One request the server received.
pub type Req = crate::common::http::Request;

type Handler = dyn Fn(&Req) -> Vec<u8> + Send + Sync;

/// A running server; stopped when dropped.
pub struct LocalServer {
    pub addr: SocketAddr,
    log: Arc<Mutex<Vec<Req>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl LocalServer {
    pub fn start(handler: impl Fn(&Req) -> Vec<u8> + Send + Sync + 'static) -> LocalServer {
        let std_listener = std::net::TcpListener::bind(("127.0.0.1", 0)).expect("bind 127.0.0.1");
        std_listener.set_nonblocking(true).expect("non-blocking");
        let addr = std_listener.local_addr().expect("bound address");
        let log = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let log2 = log.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a tokio runtime");
            rt.block_on(async move {
                let listener =
                    tokio::net::TcpListener::from_std(std_listener).expect("tokio listener");
                let accept = async {
                    loop {
                        let Ok((mut s, _)) = listener.accept().await else {
                            continue;
                        };
                        let (handler, log) = (handler.clone(), log2.clone());
                        tokio::spawn(async move {
                            let Some(req) = read_request(&mut s, 256 * 1024).await else {
                                return;
                            };
                            let raw = handler(&req);
                            log.lock().unwrap_or_else(|e| e.into_inner()).push(req);
                            let _ = s.write_all(&raw).await;
                            let _ = s.shutdown().await;
                        });
                    }
                };
                tokio::select! {
                    _ = accept => {}
                    _ = stopped => {}
                }
            });
            rt.shutdown_timeout(Duration::from_millis(100));
        });
        LocalServer {
            addr,
            log,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn seen(&self) -> Vec<Req> {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A complete response: status, headers, body (Content-Length and `Connection: close` added).
pub fn response(status: u16, headers: &[(String, String)], body: &str) -> Vec<u8> {
    let mut raw = format!("HTTP/1.1 {status} X\r\n");
    for (k, v) in headers {
        raw.push_str(&format!("{k}: {v}\r\n"));
    }
    raw.push_str(&format!(
        "Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    ));
    raw.into_bytes()
}

/// `200 {}` to everything.
pub fn ok_empty(_: &Req) -> Vec<u8> {
    response(200, &[], "{}")
}

// ---- Searching outputs for secrets in any encoding ----

/// `s` with percent-encoding, JSON escapes and HTML/XML character references decoded,
/// repeatedly (a JSON report holding a JSON-escaped body holding a percent-encoded URL), so a
/// secret shows as itself whichever way an output re-encoded it.
pub fn normalize(s: &str) -> String {
    let mut cur = s.to_string();
    for _ in 0..6 {
        let next = decode_once(&cur);
        if next == cur {
            break;
        }
        cur = next;
    }
    cur
}

fn decode_once(s: &str) -> String {
    let b = s.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let hex = |c: u8| (c as char).to_digit(16);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        if c == b'\\' && i + 1 < b.len() {
            match b[i + 1] {
                b'u' if i + 6 <= b.len() => {
                    if let Some(u) = b[i + 2..i + 6]
                        .iter()
                        .try_fold(0u32, |a, &x| Some(a * 16 + hex(x)?))
                    {
                        let ch = char::from_u32(u).unwrap_or('\u{FFFD}');
                        out.extend_from_slice(ch.to_string().as_bytes());
                        i += 6;
                        continue;
                    }
                }
                x @ (b'/' | b'\\' | b'"') => {
                    out.push(x);
                    i += 2;
                    continue;
                }
                _ => {}
            }
        }
        if c == b'&'
            && let Some(end) = b[i..].iter().take(12).position(|&x| x == b';')
        {
            let name = &s[i + 1..i + end];
            let ch = match name {
                "amp" => Some('&'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "lt" => Some('<'),
                "gt" => Some('>'),
                n if n.starts_with("#x") || n.starts_with("#X") => u32::from_str_radix(&n[2..], 16)
                    .ok()
                    .and_then(char::from_u32),
                n if n.starts_with('#') => n[1..].parse().ok().and_then(char::from_u32),
                _ => None,
            };
            if let Some(ch) = ch {
                out.extend_from_slice(ch.to_string().as_bytes());
                i += end + 1;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every string of a JSON document (keys too), one per line: the document's own escaping
/// undone.
pub fn json_strings(v: &serde_json::Value, out: &mut String) {
    match v {
        serde_json::Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| json_strings(x, out)),
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                out.push_str(k);
                out.push('\n');
                json_strings(x, out);
            }
        }
        _ => {}
    }
}

/// Every file under `dir` (recursively) and the two streams, as (place, normalized text).
/// JSON files are searched as written and as their decoded strings.
pub fn outputs(dir: &std::path::Path, stdout: &str, stderr: &str) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                files.push(p);
            }
        }
    }
    let mut out = Vec::new();
    for p in files {
        let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap_or_default()).into_owned();
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
            let mut strings = String::new();
            json_strings(&v, &mut strings);
            out.push((
                format!("{} (its strings)", p.display()),
                normalize(&strings),
            ));
        }
        out.push((p.display().to_string(), normalize(&text)));
    }
    out.push(("stdout".into(), normalize(stdout)));
    out.push(("stderr".into(), normalize(stderr)));
    // What every base64-looking word decodes to (two levels: base64 of `Basic <base64>`).
    let decoded: Vec<(String, String)> = out
        .iter()
        .map(|(place, text)| {
            let once = base64_words(text);
            let twice = base64_words(&once);
            (
                format!("{place} (base64-decoded)"),
                format!("{once}\n{twice}"),
            )
        })
        .collect();
    out.extend(decoded);
    out
}

/// The decodings of every run of 12 or more base64 characters (either alphabet, padding
/// ignored), one per line, lossily as text.
pub fn base64_words(text: &str) -> String {
    use base64::Engine;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    let engine = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new()
            .with_decode_allow_trailing_bits(true)
            .with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    let is_b64 = |c: char| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '-' | '_');
    let mut out = String::new();
    for word in text.split(|c: char| !is_b64(c)).filter(|w| w.len() >= 12) {
        let mut w: String = word
            .chars()
            .map(|c| match c {
                '-' => '+',
                '_' => '/',
                c => c,
            })
            .collect();
        if w.len() % 4 == 1 {
            w.pop();
        }
        if let Ok(bytes) = engine.decode(&w) {
            out.push_str(&String::from_utf8_lossy(&bytes));
            out.push('\n');
        }
    }
    out
}

/// Panic naming the place and showing the context when `needle` is in one of `places`
/// (ASCII case-insensitively when `any_case`).
pub fn assert_absent(places: &[(String, String)], what: &str, needle: &str, any_case: bool) {
    for (place, text) in places {
        let at = if any_case {
            text.to_ascii_lowercase().find(&needle.to_ascii_lowercase())
        } else {
            text.find(needle)
        };
        if let Some(at) = at {
            let mut from = at.saturating_sub(200);
            while !text.is_char_boundary(from) {
                from -= 1;
            }
            let mut to = (at + needle.len() + 200).min(text.len());
            while !text.is_char_boundary(to) {
                to += 1;
            }
            panic!(
                "{what} leaked into {place} (shown decoded):\n…{}…",
                &text[from..to]
            );
        }
    }
}
