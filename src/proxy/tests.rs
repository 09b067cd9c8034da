//! The proxy never holds an answer back for its judgement.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use super::*;

/// While the judging cannot run at all (its session held here), a chunked answer still
/// reaches the client whole, its last chunk included; the exchange is judged once the
/// judging can run again.
#[test]
fn an_answer_passes_whole_while_its_judgement_waits() {
    let upstream = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = upstream.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let (mut c, _) = upstream.accept().unwrap();
        let mut head = Vec::new();
        let mut b = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && c.read(&mut b).is_ok_and(|n| n == 1) {
            head.push(b[0]);
        }
        let _ = c.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        );
        std::thread::sleep(Duration::from_secs(30));
    });
    let yaml = format!(
        "base_url: http://127.0.0.1:{port}\nsubscription: 00000000-0000-0000-0000-000000000001\n\
         resource_group: {{name: rg}}\nnamespace: Microsoft.Contoso\napi_version: \"2024-05-01\"\n\
         types:\n  widgets: {{create_body: {{location: x}}}}\n"
    );
    let target = crate::target::parse_target(std::path::Path::new("t.yaml"), &yaml, "t").unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let proxy = rt
        .block_on(Proxy::start(ProxyOptions {
            target,
            listen: "127.0.0.1:0".parse().unwrap(),
            rewrite_links: false,
            strict: false,
            body_cap: 1024,
            timing: Timing {
                settle: Duration::from_millis(10),
                idle: Duration::from_secs(60),
            },
            every: None,
        }))
        .unwrap();
    let held = proxy.session();
    let mut c = TcpStream::connect(proxy.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    c.write_all(
        b"GET /subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/Microsoft.Contoso/widgets/w?api-version=2024-05-01 HTTP/1.1\r\nHost: x\r\n\r\n",
    )
    .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !got.ends_with(b"0\r\n\r\n") {
        match c.read(&mut buf) {
            Ok(n) if n > 0 => got.extend_from_slice(&buf[..n]),
            other => panic!(
                "the answer stopped before its end ({other:?}): {}",
                String::from_utf8_lossy(&got)
            ),
        }
    }
    assert_eq!(held.exchanges, 0, "judged while its session was held");
    drop(held);
    let results = proxy.stop();
    let line = results
        .iter()
        .flat_map(|r| r.notes.clone())
        .find(|n| n.contains("exchanges passed"))
        .unwrap_or_default();
    assert!(line.starts_with("1 exchanges passed"), "{line}");
}
