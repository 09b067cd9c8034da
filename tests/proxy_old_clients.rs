//! `rpconform proxy` between an HTTP/1.0 client and an RP, both sides as RFC 9112 §9.3 says:
//! an HTTP/1.0 connection persists only when the client asked (`Connection: keep-alive`) and
//! the answer says so; without it, the proxy closes once the answer has passed. Upstream, the
//! proxy speaks its own HTTP/1.1 (RFC 9110 §6.2) and never reuses a connection the RP closed
//! or said it would close: every request reaches the RP, none is answered by the proxy's own
//! `502`. An answer of unknown length reaches an HTTP/1.0 client delimited by the close, never
//! chunked (which HTTP/1.0 does not know).
//!
//! The RP here is a raw socket server that closes as HTTP allows: after each answer to an
//! HTTP/1.0 request without keep-alive (saying nothing; a request sent on that connection
//! anyway is read and never answered), and after every second answer on an HTTP/1.1
//! connection (saying `Connection: close`).

use crate::common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::Scratch;
use rpconform::proxy::{Proxy, ProxyOptions, Timing};

const SUB: &str = "00000000-0000-0000-0000-000000000001";
const WAIT: Duration = Duration::from_secs(20);

fn path(n: usize) -> String {
    format!(
        "/subscriptions/{SUB}/resourceGroups/rg/providers/Microsoft.Contoso/widgets/w{n}?api-version=2024-05-01"
    )
}

/// One request head off a blocking socket: (request line, headers); `None` at the end.
fn read_head(s: &mut TcpStream) -> Option<(String, Vec<(String, String)>)> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        match s.read(&mut byte) {
            Ok(1) => buf.push(byte[0]),
            _ => return None,
        }
    }
    let text = String::from_utf8_lossy(&buf).into_owned();
    let mut lines = text.split("\r\n");
    let first = lines.next()?.to_string();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Some((first, headers))
}

fn header<'a>(h: &'a [(String, String)], name: &str) -> Option<&'a str> {
    h.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// How the RP frames its answers.
#[derive(Clone, Copy)]
enum Framing {
    Length,
    Chunked,
}

/// The RP: logs each request line it reads; closes as the module docs say.
fn rp(framing: Framing) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let log = Arc::new(Mutex::new(Vec::new()));
    let seen = log.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut c) = conn else { continue };
            let seen = seen.clone();
            std::thread::spawn(move || {
                let mut answered = 0;
                while let Some((line, headers)) = read_head(&mut c) {
                    seen.lock().unwrap().push(line.clone());
                    answered += 1;
                    let http10 = line.ends_with("HTTP/1.0");
                    let keep = if http10 {
                        header(&headers, "connection")
                            .is_some_and(|v| v.eq_ignore_ascii_case("keep-alive"))
                    } else {
                        answered % 2 == 1
                    };
                    let body = format!("{{\"name\":\"answer-{answered}\"}}");
                    let mut head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nx-ms-request-id: r\r\n".to_string();
                    if !http10 && !keep {
                        head.push_str("Connection: close\r\n");
                    }
                    let framed = match framing {
                        Framing::Length => {
                            format!("{head}Content-Length: {}\r\n\r\n{body}", body.len())
                        }
                        Framing::Chunked => format!(
                            "{head}Transfer-Encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
                            body.len()
                        ),
                    };
                    if c.write_all(framed.as_bytes()).is_err() {
                        return;
                    }
                    if !keep {
                        // Done with this connection, as HTTP lets it be: a request sent on it
                        // anyway is read and never answered, then the connection closes.
                        if let Some((late, _)) = read_head(&mut c) {
                            seen.lock().unwrap().push(format!("unanswered: {late}"));
                        }
                        return;
                    }
                }
            });
        }
    });
    (port, log)
}

