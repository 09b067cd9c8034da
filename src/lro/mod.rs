//! Long-running operations as the Azure SDK pollers follow them: which channel a response
//! offers, what a poll answer says, where the final result is, how long to wait. This is
//! protocol knowledge shared by every front end that follows or reconstructs an operation (the
//! live runner, replay, the proxy); no contract rule is judged here.
//!
//! [`Strategy`] is modelled on azure-core's `LROBasePolling` strategies and the Go SDK's
//! pollers: one variant per pattern (operation resource, Location, the resource's own
//! provisioningState, nothing to poll), each saying whether it can follow a response, where to
//! poll next, the [`State`] an answer shows, and where the final result is. [`Vocabulary`] says
//! how a status is spelled (ARM's Succeeded/Failed/Canceled, or a monitor's custom names).

mod strategy;
mod timing;

pub use strategy::{FinalStateVia, Strategy, final_url};
pub use timing::{retry_after, retry_after_secs};

use serde_json::Value;

/// How an operation is reported to its client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Channel {
    /// An operation resource named by the `Azure-AsyncOperation` header.
    AzureAsyncOperation,
    /// A status monitor named by the `Operation-Location` header (TypeSpec Azure.Core).
    OperationLocation,
    /// A `Location` URL that answers 202 until the operation ends, then its result.
    Location,
    /// The resource itself, through its `properties.provisioningState`.
    Resource,
}

impl Channel {
    pub fn header(self) -> Option<&'static str> {
        match self {
            Channel::AzureAsyncOperation => Some("azure-asyncoperation"),
            Channel::OperationLocation => Some("operation-location"),
            Channel::Location => Some("location"),
            Channel::Resource => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Channel::AzureAsyncOperation => "azure-asyncoperation",
            Channel::OperationLocation => "operation-location",
            Channel::Location => "location",
            Channel::Resource => "resource",
        }
    }
}

/// How an operation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Outcome {
    Succeeded,
    Failed,
    Canceled,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Succeeded => "Succeeded",
            Outcome::Failed => "Failed",
            Outcome::Canceled => "Canceled",
        }
    }

    /// The ARM terminal value, compared case-insensitively as the Azure SDKs do.
    pub fn of_arm(s: &str) -> Option<Outcome> {
        match s.to_ascii_lowercase().as_str() {
            "succeeded" => Some(Outcome::Succeeded),
            "failed" => Some(Outcome::Failed),
            "canceled" => Some(Outcome::Canceled),
            _ => None,
        }
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one answer says about an operation.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "state", content = "value", rename_all = "kebab-case")]
pub enum State {
    /// Still running; the status value when the answer gave one.
    Running(Option<String>),
    /// Ended; the value as the answer spelled it.
    Done(Outcome, String),
    /// The answer says nothing usable (no response, no status, an error status).
    Unreadable(String),
}

/// As a reader reads it: the status value the answer gave (`InProgress`, `Succeeded`), or why
/// it showed none (`no answer`, `HTTP 500`).
impl std::fmt::Display for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            State::Running(Some(s)) => f.write_str(s),
            State::Running(None) => f.write_str("running (no status value)"),
            State::Done(o, s) if s.is_empty() => write!(f, "{} (no status value)", o.as_str()),
            State::Done(_, s) => f.write_str(s),
            State::Unreadable(why) if why == "no response" => f.write_str("no answer"),
            State::Unreadable(why) => write!(f, "unreadable ({why})"),
        }
    }
}

impl State {
    pub fn is_running(&self) -> bool {
        matches!(self, State::Running(_))
    }

    pub fn outcome(&self) -> Option<Outcome> {
        match self {
            State::Done(o, _) => Some(*o),
            _ => None,
        }
    }
}

/// How a status field is named and spelled.
#[derive(Debug, Clone, PartialEq)]
pub struct Vocabulary {
    /// The field holding the status (a top-level key).
    pub field: String,
    pub succeeded: Vec<String>,
    pub failed: Vec<String>,
    pub canceled: Vec<String>,
}

impl Vocabulary {
    /// ARM's operation resource: `status` with Succeeded / Failed / Canceled.
    pub fn arm() -> Vocabulary {
        Vocabulary {
            field: "status".into(),
            succeeded: vec!["Succeeded".into()],
            failed: vec!["Failed".into()],
            canceled: vec!["Canceled".into()],
        }
    }

