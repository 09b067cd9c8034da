//! What the proxy's connections share: the body type that passes through, the upstream client,
//! the jobs handed to the judging thread, and the session they judge in.

use std::sync::Mutex;
use std::time::Instant;

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;

use super::session::Session;
use super::tee::BoxError;
use crate::replay::raw::RawEntry;

/// A body passing through: streamed, never held whole.
pub(super) type ProxyBody = UnsyncBoxBody<Bytes, BoxError>;

pub(super) type Upstream = Client<hyper_rustls::HttpsConnector<HttpConnector>, ProxyBody>;

/// A body of bytes the proxy writes itself.
pub(super) fn full(b: impl Into<Bytes>) -> ProxyBody {
    Full::new(b.into())
        .map_err(|never| match never {})
        .boxed_unsync()
}

/// What the judging thread is handed, in the order it happened.
pub(super) enum Job {
    Record(Box<RawEntry>, Instant),
    Expire(Instant),
    Stop,
}

/// What every connection shares.
pub(super) struct Shared {
    pub session: Mutex<Session>,
    /// To the judging thread: answers pass on without waiting for their judgement.
    pub jobs: std::sync::mpsc::Sender<Job>,
    pub client: Upstream,
    /// The target's origin (`scheme://host[:port]`) and base path.
    pub target_base: String,
    pub target_origin: String,
    /// The proxy's own origin, as clients address it.
    pub own_origin: String,
    pub rewrite_links: bool,
    pub body_cap: usize,
    /// CONNECT tunnels passed through unjudged.
    pub tunnels: std::sync::atomic::AtomicU64,
    /// Connections closed at once because as many as the proxy serves were open.
    pub shed: std::sync::atomic::AtomicU64,
}
