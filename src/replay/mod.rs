//! Reading recorded Azure traffic, so recordings can be judged with the same rules as live runs.
//!
//! [`read_recording`] turns one file into a [`Recording`]: redacted [`Exchange`]s in wire order,
//! what the recorder is known to strip, which entries are ARM traffic and of which provider
//! namespace, and the long-running operations found in it ([`FlowSketch`]es, which also set the
//! poll roles of the exchanges). [`write_har`] writes exchanges as HAR 1.2 that reads back the
//! same.
//!
//! [`judge_recording`] judges a recording with the rule engine (`judging`): flows rebuilt by
//! [`flow_of`] as the live follower records them (`reconstruct`), against a target given or
//! inferred from the recordings ([`infer`]). The proxy uses the same pieces on passing traffic
//! ([`Pairer`], [`StreamJudge`]).
//!
//! # Formats (detected from the content; [`ReadOptions::format`] forces one)
//!
//! - **HAR 1.2** (`{"log": {"entries": [...]}}`, browser, mitmproxy or Fiddler exports, and
//!   [`write_har`]): HTTP/2 pseudo-headers (`:authority`...) are dropped; `content.encoding:
//!   base64` is decoded (for bodies that are kept); a response without `content.text` is a body the export did not keep
//!   ([`BodyState::NotRecorded`]), not an empty one; `startedDateTime` and `time` give
//!   [`Exchange::started_at`] and [`Exchange::elapsed_ms`]; status 0 is a request without a
//!   response. Portal `POST https://management.azure.com/batch` calls are unpacked: the inner
//!   `requests[]` (`httpMethod`, `url` or `relativeUrl`, `name`, `requestHeaderDetails`,
//!   `content`) are paired with the response's `responses[]` (`httpStatusCode`, `headers`,
//!   `content`, `name`) by `name`, else by position, and appended after the batch entry. A batch
//!   answered 202 is unpacked when a later GET of its Location returns the `responses`. Inner
//!   exchanges take the batch's start time; [`EntryMeta::batch`] points at the batch entry.
//!   rpconform's own HAR entries carry `_rpconform: {seq, role, foreign}`, restored on reading;
//!   in those files an ARM-shaped path on any host is ARM traffic (rpconform only talks to its
//!   target).
//! - **Azure SDK test-proxy JSON** (`{"Entries": [...], "Variables": {...}}`): header values are
//!   strings or arrays (one pair per element); bodies are JSON values, strings (the string
//!   `"null"` is a literal JSON null body), `null` (no body), or .NET's array of text lines
//!   (an array of strings whose concatenation parses as a JSON object or array is taken as
//!   lines; any other array is a JSON array body).
//! - **vcrpy YAML** (`interactions: [{request, response}]`, Azure SDK for Python up to 2021 and
//!   azure-cli; also read when serialised as JSON): header values are lists; `!!binary` bodies
//!   are decoded; the `Date` header is the only timing, so `started_at` stays empty.
//!
//! # What recorders strip ([`Stripped`])
//!
//! The engine must say "not judged", not "missing", for a header the recorder removed.
//!
//! - vcrpy (azure-devtools `ReplayableTest`), both sides: `authorization, client-request-id,
//!   retry-after, x-ms-authorization-auxiliary, x-ms-client-request-id,
//!   x-ms-correlation-request-id, x-ms-gateway-service-instanceid,
//!   x-ms-ratelimit-remaining-subscription-reads, x-ms-ratelimit-remaining-tenant-reads,
//!   x-ms-request-id, x-ms-routing-request-id, x-ms-served-by`.
//! - test-proxy, Python flavour: request `authorization`, `x-ms-client-request-id`; response
//!   `x-ms-request-id`. .NET flavour: nothing. The flavour is .NET when `Variables` holds one of
//!   .NET's keys (`SUBSCRIPTION_ID`, `RandomSeed`, `RESOURCE_MANAGER_URL`,
//!   `AZURE_AUTHORITY_HOST`) or a `User-Agent` says `azsdk-net-`, and no `User-Agent` says
//!   `azsdk-python-`; otherwise the Python set applies (unsure is treated as stripped).
//! - HAR: request `authorization`, `cookie`; response `set-cookie` (sanitised browser exports).
//!   Files written by [`write_har`] strip nothing (secrets are masked, not removed).
//! - Evidence wins: a header name that appears on a side anywhere in the file was not stripped
//!   by this recorder (the 2017 AKS cassette keeps `x-ms-request-id`), so it is removed from the
//!   set (and a note says so). Recorders strip by name whatever the host, so one occurrence is
//!   enough.
//!
//! # Secrets
//!
//! Everything goes through [`crate::http::Redactor`] (Authorization, Cookie, Set-Cookie masked by
//! name; JWT-shaped strings by shape), plus replay-specific shapes: SAS `sig=`, `code=`,
//! `client_secret=`, tokens and passwords in query strings and form bodies, passwords in URL
//! userinfo, `AccountKey=`/`Password=` in connection strings, and JSON members named like
//! secrets (`password`, `client_secret`, `access_token`, `primaryKey`...). Secret values found
//! are also registered, so an echo elsewhere in the file is masked too, except recorders'
//! placeholders (a value equal to its name, an all-zero GUID, `Sanitized`): registering those
//! would mask every subscription ID. Values under other names (a storage key listed as
//! `{"value": ...}`) are out of reach of these shapes.
//!
//! # Limits
//!
//! Files are streamed entry by entry ([`stream_recording`]; the command judges them so, in two
//! passes, never holding a file: [`streamed`]): JSON through a small structural scanner (`stream`) that
//! hands each entry's text to serde_json, and replaces any string longer than the cap with a
//! marker before it is held; YAML through yaml-rust2's event parser, one interaction at a time
//! (its memory follows the largest interaction). JSON memory follows the body cap, not the file
//! (a generated 200 MB HAR peaks near 65 MB of RSS, see `tests/replay_large_har.rs`). Bodies over [`ReadOptions::body_cap`] are dropped
//! ([`BodyState::OverCap`]); kept bodies are cut to the report size like live ones; JSON is
//! parsed only under the live client's value limit and while the recording's
//! [`ReadOptions::json_budget`] lasts. Bodies of non-ARM exchanges (a portal HAR is mostly
//! scripts) are not kept; those up to 64 KiB are parsed only to learn the secrets they hold.

