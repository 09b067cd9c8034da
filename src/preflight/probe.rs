//! Does the base URL answer? A TCP connection to its host and port, and — at the same time,
//! since a proxy may stand between — one plain `GET` of the base URL that sends no
//! credential at all (so it may skip certificate checks: a certificate problem shows in the
//! authenticated reads, which go through the run's own client). Only the status line and
//! headers are read; the `Date` header and the send/receive instants give the clock skew.

use std::time::{Duration, Instant, SystemTime};

/// What one answer showed.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    /// The `Date` header, as sent.
    pub date: Option<String>,
    /// When the request left and the headers came back (for the clock skew).
    pub sent: SystemTime,
    pub elapsed: Duration,
}

/// The endpoint probe's findings.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// `host:port` as probed.
    pub authority: String,
    /// Connected to this address, or why not.
    pub tcp: Result<String, String>,
    /// The plain GET's answer, or why there was none.
    pub http: Result<Answer, String>,
}

/// Probe `base` (its userinfo is dropped first: it is a credential), each part bounded by
/// `timeout`.
pub async fn endpoint(base: &url::Url, timeout: Duration) -> Endpoint {
    let mut url = base.clone();
    let _ = url.set_username("");
    let _ = url.set_password(None);
    let host = url.host_str().unwrap_or("").to_string();
    let port = url.port_or_known_default().unwrap_or(443);
    let authority = format!("{host}:{port}");
    let (tcp, http) = tokio::join!(tcp(&authority, timeout), plain_get(&url, timeout));
    Endpoint {
        authority,
        tcp,
        http,
    }
}

async fn tcp(authority: &str, timeout: Duration) -> Result<String, String> {
    let started = Instant::now();
    let addrs: Vec<std::net::SocketAddr> =
        match tokio::time::timeout(timeout, tokio::net::lookup_host(authority)).await {
            Err(_) => {
                return Err(format!(
                    "cannot resolve the host: no answer from DNS within {} s",
                    timeout.as_secs()
                ));
            }
            Ok(Err(e)) => return Err(format!("cannot resolve the host: {e}")),
            Ok(Ok(a)) => a.collect(),
        };
    if addrs.is_empty() {
        return Err("cannot resolve the host: no address".into());
    }
    let several = addrs.len() > 1;
    let at = |addr: &std::net::SocketAddr| {
        if several {
            format!(" at {addr}")
        } else {
            String::new()
        }
    };
    let mut last = String::new();
    for addr in &addrs {
        let left = timeout.saturating_sub(started.elapsed());
        if left.is_zero() {
            break;
        }
        match tokio::time::timeout(left, tokio::net::TcpStream::connect(addr)).await {
            Ok(Ok(_)) => return Ok(addr.to_string()),
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                last = format!("connection refused{}: nothing listens there", at(addr));
            }
            Ok(Err(e)) => last = format!("cannot connect{}: {e}", at(addr)),
            Err(_) => {
                last = format!(
                    "no TCP answer{} within {} s (a firewall, or the wrong port)",
                    at(addr),
                    timeout.as_secs()
                )
            }
        }
    }
    if last.is_empty() {
        last = format!("no TCP answer within {} s", timeout.as_secs());
    }
    Err(last)
}

/// `GET url` with no credential, no redirect, certificates not checked; status and headers.
async fn plain_get(url: &url::Url, timeout: Duration) -> Result<Answer, String> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .danger_accept_invalid_certs(true)
        .connect_timeout(timeout)
        .timeout(timeout)
        .user_agent(concat!(
            "rpconform/",
            env!("CARGO_PKG_VERSION"),
            " (preflight)"
        ))
        .build()
        .map_err(|e| format!("cannot build an HTTP client: {e}"))?;
    let sent = SystemTime::now();
    let started = Instant::now();
    let resp = client
        .get(url.clone())
        .send()
        .await
        .map_err(|e| describe(&e, timeout))?;
    // The body is not read: the headers say all this needs (and a trickling body is no
    // reason to wait).
    Ok(Answer {
        status: resp.status().as_u16(),
        date: resp
            .headers()
            .get("date")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string),
        sent,
        elapsed: started.elapsed(),
    })
}

/// A reqwest error in words, with its causes (the top level alone says only "error sending
/// request").
fn describe(e: &reqwest::Error, timeout: Duration) -> String {
    use std::error::Error;
    if e.is_timeout() {
        return format!("no HTTP answer within {} s", timeout.as_secs());
    }
    let mut text = e.to_string();
    let mut src = e.source();
    while let Some(s) = src {
        let t = s.to_string();
        if !text.contains(&t) {
            text.push_str(": ");
            text.push_str(&t);
        }
        src = s.source();
    }
    text
}

/// Seconds the server's clock is ahead of ours (negative: behind), and the uncertainty of
/// that figure (a `Date` has whole seconds; the answer was made somewhere in the round trip).
pub fn skew(answer: &Answer) -> Option<(f64, f64)> {
    let date = crate::http::parse_http_date(answer.date.as_deref()?)?;
    let server = date
        .duration_since(SystemTime::UNIX_EPOCH)
        .ok()?
        .as_secs_f64();
    let sent = answer
        .sent
        .duration_since(SystemTime::UNIX_EPOCH)
        .ok()?
        .as_secs_f64();
    let mid = sent + answer.elapsed.as_secs_f64() / 2.0;
    // The Date is truncated to the second: the server's instant lies in [date, date + 1).
    let skew = server + 0.5 - mid;
    Some((skew, 0.5 + answer.elapsed.as_secs_f64() / 2.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(date: &str, sent: SystemTime, elapsed_ms: u64) -> Answer {
        Answer {
            status: 200,
            date: Some(date.into()),
            sent,
            elapsed: Duration::from_millis(elapsed_ms),
        }
    }

    #[test]
    fn skew_is_the_server_date_against_the_middle_of_the_round_trip() {
        let t = |s: u64| SystemTime::UNIX_EPOCH + Duration::from_secs(s);
        // Wed, 21 Oct 2015 07:28:00 GMT = 1445412480.
        let a = answer("Wed, 21 Oct 2015 07:28:00 GMT", t(1_445_412_480), 200);
        let (s, tol) = skew(&a).unwrap();
        assert!((s - 0.4).abs() < 1e-6, "{s}");
        assert!((tol - 0.6).abs() < 1e-6);
        // Our clock five minutes ahead: the server is 300 s behind.
        let b = answer("Wed, 21 Oct 2015 07:28:00 GMT", t(1_445_412_780), 0);
        assert!((skew(&b).unwrap().0 + 299.5).abs() < 1e-6);
        let none = Answer {
            date: None,
            ..a.clone()
        };
        assert!(skew(&none).is_none());
        assert!(skew(&answer("yesterday", t(0), 0)).is_none());
        // A server's clock is read in any form a recipient accepts, the obsolete ones too.
        for date in [
            "Wednesday, 21-Oct-15 07:28:00 GMT",
            "Wed Oct 21 07:28:00 2015",
        ] {
            let (s, _) = skew(&answer(date, t(1_445_412_480), 200)).unwrap();
            assert!((s - 0.4).abs() < 1e-6, "{date}: {s}");
        }
    }

    #[tokio::test]
    async fn a_closed_port_is_refused_and_says_so() {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let url = url::Url::parse(&format!("http://127.0.0.1:{port}/")).unwrap();
        let e = endpoint(&url, Duration::from_secs(3)).await;
        assert!(e.tcp.unwrap_err().contains("connection refused"));
        assert!(e.http.is_err());
        assert_eq!(e.authority, format!("127.0.0.1:{port}"));
    }
}
