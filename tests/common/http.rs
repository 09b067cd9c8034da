//! The request side of the raw-socket HTTP/1.1 test servers (tests/local, tests/hostile): one
//! request read off a connection (request line, headers, a Content-Length body drained), and
//! the request as the servers log it. Each server writes its own answers.

use tokio::io::{AsyncRead, AsyncReadExt};

/// One request a test server received.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// As sent: the path and query.
    pub target: String,
    pub headers: Vec<(String, String)>,
}

impl Request {
    /// The first header of that name (ASCII case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The target without its query.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or(&self.target)
    }

    /// The query (without `?`; empty when there is none).
    pub fn query(&self) -> &str {
        self.target.split_once('?').map(|(_, q)| q).unwrap_or("")
    }
}

/// The most of a body [`read_request`] drains.
const MAX_BODY: usize = 1024 * 1024;

/// Read one request head (request line and headers; `None` when the connection ends first, the
/// head grows past `max_head` bytes or the request line is not `METHOD TARGET ...`), then drain
/// its Content-Length body (at most 1 MiB, until the client stops sending). Header values are
/// trimmed; lines without `:` are skipped.
pub async fn read_request(
    stream: &mut (impl AsyncRead + Unpin),
    max_head: usize,
) -> Option<Request> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        if buf.len() > max_head {
            return None;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_string();
    let target = first.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let request = Request {
        method,
        target,
        headers,
    };
    let len: usize = request
        .header("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
        .min(MAX_BODY);
    let mut have = buf.len() - head_end - 4;
    while have < len {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        have += n;
    }
    Some(request)
}