mod batch;
pub(crate) mod body;
pub(crate) mod build;
mod flows;
mod har;
mod har_write;
pub mod infer;
mod judging;
mod proxy;
pub(crate) mod raw;
mod read;
mod reconstruct;
mod secrets;
mod stream;
pub mod streamed;
mod target_file;
mod top;
mod vcr;

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::http::Exchange;

pub use flows::{FlowSketch, Pairer, PollChannel, pair_flows};
pub use har_write::{HarWriter, write_har};
pub use judging::{
    NO_NAMESPACE, StreamJudge, apply_target_surfaces, engine_stripped, merge, result,
};
pub use read::{read_recording, read_recording_from, stream_recording};
pub use reconstruct::flow_of;
pub use streamed::judge_recording;
pub use target_file::target_yaml;

/// A recording format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    Har,
    TestProxy,
    Vcrpy,
}

impl Format {
    pub const ALL: [Format; 3] = [Format::Har, Format::TestProxy, Format::Vcrpy];

    /// The name used on the command line and in notes: `har`, `test-proxy`, `vcrpy`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Har => "har",
            Format::TestProxy => "test-proxy",
            Format::Vcrpy => "vcrpy",
        }
    }

    pub fn from_name(s: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == s)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How to read a recording.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// Force a format instead of detecting it; a file of another shape is an error.
    pub format: Option<Format>,
    /// Largest body kept, in bytes (the live client's `--body-cap`).
    pub body_cap: usize,
    /// Most body bytes parsed as JSON over the whole recording; later bodies keep their text
    /// but no parsed form (a note says how many).
    pub json_budget: usize,
    /// Hosts taken as ARM besides `management.azure.com`, the sovereign `management.*` hosts
    /// and loopback (lower case).
    pub arm_hosts: Vec<String>,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            format: None,
            body_cap: crate::http::HttpOptions::default().body_cap,
            json_budget: 256 * 1024 * 1024,
            arm_hosts: Vec::new(),
        }
    }
}

/// Header names (lower case) a recorder is known to remove, per side.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stripped {
    pub request: BTreeSet<String>,
    pub response: BTreeSet<String>,
}

impl Stripped {
    /// Did the recorder remove this request header (so its absence says nothing)?
    pub fn request_strips(&self, name: &str) -> bool {
        self.request.contains(&name.to_ascii_lowercase())
    }

    /// Did the recorder remove this response header (so its absence says nothing)?
    pub fn response_strips(&self, name: &str) -> bool {
        self.response.contains(&name.to_ascii_lowercase())
    }
}

/// What became of an entry's response body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyState {
    /// Kept (possibly empty), subject to the report cut.
    Recorded,
    /// The recording has no body for it (HAR without `content.text`, a non-ARM body not kept).
    NotRecorded,
    /// Over [`ReadOptions::body_cap`]: dropped. Its length in bytes, as far as the reader
    /// measured it (a string skipped unread is measured as escaped in the file, base64 text
    /// as 3/4 of its characters).
    OverCap { bytes: u64 },
}

