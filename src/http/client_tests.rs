//! Tests of `client`.

use super::*;
use crate::http::json_body::{MAX_JSON_VALUES, json_values_over};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const TOKEN: &str = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1bml0LXRlc3QtY2xhaW1zIn0.c2lnbmF0dXJlLXBhcnQ";

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Serve one canned response per connection on 127.0.0.1, forever.
async fn one_answer(raw: Vec<u8>) -> String {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            let raw = raw.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 8192];
                let _ = s.read(&mut buf).await;
                let _ = s.write_all(&raw).await;
                let _ = s.shutdown().await;
            });
        }
    });
    format!("http://{addr}")
}

fn http(base: &str, follow_foreign: bool) -> Http {
    let redactor = Arc::new(Redactor::new(&[]));
    let tokens = TokenSource::new(crate::target::Auth::None, redactor.clone());
    redactor.register(TOKEN);
    let options = HttpOptions {
        request_timeout: Duration::from_secs(5),
        follow_foreign,
        ..Default::default()
    };
    Http::new(
        url::Url::parse(base).unwrap(),
        tokens,
        redactor,
        options,
        Vec::new(),
    )
    .unwrap()
}

fn get(url: &str) -> OutRequest {
    OutRequest {
        surface: crate::http::Surface::Arm,
        method: "GET".into(),
        url: url.into(),
        headers: Vec::new(),
        body: None,
    }
}

fn response(body: &[u8]) -> Vec<u8> {
    let mut raw = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    raw.extend_from_slice(body);
    raw
}

#[test]
fn a_secret_across_the_report_cut_leaves_no_trace() {
    rt().block_on(async {
        // The token starts 30 characters before the cut: cutting first would keep its
        // first two segments, which the JWT shape no longer matches.
        let mut body = "x".repeat(REPORT_BODY_CHARS - 30);
        body.push_str(TOKEN);
        let base = one_answer(response(body.as_bytes())).await;
        let ex = http(&base, true).send(get(&base), Role::Step).await;
        let r = ex.response.expect("a response");
        let middle = TOKEN.split('.').nth(1).unwrap();
        assert!(
            !r.body.contains(middle),
            "{}",
            &r.body[r.body.len() - 200..]
        );
        assert!(!r.body.contains(&TOKEN[..20]));
    });
}

#[test]
fn json_with_too_many_values_is_not_parsed() {
    rt().block_on(async {
        let mut body = String::from("[0");
        for _ in 0..MAX_JSON_VALUES {
            body.push_str(",0");
        }
        body.push(']');
        let base = one_answer(response(body.as_bytes())).await;
        let ex = http(&base, true).send(get(&base), Role::Step).await;
        let r = ex.response.expect("a response");
        assert!(r.json.is_none());
        assert!(r.json_error.unwrap().contains("not parsed"));
        assert_eq!(r.body_bytes, body.len());
    });
}