fn start_proxy(rt: &tokio::runtime::Runtime, dir: &Scratch, port: u16) -> Proxy {
    let target = dir.write(
        "target.yaml",
        &format!(
            "base_url: http://127.0.0.1:{port}\nsubscription: {SUB}\n\
             resource_group: {{name: rg}}\nnamespace: Microsoft.Contoso\napi_version: \"2024-05-01\"\n\
             types:\n  widgets: {{create_body: {{location: x}}}}\n"
        ),
    );
    let target = rpconform::target::load_target(&target).unwrap();
    rt.block_on(Proxy::start(ProxyOptions {
        target,
        listen: "127.0.0.1:0".parse().unwrap(),
        rewrite_links: false,
        strict: false,
        body_cap: 1024 * 1024,
        timing: Timing {
            settle: Duration::from_millis(10),
            idle: Duration::from_secs(60),
        },
        every: None,
    }))
    .unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// One answer off the client's connection: status line, headers, body (by Content-Length, or
/// to the close when there is none); `closed` when the proxy closed after it.
struct Answer {
    status: String,
    headers: Vec<(String, String)>,
    body: String,
    closed: bool,
}

fn read_answer(c: &mut TcpStream) -> Answer {
    c.set_read_timeout(Some(WAIT)).unwrap();
    let (status, headers) = read_head(c).expect("an answer head");
    let mut body = Vec::new();
    let closed = match header(&headers, "content-length") {
        Some(n) => {
            body.resize(n.parse().unwrap(), 0);
            c.read_exact(&mut body).expect("the whole body");
            // Closed now? A persistent connection has nothing more to say: the read waits.
            c.set_read_timeout(Some(Duration::from_millis(300)))
                .unwrap();
            let mut b = [0u8; 1];
            matches!(c.read(&mut b), Ok(0))
        }
        None => {
            c.read_to_end(&mut body)
                .expect("a body delimited by the close");
            true
        }
    };
    Answer {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
        closed,
    }
}

/// Two keep-alive requests on one HTTP/1.0 connection, then a third without keep-alive: each
/// reaches the RP and is answered by it; the connection persists exactly while asked.
#[test]
fn http10_keep_alive_persists_only_as_asked_and_every_request_reaches_the_rp() {
    let rt = runtime();
    let dir = Scratch::new("proxy-http10");
    let (port, log) = rp(Framing::Length);
    let proxy = start_proxy(&rt, &dir, port);
    let mut c = TcpStream::connect(proxy.addr).unwrap();
    for n in 1..=3 {
        let keep = if n < 3 {
            "Connection: keep-alive\r\n"
        } else {
            ""
        };
        c.write_all(format!("GET {} HTTP/1.0\r\nHost: x\r\n{keep}\r\n", path(n)).as_bytes())
            .unwrap();
        let a = read_answer(&mut c);
        assert!(
            a.status.contains(" 200 "),
            "request {n}: {} {}",
            a.status,
            a.body
        );
        assert!(a.body.contains("answer-"), "request {n}: {}", a.body);
        if n < 3 {
            assert!(
                !a.closed,
                "request {n}: closed though the client asked to keep it"
            );
            assert!(
                header(&a.headers, "connection")
                    .is_some_and(|v| v.eq_ignore_ascii_case("keep-alive")),
                "request {n}: an HTTP/1.0 answer that persists says keep-alive: {:?}",
                a.headers
            );
        } else {
            assert!(
                a.closed,
                "request {n}: not closed though the client did not ask to keep it"
            );
        }
    }
    let seen = log.lock().unwrap().clone();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(
        seen.iter().all(|l| l.ends_with("HTTP/1.1")),
        "the proxy forwards in its own version: {seen:?}"
    );
    let results = proxy.stop();
    assert!(!results.is_empty());
}

/// An answer the RP sends chunked reaches an HTTP/1.0 client whole, delimited by the close.
#[test]
fn an_answer_of_unknown_length_reaches_an_http10_client_delimited_by_the_close() {
    let rt = runtime();
    let dir = Scratch::new("proxy-http10-chunked");
    let (port, _log) = rp(Framing::Chunked);
    let proxy = start_proxy(&rt, &dir, port);
    let mut c = TcpStream::connect(proxy.addr).unwrap();
    c.write_all(
        format!(
            "GET {} HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\n\r\n",
            path(1)
        )
        .as_bytes(),
    )
    .unwrap();
    let a = read_answer(&mut c);
    assert!(a.status.contains(" 200 "), "{}", a.status);
    assert!(
        header(&a.headers, "transfer-encoding").is_none(),
        "chunked to an HTTP/1.0 client: {:?}",
        a.headers
    );
    assert_eq!(a.body, "{\"name\":\"answer-1\"}");
    assert!(a.closed);
    drop(proxy);
}

/// HTTP/1.1 clients, many requests: the RP closes every second connection use (saying so)
/// and each request still reaches it.
#[test]
fn a_connection_the_rp_closed_is_never_reused() {
    let rt = runtime();
    let dir = Scratch::new("proxy-rp-closes");
    let (port, log) = rp(Framing::Length);
    let proxy = start_proxy(&rt, &dir, port);
    let mut c = TcpStream::connect(proxy.addr).unwrap();
    for n in 1..=6 {
        c.write_all(format!("GET {} HTTP/1.1\r\nHost: x\r\n\r\n", path(n)).as_bytes())
            .unwrap();
        let a = read_answer(&mut c);
        assert!(
            a.status.contains(" 200 "),
            "request {n}: {} {}",
            a.status,
            a.body
        );
        assert!(
            !a.closed,
            "request {n}: the client's connection is not the RP's"
        );
    }
    assert_eq!(log.lock().unwrap().len(), 6);
    drop(proxy);
}