    /// The terminal outcome a value names (case-insensitively), if any.
    pub fn outcome_of(&self, value: &str) -> Option<Outcome> {
        let hit = |l: &[String]| l.iter().any(|s| s.eq_ignore_ascii_case(value));
        if hit(&self.succeeded) {
            Some(Outcome::Succeeded)
        } else if hit(&self.failed) {
            Some(Outcome::Failed)
        } else if hit(&self.canceled) {
            Some(Outcome::Canceled)
        } else {
            None
        }
    }

    /// The state a status body shows.
    pub fn state_of(&self, body: Option<&Value>) -> State {
        match body
            .and_then(|b| b.get(&self.field))
            .and_then(Value::as_str)
        {
            Some(s) => match self.outcome_of(s) {
                Some(o) => State::Done(o, s.to_string()),
                None => State::Running(Some(s.to_string())),
            },
            None => State::Unreadable(format!("no string `{}` in the answer", self.field)),
        }
    }
}

/// `properties.provisioningState` of a resource body.
pub fn provisioning_state(body: Option<&Value>) -> Option<&str> {
    body.and_then(|b| b.pointer("/properties/provisioningState"))
        .and_then(Value::as_str)
}

/// The state a resource body shows through its provisioningState (absent reads as Succeeded).
pub fn resource_state(body: Option<&Value>) -> State {
    match provisioning_state(body) {
        None => State::Done(Outcome::Succeeded, String::new()),
        Some(s) => match Outcome::of_arm(s) {
            Some(o) => State::Done(o, s.to_string()),
            None => State::Running(Some(s.to_string())),
        },
    }
}

/// A link from a response made absolute against the request URL, as a client would use it.
/// Characters a URL cannot hold raw (a space in `East US`) are percent-encoded rather than
/// refused: clients do so, and the rules report the malformed value separately.
pub fn resolve(base: &str, link: &str) -> Option<String> {
    let link = link.trim();
    if link.is_empty() {
        return None;
    }
    let base = crate::http::parse_url(base).ok();
    let joined = match &base {
        Some(b) => b.join(link).ok(),
        None => crate::http::parse_url(link).ok(),
    };
    joined.map(|u| u.to_string())
}

/// Is this value an absolute URI (a scheme and a host), as written, with nothing to repair?
pub fn is_absolute_uri(v: &str) -> bool {
    !v.chars().any(|c| c.is_whitespace() || c.is_control())
        && crate::http::parse_url(v).is_ok_and(|u| u.has_host())
}

/// Do these two links name one endpoint: the same path (as [`path_key`] compares it) and the
/// same query parameters, in any order? A query may decide which endpoint answers (Compute's
/// Location is its Azure-AsyncOperation URL plus `?monitor=true`): such links are two
/// channels, each read for what it says.
pub fn same_endpoint(a: &str, b: &str) -> bool {
    let query = |u: &str| {
        let mut q: Vec<(String, String)> = crate::http::parse_url(u)
            .map(|u| {
                u.query_pairs()
                    .map(|(k, v)| (k.to_ascii_lowercase(), v.to_ascii_lowercase()))
                    .collect()
            })
            .unwrap_or_default();
        q.sort();
        q
    };
    path_key(a) == path_key(b) && query(a) == query(b)
}

/// A URL's path, lower-cased, percent-escapes decoded (but `%2F`, which would move a segment
/// boundary), without a trailing slash: for comparing addresses. `%24default` and `$default`,
/// `West%20US` and `West US`, an upper-case GUID and its lower-case form are one address.
pub fn path_key(url: &str) -> String {
    let path = url_path(url);
    let path = path.trim_end_matches('/');
    if !path.contains('%') {
        return path.to_ascii_lowercase();
    }
    decode_path(path).to_lowercase()
}

/// Percent-escapes decoded, except `%2F` (kept as written, upper-cased) and escapes that do
/// not decode to UTF-8 text (kept as written).
fn decode_path(path: &str) -> String {
    let b = path.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            let byte = h * 16 + l;
            if byte == b'/' {
                out.extend_from_slice(b"%2F");
            } else {
                out.push(byte);
            }
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| path.to_string())
}