/// Facts about one entry that the [`Exchange`] does not carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryMeta {
    /// ARM traffic the engine should judge (see [`is_arm_url`]).
    pub arm: bool,
    /// Provider namespace: the last `/providers/{ns}` of the path, or for a poll the initial
    /// request's; spelled as first seen in the file.
    pub provider: Option<String>,
    pub response_body: BodyState,
    /// Index of the `/batch` entry this exchange was unpacked from.
    pub batch: Option<usize>,
}

/// One recording file, read.
#[derive(Debug, Clone)]
pub struct Recording {
    pub path: PathBuf,
    pub format: Format,
    /// In wire order; `seq` is the position + 1 unless the file recorded its own.
    pub entries: Vec<Exchange>,
    /// One per entry.
    pub meta: Vec<EntryMeta>,
    pub stripped: Stripped,
    pub flows: Vec<FlowSketch>,
    /// What the reader noticed and did (dropped bodies, the test-proxy flavour...).
    pub notes: Vec<String>,
    /// Written by rpconform (`run --har`): roles, surfaces and sequence numbers are its own.
    pub own: bool,
}

/// A recording that cannot be read: `file:line:col: what was expected`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayError {
    pub path: PathBuf,
    /// 1-based; 0 when the problem has no position (an unreadable file).
    pub line: usize,
    pub column: usize,
    pub message: String,
    /// The file is readable but is no recording (JSON or YAML of another shape): a directory
    /// walk skips it.
    pub not_a_recording: bool,
}

impl ReplayError {
    pub(crate) fn at(path: &Path, line: usize, column: usize, message: impl Into<String>) -> Self {
        ReplayError {
            path: path.to_path_buf(),
            line,
            column,
            message: message.into(),
            not_a_recording: false,
        }
    }

    pub(crate) fn not_a_recording(mut self) -> Self {
        self.not_a_recording = true;
        self
    }
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.path.display(), self.message)
        } else {
            write!(
                f,
                "{}:{}:{}: {}",
                self.path.display(),
                self.line,
                self.column,
                self.message
            )
        }
    }
}

impl std::error::Error for ReplayError {}

/// What a streamed reading ([`stream_recording`]) learned of a whole file.
#[derive(Debug, Clone)]
pub struct Streamed {
    pub path: PathBuf,
    pub format: Format,
    /// Entries handed on.
    pub entries: usize,
    pub stripped: Stripped,
    pub notes: Vec<String>,
    pub own: bool,
}

/// Is this exchange ARM traffic (an ARM-shaped path on a management host, not sent to another
/// origin)? Token endpoints, portals and data planes are not.
pub fn is_arm_exchange(ex: &Exchange) -> bool {
    !ex.foreign && is_arm_url(&ex.url, &[])
}

/// An ARM-shaped path (`/subscriptions/...` or `/providers/...`) on `management.azure.com`, a
/// regional `*.management.azure.com`, a sovereign `management.*` host, loopback (recordings of
/// local RPs) or one of `extra_hosts`.
pub fn is_arm_url(url: &str, extra_hosts: &[String]) -> bool {
    let Ok(u) = crate::http::parse_url(url) else {
        return false;
    };
    let Some(host) = u.host_str() else {
        return false;
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let management = host == "management.azure.com"
        || host.ends_with(".management.azure.com")
        || host.starts_with("management.")
        || matches!(host.as_str(), "localhost" | "127.0.0.1" | "[::1]")
        || extra_hosts.iter().any(|h| h.eq_ignore_ascii_case(&host));
    management && arm_shaped_path(url)
}

/// Does the URL's path start with `/subscriptions/` or `/providers/` (any case)?
pub(crate) fn arm_shaped_path(url: &str) -> bool {
    crate::http::parse_url(url).is_ok_and(|u| {
        let path = u.path().to_ascii_lowercase();
        path.starts_with("/subscriptions/") || path.starts_with("/providers/")
    })
}

/// The provider namespace an ARM URL addresses: the last `/providers/{namespace}` segment of its
/// path, as spelled there. `None` when the path has none (resource groups, subscriptions).
pub fn provider_namespace(url: &str) -> Option<String> {
    let path = match crate::http::parse_url(url) {
        Ok(u) => u.path().to_string(),
        Err(_) => url.split(['?', '#']).next().unwrap_or("").to_string(),
    };
    let segs: Vec<&str> = path.split('/').collect();
    let i = segs
        .iter()
        .rposition(|s| s.eq_ignore_ascii_case("providers"))?;
    segs.get(i + 1)
        .filter(|ns| !ns.is_empty())
        .map(|ns| ns.to_string())
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_more;