#[test]
fn value_count_ignores_strings() {
    assert!(!json_values_over(br#"{"a": "x,y,z,[,{", "b": [1, 2]}"#, 5));
    assert!(json_values_over(b"[1,2,3,4,5,6]", 5));
    assert!(!json_values_over(br#"["a\",b", 1]"#, 3));
}

/// Serve `raws` in turn, one per connection (the last one again once they run out).
async fn answers(raws: Vec<Vec<u8>>) -> String {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        let mut n = 0;
        while let Ok((mut s, _)) = l.accept().await {
            let raw = raws[n.min(raws.len() - 1)].clone();
            n += 1;
            tokio::spawn(async move {
                let mut buf = [0u8; 8192];
                let _ = s.read(&mut buf).await;
                let _ = s.write_all(&raw).await;
                let _ = s.shutdown().await;
            });
        }
    });
    format!("http://{addr}")
}

fn throttled(retry_after: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 429 Too Many Requests\r\nRetry-After: {retry_after}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
    )
    .into_bytes()
}

fn scaled(base: &str, scale: f64, budget: Duration) -> Http {
    let redactor = Arc::new(Redactor::new(&[]));
    let tokens = TokenSource::new(crate::target::Auth::None, redactor.clone());
    let options = HttpOptions {
        request_timeout: Duration::from_secs(5),
        time_scale: scale,
        throttle_budget: budget,
        ..Default::default()
    };
    Http::new(
        url::Url::parse(base).unwrap(),
        tokens,
        redactor,
        options,
        Vec::new(),
    )
    .unwrap()
}

#[test]
fn a_throttled_answer_is_waited_out_and_sent_again() {
    rt().block_on(async {
        let base = answers(vec![
            throttled("1"),
            throttled("2"),
            response(br#"{"ok": true}"#),
        ])
        .await;
        let h = scaled(&base, 0.01, Duration::from_secs(60));
        let ex = h.send(get(&base), Role::Step).await;
        assert_eq!(ex.status(), Some(200), "{ex:?}");
        assert_eq!(ex.throttled_times, 2);
        assert_eq!(ex.throttled.len(), 2);
        assert_eq!(ex.throttled[0].status, 429);
        assert_eq!(ex.throttled[1].retry_after.as_deref(), Some("2"));
        assert!(ex.transcript(100).contains("429 throttled"));
        let st = h.stats();
        assert_eq!((st.requests, st.throttled), (3, 2));
        assert!(st.throttle_wait_ms >= 25, "{st:?}");
    });
}

#[test]
fn throttling_past_the_budget_is_no_answer_to_judge() {
    rt().block_on(async {
        let base = answers(vec![throttled("100")]).await;
        let h = scaled(&base, 1.0, Duration::from_secs(2));
        let start = Instant::now();
        let ex = h.send(get(&base), Role::Step).await;
        assert!(start.elapsed() < Duration::from_secs(2));
        assert!(ex.response.is_none());
        assert!(
            ex.error.as_deref().unwrap().contains("throttle budget"),
            "{ex:?}"
        );
        assert_eq!(ex.throttled_times, 1);
    });
}

#[test]
fn requests_are_paced_by_the_rate_limit() {
    let b = Bucket::new(5.0).unwrap();
    let now = Instant::now();
    let slots: Vec<Duration> = (0..10).map(|_| b.reserve(now) - now).collect();
    // A burst of 5 at once, then one every 200 ms.
    assert!(slots[..5].iter().all(|d| d.is_zero()), "{slots:?}");
    assert_eq!(slots[5], Duration::from_millis(200));
    assert_eq!(slots[9], Duration::from_millis(1000));
    assert!(Bucket::new(0.0).is_none() && Bucket::new(f64::NAN).is_none());
}

#[test]
fn refusals_are_known_before_sending() {
    let h = http("http://127.0.0.1:1", false);
    assert!(h.refusal("http://127.0.0.1:1/x").is_none());
    let ftp = h.refusal("ftp://127.0.0.1:1/x").unwrap();
    assert!(ftp.contains("`ftp:`"), "{ftp}");
    let other = h.refusal("http://127.0.0.2:1/x").unwrap();
    assert!(other.contains("another origin"), "{other}");
    assert!(h.refusal("not a url").unwrap().contains("invalid URL"));
    let h = http("http://127.0.0.1:1", true);
    assert!(h.refusal("http://127.0.0.2:1/x").is_none());
    // A refused request is recorded, flagged, and never leaves the process.
    let ex = rt().block_on(h.send(get("ftp://127.0.0.2:1/x"), Role::LocationPoll));
    assert!(ex.foreign && ex.response.is_none());
    assert!(ex.error.unwrap().contains("`ftp:`"));
}

/// Serve `answers` in turn, one per connection (`None`: close the connection unanswered), then
/// the last one forever.
async fn answers_in_turn(answers: Vec<Option<Vec<u8>>>) -> String {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        let mut n = 0;
        while let Ok((mut s, _)) = l.accept().await {
            let a = answers[n.min(answers.len() - 1)].clone();
            n += 1;
            tokio::spawn(async move {
                let mut buf = [0u8; 8192];
                let _ = s.read(&mut buf).await;
                if let Some(raw) = a {
                    let _ = s.write_all(&raw).await;
                }
                let _ = s.shutdown().await;
            });
        }
    });
    format!("http://{addr}")
}

