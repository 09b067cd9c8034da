//! `CONNECT host:port` (HTTPS through a forward proxy): a blind tunnel. The bytes pass
//! unchanged and unread, so HTTPS traffic through a forward proxy is not judged (interception
//! with a local CA is not implemented; use the reverse mode, where clients call the proxy over
//! plain HTTP as their endpoint). The proxy counts the tunnels and says so in its reports.

use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

use super::shared::{ProxyBody, Shared, full};

pub(super) fn connect(req: Request<Incoming>, sh: &Shared) -> Response<ProxyBody> {
    let Some(authority) = req.uri().authority().map(|a| a.to_string()) else {
        let mut r = Response::new(full(&b"rpconform proxy: CONNECT needs host:port\n"[..]));
        *r.status_mut() = StatusCode::BAD_REQUEST;
        return r;
    };
    sh.tunnels
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    tokio::spawn(async move {
        if let Ok(upgraded) = hyper::upgrade::on(req).await {
            let mut client = TokioIo::new(upgraded);
            if let Ok(mut server) = tokio::net::TcpStream::connect(&authority).await {
                let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
            }
        }
    });
    Response::new(full(bytes::Bytes::new()))
}
