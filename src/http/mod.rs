//! The HTTP layer: one reqwest client (rustls, redirects off, timeouts, a body cap) that turns
//! each request into a recorded, redacted [`Exchange`].
//!
//! Credentials go only to the target's own origin; a URL on another origin (a foreign Location,
//! say) is fetched without them, or not at all with `--no-foreign`. `redact` scrubs secrets;
//! `auth` gets and refreshes the bearer token; `front_door` plays ARM's part in front of an
//! RP's own endpoint (headers ARM adds, its public host routed, what ARM answers itself).

mod answer;
mod auth;
mod client;
mod date;
mod exchange;
pub mod front_door;
mod json_body;
mod pace;
mod parsed_url;
mod redact;
mod redact_view;

pub(crate) use answer::REPORT_BODY_CHARS;
pub use auth::{
    DEFAULT_COMMAND_REFRESH, DEFAULT_COMMAND_TIMEOUT, DEFAULT_FILE_REFRESH, TokenSource, parse_auth,
};
pub use client::{Http, HttpOptions, HttpStats, OutRequest};
pub use date::{is_imf_fixdate, parse_http_date};
pub use exchange::{Exchange, Response, Retried, Role, Sent, Surface, Throttled, cut};
pub use json_body::is_too_deep;
pub(crate) use json_body::{
    MAX_JSON_DEPTH, MAX_JSON_VALUES, json_cost, json_depth_over, json_values_over, too_deep,
};
pub use pace::Limits;
pub use parsed_url::parse_url;
pub use redact::{MASK, Redactor, SHORT_SECRET};

/// A URL without its `user:password@` part (unchanged when it has none, or is not a URL).
/// What is stored to be sent again (the journal) is stored so; the credential stays in the
/// target file, and goes only where the target's own base URL says.
pub fn without_userinfo(url: &str) -> String {
    match crate::http::parse_url(url) {
        Ok(mut u) if !u.username().is_empty() || u.password().is_some() => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.to_string()
        }
        _ => url.to_string(),
    }
}

/// A URL with any `user:password@` part replaced by the mask: userinfo is a credential,
/// wherever a URL is shown.
pub fn strip_userinfo(url: &str) -> String {
    match crate::http::parse_url(url) {
        Ok(mut u) if !u.username().is_empty() || u.password().is_some() => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            let s = u.to_string();
            match s.find("://") {
                Some(i) => format!("{}{MASK}@{}", &s[..i + 3], &s[i + 3..]),
                None => s,
            }
        }
        Ok(_) => url.to_string(),
        // Not a URL: mask anything between "//" and an "@" before the first "/".
        Err(_) => match (url.find("://"), url.find('@')) {
            (Some(i), Some(at)) if at > i && !url[i + 3..at].contains('/') => {
                format!("{}{MASK}{}", &url[..i + 3], &url[at..])
            }
            _ => url.to_string(),
        },
    }
}
