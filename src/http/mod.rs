//! The HTTP layer: one reqwest client (rustls, redirects off, timeouts, a body cap) that turns
//! each request into a recorded, redacted [`Exchange`].
//!
//! Credentials go only to the target's own origin; a URL on another origin (a foreign Location,
//! say) is fetched without them, or not at all with `--no-foreign`. `redact` scrubs secrets;
//! `auth` gets and refreshes the bearer token.

mod auth;
mod client;
mod exchange;
mod redact;

pub use auth::{
    DEFAULT_COMMAND_REFRESH, DEFAULT_COMMAND_TIMEOUT, DEFAULT_FILE_REFRESH, TokenSource, parse_auth,
};
pub use client::{Http, HttpOptions, OutRequest};
pub use exchange::{Exchange, Response, Role, cut};
pub use redact::{MASK, Redactor, SHORT_SECRET};