/// A URL's path as the URL standard reads it; a URL that does not parse is cut at `?`.
/// Every exchange asks this several times: a plain `http(s)://host/path` is read directly
/// (nothing in it that parsing would change), anything else goes through the parser.
///
/// Behind a gateway (a base URL with a path prefix, [`set_base_path`]) the prefix is taken off:
/// what the rules compare is the ARM path, the one resource ids are written in.
pub fn url_path(url: &str) -> std::borrow::Cow<'_, str> {
    let path = match plain_path(url) {
        Some(p) => std::borrow::Cow::Borrowed(p),
        None => std::borrow::Cow::Owned(
            crate::http::parse_url(url)
                .map(|u| u.path().to_string())
                .unwrap_or_else(|_| url.split('?').next().unwrap_or(url).to_string()),
        ),
    };
    match BASE_PATH.get().filter(|b| !b.is_empty()) {
        Some(prefix) => match strip_base(&path, prefix) {
            Some(rest) => std::borrow::Cow::Owned(rest.to_string()),
            None => path,
        },
        None => path,
    }
}

/// The path prefix of the RP under test, lower-cased, without a trailing slash.
static BASE_PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// The base URL's path prefix of the one target this process talks to (`/rp/v1` when the RP
/// is served behind a gateway): set once, before anything is judged, by the command that
/// reads the target. Never set, paths are read whole.
pub fn set_base_path(prefix: &str) {
    let _ = BASE_PATH.set(prefix.trim_end_matches('/').to_ascii_lowercase());
}

/// `path` after `prefix` (lower case) at a segment boundary, letter case aside; `/` for the
/// prefix itself.
fn strip_base<'p>(path: &'p str, prefix: &str) -> Option<&'p str> {
    let head = path.get(..prefix.len())?;
    if !head.eq_ignore_ascii_case(prefix) {
        return None;
    }
    match path.as_bytes().get(prefix.len()) {
        None => Some("/"),
        Some(b'/') => Some(&path[prefix.len()..]),
        _ => None,
    }
}

/// The bytes `url`'s parser keeps as they are in a path: letters, digits and
/// `-._~!$&'()*+,;=:@/`, as a table (a lookup per byte, not a scan of the list).
const KEPT_AS_IS: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = (b as u8).is_ascii_alphanumeric();
        b += 1;
    }
    let others = b"-._~!$&'()*+,;=:@/";
    let mut i = 0;
    while i < others.len() {
        t[others[i] as usize] = true;
        i += 1;
    }
    t
};

/// The path of an `http(s)` URL whose path has only characters the parser keeps as they are
/// and no `.`/`..` segment; `None` for anything else.
fn plain_path(url: &str) -> Option<&str> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    let slash = rest.find('/')?;
    let authority = &rest[..slash];
    if authority.is_empty()
        || authority
            .bytes()
            .any(|b| !b.is_ascii_alphanumeric() && !b".-:".contains(&b))
    {
        return None;
    }
    let tail = &rest[slash..];
    // Bytes, not chars: this runs on every URL a run reads, many times per exchange.
    let path = &tail[..memchr::memchr2(b'?', b'#', tail.as_bytes()).unwrap_or(tail.len())];
    let plain = path.bytes().all(|b| KEPT_AS_IS[usize::from(b)])
        && !path
            .as_bytes()
            .split(|b| *b == b'/')
            .any(|s| s == b"." || s == b"..");
    plain.then_some(path)
}