fn status_answer(status: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn http_retrying(base: &str, retries: u32) -> Http {
    let redactor = Arc::new(Redactor::new(&[]));
    let tokens = TokenSource::new(crate::target::Auth::None, redactor.clone());
    let options = HttpOptions {
        request_timeout: Duration::from_secs(5),
        time_scale: 0.001,
        retries,
        ..Default::default()
    };
    Http::new(
        url::Url::parse(base).unwrap(),
        tokens,
        redactor,
        options,
        Vec::new(),
    )
    .unwrap()
}

#[test]
fn retries_send_again_only_what_got_no_answer_of_the_rps_and_keep_every_attempt() {
    rt().block_on(async {
        // No answer, then a front door's 502 page, then the RP's answer.
        let base = answers_in_turn(vec![
            None,
            Some(status_answer("502 Bad Gateway", "<html>bad gateway</html>")),
            Some(response(b"{\"id\":\"x\"}")),
        ])
        .await;
        let ex = http_retrying(&base, 3).send(get(&base), Role::Step).await;
        assert_eq!(ex.status(), Some(200), "{ex:?}");
        assert_eq!(ex.retried.len(), 2, "{:?}", ex.retried);
        assert!(
            ex.retried[0].outcome.starts_with("no answer: "),
            "{:?}",
            ex.retried
        );
        assert_eq!(ex.retried[1].outcome, "502 without an ARM error body");
        assert!(ex.retried[1].body.contains("bad gateway"));
        assert!(ex.transcript(1000).contains("sent again (--retries)"));

        // Without --retries, the first failure is the answer.
        let base = answers_in_turn(vec![None, Some(response(b"{}"))]).await;
        let ex = http_retrying(&base, 0).send(get(&base), Role::Step).await;
        assert!(ex.response.is_none() && ex.error.is_some(), "{ex:?}");
        assert!(ex.retried.is_empty());

        // What the RP wrote (a 503 with the ARM error envelope, a 500) is judged, not retried.
        let envelope = r#"{"error":{"code":"ServiceUnavailable","message":"busy"}}"#;
        for answer in [
            status_answer("503 Service Unavailable", envelope),
            status_answer("500 Internal Server Error", "{}"),
        ] {
            let base = answers_in_turn(vec![Some(answer), Some(response(b"{}"))]).await;
            let ex = http_retrying(&base, 3).send(get(&base), Role::Step).await;
            assert!(matches!(ex.status(), Some(503 | 500)), "{ex:?}");
            assert!(ex.retried.is_empty(), "{:?}", ex.retried);
        }

        // N retries at most: the last failure is the answer, with the attempts before it.
        let base = answers_in_turn(vec![None]).await;
        let ex = http_retrying(&base, 2).send(get(&base), Role::Step).await;
        assert!(ex.error.is_some());
        assert_eq!(ex.retried.len(), 2);
    });
}

/// Serve `raw` to every connection on `host`, keeping each request's head (lowercased).
async fn recording(host: &str, raw: Vec<u8>) -> (String, Arc<Mutex<Vec<String>>>) {
    let l = tokio::net::TcpListener::bind((host, 0)).await.unwrap();
    let addr = l.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            let raw = raw.clone();
            let kept = kept.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 16384];
                let n = s.read(&mut buf).await.unwrap_or(0);
                kept.lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(&buf[..n]).to_ascii_lowercase());
                let _ = s.write_all(&raw).await;
                let _ = s.shutdown().await;
            });
        }
    });
    (format!("http://{addr}"), seen)
}

#[test]
fn userinfo_in_a_url_the_server_handed_out_is_never_sent() {
    rt().block_on(async {
        let (own, own_seen) = recording("127.0.0.1", response(b"{}")).await;
        let (other, other_seen) = recording("127.0.0.2", response(b"{}")).await;
        let h = http(&own, true);
        for base in [&own, &other] {
            let handed = base.replacen("http://", "http://mallory:pw123@", 1);
            let ex = h.send(get(&format!("{handed}/x")), Role::Step).await;
            assert_eq!(ex.response.map(|r| r.status), Some(200), "{:?}", ex.error);
            assert!(!ex.url.contains("pw123"), "{}", ex.url);
        }
        let heads: Vec<String> = [own_seen, other_seen]
            .iter()
            .flat_map(|s| s.lock().unwrap().clone())
            .collect();
        assert_eq!(heads.len(), 2);
        for head in heads {
            assert!(!head.contains("authorization"), "sent credentials: {head}");
        }
    });
}

#[test]
fn the_base_urls_own_userinfo_goes_to_its_origin_and_nowhere_else() {
    rt().block_on(async {
        let (own, own_seen) = recording("127.0.0.1", response(b"{}")).await;
        let (other, other_seen) = recording("127.0.0.2", response(b"{}")).await;
        let base = own.replacen("http://", "http://me:s3cret@", 1);
        let h = http(&base, true);
        // The base URL's credential, even on a URL written without it (a Location).
        h.send(get(&format!("{own}/x")), Role::Step).await;
        h.send(get(&format!("{other}/x")), Role::OperationStatus)
            .await;
        let own_heads = own_seen.lock().unwrap().clone();
        assert!(
            own_heads[0].contains("authorization: basic bwu6cznjcmv0"),
            "{own_heads:?}"
        );
        assert!(!other_seen.lock().unwrap()[0].contains("authorization"));
    });
}

#[test]
fn what_redaction_masks_is_kept_as_sent_for_the_traffic_only() {
    rt().block_on(async {
        // A target that echoes the run's token into a link (a SAS-like query).
        let sig = format!("sig={TOKEN}");
        let link = format!("http://127.0.0.1:9/ops/1?sv=2024-01-01&{sig}");
        let body = format!(r#"{{"nextLink":"{link}"}}"#);
        let mut raw = format!(
            "HTTP/1.1 200 OK\r\nLocation: {link}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .into_bytes();
        raw.extend_from_slice(body.as_bytes());
        let base = one_answer(raw).await;
        let ex = http(&base, true).send(get(&base), Role::Step).await;
        let r = ex.response.as_ref().unwrap();
        // Rules and reports read the redacted answer...
        assert!(!r.header("location").unwrap().contains(TOKEN));
        assert!(!r.pointer("/nextLink").unwrap().to_string().contains(TOKEN));
        assert!(!serde_json::to_string(&ex).unwrap().contains(TOKEN));
        // ...the runner sends back what the target wrote.
        assert_eq!(r.sent_header("location"), Some(link.as_str()));
        assert_eq!(
            r.sent_pointer("/nextLink").and_then(|v| v.as_str()),
            Some(link.as_str())
        );
    });
}
