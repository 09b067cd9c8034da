//! `rpconform proxy` streams bodies both ways: an answer's first bytes reach the client while
//! the target is still writing the rest, and an upload's first bytes reach the target while
//! the client is still sending. A proxy that held either whole would deadlock each test (the
//! other end waits for those first bytes before it goes on), which each test bounds with a
//! timeout. Both exchanges are still recorded and judged once they have passed.

use crate::common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::Duration;

use common::Scratch;
use rpconform::proxy::{Proxy, ProxyOptions, Timing};

const PATH: &str = "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/Microsoft.Contoso/widgets/w?api-version=2024-05-01";
const WAIT: Duration = Duration::from_secs(10);

/// Read from `s` until `needle` has been seen (or the timeout: then what was read).
fn read_until(s: &mut TcpStream, needle: &str) -> Result<String, String> {
    s.set_read_timeout(Some(WAIT)).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&got).contains(needle) {
        match s.read(&mut buf) {
            Ok(0) => return Err(String::from_utf8_lossy(&got).into_owned()),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(_) => return Err(String::from_utf8_lossy(&got).into_owned()),
        }
    }
    Ok(String::from_utf8_lossy(&got).into_owned())
}

fn start_proxy(rt: &tokio::runtime::Runtime, dir: &Scratch, upstream_port: u16) -> Proxy {
    let target = dir.write(
        "target.yaml",
        &format!(
            "base_url: http://127.0.0.1:{upstream_port}\nsubscription: 00000000-0000-0000-0000-000000000001\n\
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

/// The last line of the proxy's report: how many exchanges passed and were judged.
fn passed_line(proxy: Proxy) -> String {
    proxy
        .stop()
        .iter()
        .flat_map(|r| r.notes.clone())
        .find(|n| n.contains("exchanges passed"))
        .unwrap_or_default()
}

#[test]
fn an_answer_reaches_the_client_while_the_target_is_still_writing_it() {
    let rt = runtime();
    let dir = Scratch::new("proxy-stream-answer");
    let upstream = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = upstream.local_addr().unwrap().port();
    let (client_has_first, first_seen) = mpsc::channel::<()>();
    let target = std::thread::spawn(move || {
        let (mut c, _) = upstream.accept().unwrap();
        read_until(&mut c, "\r\n\r\n").unwrap();
        c.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nx-ms-request-id: r-1\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{\"name\":\"first\",\r\n",
        )
        .unwrap();
        // The rest only once the client has the first bytes.
        let streamed = first_seen.recv_timeout(WAIT).is_ok();
        let _ = c.write_all(b"e\r\n\"tail\":\"last\"}\r\n0\r\n\r\n");
        streamed
    });
    let proxy = start_proxy(&rt, &dir, port);
    let mut client = TcpStream::connect(proxy.addr).unwrap();
    client
        .write_all(
            format!("GET {PATH} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .unwrap();
    let first = read_until(&mut client, "\"first\"");
    let _ = client_has_first.send(());
    assert!(
        first.is_ok(),
        "the first bytes never reached the client before the target finished: {first:?}"
    );
    let rest = read_until(&mut client, "last").expect("the rest of the answer");
    assert!(rest.contains("tail"), "{rest}");
    assert!(target.join().unwrap(), "the target never heard back");
    drop(client);
    std::thread::sleep(Duration::from_millis(100));
    let line = passed_line(proxy);
    assert!(line.starts_with("1 exchanges passed, 1 judged"), "{line}");
}

#[test]
fn an_upload_reaches_the_target_while_the_client_is_still_sending_it() {
    let rt = runtime();
    let dir = Scratch::new("proxy-stream-upload");
    let upstream = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = upstream.local_addr().unwrap().port();
    let (target_has_first, first_seen) = mpsc::channel::<()>();
    let target = std::thread::spawn(move || {
        let (mut c, _) = upstream.accept().unwrap();
        let first = read_until(&mut c, "part-one");
        let _ = target_has_first.send(());
        let rest = read_until(&mut c, "part-two");
        let _ = c.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nx-ms-request-id: r-2\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
        );
        (first, rest)
    });
    let proxy = start_proxy(&rt, &dir, port);
    let mut client = TcpStream::connect(proxy.addr).unwrap();
    client
        .write_all(
            format!(
                "PUT {PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n13\r\n{{\"a\":\"part-one\",   \r\n"
            )
            .as_bytes(),
        )
        .unwrap();
    // The rest only once the target has the first bytes.
    let streamed = first_seen.recv_timeout(WAIT).is_ok();
    client
        .write_all(b"f\r\n\"b\":\"part-two\"}\r\n0\r\n\r\n")
        .unwrap();
    let answer = read_until(&mut client, "{}");
    let (first, rest) = target.join().unwrap();
    assert!(
        streamed && first.is_ok(),
        "the upload's first bytes never reached the target before the client finished: {first:?}"
    );
    assert!(rest.is_ok() && answer.is_ok(), "{rest:?} {answer:?}");
    drop(client);
    std::thread::sleep(Duration::from_millis(100));
    let line = passed_line(proxy);
    assert!(line.starts_with("1 exchanges passed, 1 judged"), "{line}");
}