/// The resource an operation acts on: the URL itself, or its parent for a POST action.
pub fn resource_of(method: &str, url: &str) -> Option<String> {
    let bare = url
        .split('?')
        .next()
        .unwrap_or(url)
        .trim_end_matches('/')
        .to_string();
    match method {
        "PUT" | "PATCH" | "DELETE" => Some(bare),
        "POST" => bare.rsplit_once('/').map(|(p, _)| p.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn addresses_equal_after_decoding_and_case_folding_are_one() {
        use super::path_key;
        let a = "https://h/subscriptions/S/resourceGroups/RG/providers/Microsoft.Web/sites/s/config/%24default?api-version=1";
        let b = "https://h/subscriptions/s/resourcegroups/rg/providers/microsoft.web/sites/s/config/$default";
        assert_eq!(path_key(a), path_key(b));
        assert_eq!(
            path_key("https://h/locations/West%20US/x/"),
            path_key("https://h/locations/west us/x")
        );
        assert_eq!(
            path_key("/subscriptions/AB-CD/x"),
            path_key("/subscriptions/ab-cd/x")
        );
        // An encoded slash stays inside its segment; a stray % stays as written.
        assert_ne!(path_key("https://h/a%2Fb"), path_key("https://h/a/b"));
        assert_eq!(path_key("https://h/100%"), "/100%");
        assert_eq!(path_key("https://h/%zz"), "/%zz");
    }

    #[test]
    fn a_query_that_picks_another_endpoint_makes_another_link() {
        use super::same_endpoint;
        let aao = "https://h/subscriptions/s/providers/Microsoft.Compute/locations/eastus/operations/op1?api-version=2024-07-01";
        assert!(same_endpoint(aao, aao));
        // The same parameters in another order and case: one endpoint.
        assert!(same_endpoint(
            "https://h/x/op1?b=2&api-version=1",
            "https://H/X/OP1?API-VERSION=1&b=2"
        ));
        // Compute's Location: the status URL plus `monitor=true` is another endpoint.
        assert!(!same_endpoint(aao, &format!("{aao}&monitor=true")));
        assert!(!same_endpoint(
            aao,
            "https://h/subscriptions/s/providers/Microsoft.Compute/locations/eastus/operationResults/op1?api-version=2024-07-01"
        ));
    }

    #[test]
    fn url_path_reads_plain_urls_as_the_parser_does() {
        for u in [
            "http://127.0.0.1:8080/subscriptions/s/resourceGroups/g/providers/N/w/a?api-version=1",
            "https://management.azure.com/subscriptions/s/providers/N/locations/l/operationStatuses/x.1",
            "https://h/a/b/",
            "https://h",
            "https://h/a/./b",
            "https://h/a/../b",
            "https://h/a%2Fb/c",
            "https://h/a b",
            "https://user:pw@h/a",
            "https://[::1]:80/a",
            "https://h/a#frag",
            "HTTPS://H/A",
            "/relative/path?x=1",
            "https://h/caf\u{e9}",
        ] {
            let parsed = url::Url::parse(u)
                .map(|x| x.path().to_string())
                .unwrap_or_else(|_| u.split('?').next().unwrap_or(u).to_string());
            assert_eq!(url_path(u), parsed, "{u}");
        }
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn arm_terminal_values_compare_case_insensitively() {
        let v = Vocabulary::arm();
        assert_eq!(
            v.state_of(Some(&json!({"status": "failed"}))),
            State::Done(Outcome::Failed, "failed".into())
        );
        assert!(
            v.state_of(Some(&json!({"status": "Dequeued"})))
                .is_running()
        );
        assert!(matches!(v.state_of(Some(&json!({}))), State::Unreadable(_)));
        // "Cancelled" and "Completed" are running values on the ARM surface.
        assert!(
            v.state_of(Some(&json!({"status": "Cancelled"})))
                .is_running()
        );
    }

    #[test]
    fn links_resolve_leniently() {
        let base = "https://h/subscriptions/s/x?api-version=1";
        assert_eq!(resolve(base, "/ops/1").as_deref(), Some("https://h/ops/1"));
        assert_eq!(
            resolve(base, "https://h/locations/East US/ops/1").as_deref(),
            Some("https://h/locations/East%20US/ops/1")
        );
        assert!(!is_absolute_uri("https://h/locations/East US/ops/1"));
        assert!(is_absolute_uri("https://h/ops/1"));
        assert!(!is_absolute_uri("/ops/1"));
    }

    #[test]
    fn resource_state_reads_absent_as_succeeded() {
        assert_eq!(
            resource_state(Some(&json!({}))).outcome(),
            Some(Outcome::Succeeded)
        );
        assert!(
            resource_state(Some(
                &json!({"properties": {"provisioningState": "RegisteringDns"}})
            ))
            .is_running()
        );
    }
}
