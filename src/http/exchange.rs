//! An [`Exchange`]: one request and what came back (or why nothing did), already redacted.
//! Rules and reports read exchanges only; they never see a live connection or a secret.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which declared surface an exchange belongs to; rules of one surface never judge another's.
/// It comes from what the target declares (its resource types, monitors, task API), never from
/// the shape of a path alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Surface {
    /// The ARM control plane: the target's resource types, their operations and groups.
    #[default]
    Arm,
    /// A TypeSpec Azure.Core data plane with status monitors.
    DataPlane,
    /// A task-based API.
    Task,
    /// Nothing the target declares (a raw request of a scenario, a foreign host).
    Other,
}

/// Why the runner sent a request; rules use it to know which contract applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// A request a scenario step wrote.
    Step,
    /// Creating a prerequisite resource.
    Setup,
    /// GET of an Azure-AsyncOperation URL (an operation resource).
    OperationStatus,
    /// GET of a 202's Location URL.
    LocationPoll,
    /// GET of the resource while its operation runs (provisioningState polling).
    ResourcePoll,
    /// A further page of a collection (nextLink).
    NextPage,
    /// GET of a TypeSpec status monitor.
    MonitorPoll,
    /// GET of a task or of a task API's resource.
    TaskPoll,
    /// Deleting what the run created, at the end.
    Cleanup,
}

impl std::fmt::Display for Role {
    /// The role as reports name it (`operation-status`), the same word report.json uses.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Role::Step => "step",
            Role::Setup => "setup",
            Role::OperationStatus => "operation-status",
            Role::LocationPoll => "location-poll",
            Role::ResourcePoll => "resource-poll",
            Role::NextPage => "next-page",
            Role::MonitorPoll => "monitor-poll",
            Role::TaskPoll => "task-poll",
            Role::Cleanup => "cleanup",
        })
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// Body text (redacted), cut to a size fit for reports.
    pub body: String,
    pub body_bytes: usize,
    #[serde(skip)]
    pub json: Option<Value>,
    /// Why the body is not JSON, when it is not empty and does not parse.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_error: Option<String>,
    /// The cookies `Set-Cookie` set (name, value), unredacted, for the flow's own cookie jar
    /// only: never serialized (the recorded header is redacted).
    #[serde(skip)]
    pub set_cookies: Vec<(String, String)>,
    /// What the target sent where redaction changed it, for the traffic only: a value a
    /// scenario captures, or a link the runner follows, is sent back as the target wrote it
    /// (`?sig=...` and all). Never serialized; rules and reports read the redacted fields.
    #[serde(skip)]
    pub sent: Option<std::sync::Arc<Sent>>,
}

/// The parts of an answer redaction changed, as the target sent them.
#[derive(Debug, Default)]
pub struct Sent {
    pub headers: Option<Vec<(String, String)>>,
    pub json: Option<Value>,
}

impl Response {
    /// The first value of a header (case-insensitive name).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn header_all(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    }

    pub fn pointer(&self, ptr: &str) -> Option<&Value> {
        self.json.as_ref().and_then(|j| j.pointer(ptr))
    }

    /// A header as the target sent it (not redacted): for the traffic, never for a report.
    pub fn sent_header(&self, name: &str) -> Option<&str> {
        match self.sent.as_ref().and_then(|s| s.headers.as_ref()) {
            Some(h) => h
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str()),
            None => self.header(name),
        }
    }

    /// Every header as the target sent it (not redacted): for the traffic only.
    pub fn sent_headers(&self) -> &[(String, String)] {
        self.sent
            .as_ref()
            .and_then(|s| s.headers.as_deref())
            .unwrap_or(&self.headers)
    }

    /// The body as the target sent it (not redacted): for the traffic only.
    pub fn sent_json(&self) -> Option<&Value> {
        self.sent
            .as_ref()
            .and_then(|s| s.json.as_ref())
            .or(self.json.as_ref())
    }

    /// A member of the body as the target sent it: for the traffic only.
    pub fn sent_pointer(&self, ptr: &str) -> Option<&Value> {
        self.sent_json().and_then(|j| j.pointer(ptr))
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Exchange {
    /// Order in the run, for "the exchange that shows it".
    pub seq: u64,
    pub role: Role,
    #[serde(default, skip_serializing_if = "is_arm")]
    pub surface: Surface,
    pub method: String,
    pub url: String,
    pub request_headers: Vec<(String, String)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_body: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Response>,
    /// Transport failure: refused, reset, timed out, body over the cap...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub started_at: String,
    pub elapsed_ms: u64,
    /// Sent to another origin than the target's, without credentials.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub foreign: bool,
    /// Answers before this one that were the target throttling (429, or 503 with
    /// Retry-After): waited out and sent again. Never judged by the rules; the first few are
    /// kept, `throttled_times` counts them all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub throttled: Vec<Throttled>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub throttled_times: u32,
    /// Attempts before this one that got no answer of the RP's — no answer at all (reset,
    /// timeout), or a 502/503/504 without the ARM error envelope — and were sent again under
    /// `--retries`. Never judged by the rules; a test with any is reported flaky.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retried: Vec<Retried>,
    /// ARM's front door answered this request itself (the run plays ARM's part), and why: the
    /// RP did not answer within 60 s, or ARM never passes such a request on. The answer is
    /// ARM's, never judged as the RP's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub front_door: Option<String>,
}

/// An attempt that got no answer of the RP's, sent again (`--retries`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Retried {
    pub seq: u64,
    /// `no answer: connection reset`, `503 without an ARM error body`...
    pub outcome: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub body: String,
    pub started_at: String,
    pub elapsed_ms: u64,
    /// How long the client waited before sending again.
    pub waited_ms: u64,
}

/// A throttled answer, waited out before the request was sent again.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Throttled {
    pub seq: u64,
    pub status: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub body: String,
    pub started_at: String,
    /// How long the client waited before sending again.
    pub waited_ms: u64,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Exchange {
    pub fn status(&self) -> Option<u16> {
        self.response.as_ref().map(|r| r.status)
    }

    pub fn request_header(&self, name: &str) -> Option<&str> {
        self.request_headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// A short one-line description: `#12 PUT https://… → 201`.
    pub fn summary(&self) -> String {
        let outcome = match (&self.response, &self.error) {
            (Some(r), _) => r.status.to_string(),
            (None, Some(e)) => format!("error: {e}"),
            _ => "no response".into(),
        };
        format!("#{} {} {} → {}", self.seq, self.method, self.url, outcome)
    }

    /// A curl-like transcript (already redacted), bodies cut to `max_body` characters.
    pub fn transcript(&self, max_body: usize) -> String {
        let mut out = format!(
            "> {} {}  (#{}, {}, {} ms)\n",
            self.method, self.url, self.seq, self.role, self.elapsed_ms
        );
        if self.foreign {
            out.push_str("> (another origin than the target: sent without credentials)\n");
        }
        for t in &self.throttled {
            out.push_str(&format!(
                "< {} throttled (#{}, Retry-After: {}): waited {} ms and sent again; not judged\n",
                t.status,
                t.seq,
                t.retry_after.as_deref().unwrap_or("none"),
                t.waited_ms
            ));
        }
        if self.throttled_times as usize > self.throttled.len() {
            out.push_str(&format!(
                "< ... throttled {} times in all\n",
                self.throttled_times
            ));
        }
        for t in &self.retried {
            out.push_str(&format!(
                "< #{} {} after {} ms: waited {} ms and sent again (--retries); not judged\n",
                t.seq, t.outcome, t.elapsed_ms, t.waited_ms
            ));
        }
        for (k, v) in &self.request_headers {
            out.push_str(&format!("> {k}: {v}\n"));
        }
        if let Some(b) = &self.request_body {
            out.push_str(&format!(">\n{}\n", cut(b, max_body)));
        }
        match (&self.response, &self.error) {
            (Some(r), _) => {
                out.push_str(&format!("< {}\n", r.status));
                for (k, v) in &r.headers {
                    out.push_str(&format!("< {k}: {v}\n"));
                }
                if !r.body.is_empty() {
                    out.push_str(&format!("<\n{}\n", cut(&r.body, max_body)));
                }
            }
            (None, Some(e)) => out.push_str(&format!("< (no response: {e})\n")),
            _ => {}
        }
        out
    }
}

fn is_arm(s: &Surface) -> bool {
    *s == Surface::Arm
}

pub fn cut(s: &str, max: usize) -> String {
    let total = s.chars().count();
    if total <= max {
        return s.to_string();
    }
    // Never in the middle of a URL: one the cut would split is kept whole (up to 2 KiB more),
    // since half a URL names nothing a reader can open.
    let at = s.char_indices().nth(max).map_or(s.len(), |(i, _)| i);
    let start = s
        .match_indices("http")
        .map(|(i, _)| i)
        .take_while(|i| *i < at)
        .filter(|i| s[*i..].starts_with("http://") || s[*i..].starts_with("https://"))
        .last();
    let end = start
        .map(|st| {
            s[st..]
                .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`'))
                .map_or(s.len(), |e| st + e)
        })
        .filter(|e| *e > at && *e - at <= URL_SLACK)
        .unwrap_or(at);
    let head = &s[..end];
    let more = total - head.chars().count();
    if more == 0 {
        return head.to_string();
    }
    format!("{head}… ({more} more characters)")
}

/// How far past the cut a URL it would split is kept.
const URL_SLACK: usize = 2048;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_role_reads_as_report_json_names_it() {
        for role in [
            Role::Step,
            Role::Setup,
            Role::OperationStatus,
            Role::LocationPoll,
            Role::ResourcePoll,
            Role::NextPage,
            Role::MonitorPoll,
            Role::TaskPoll,
            Role::Cleanup,
        ] {
            assert_eq!(serde_json::to_value(role).unwrap(), role.to_string());
        }
    }

    #[test]
    fn a_cut_never_splits_a_url() {
        let url = "https://management.azure.com/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/w?api-version=2024-05-01";
        let text = format!("Location: {url} (another host) and more text after it");
        let c = cut(&text, 30);
        assert!(c.starts_with(&format!("Location: {url}")), "{c}");
        assert!(c.ends_with("more characters)"), "{c}");
        // Plain text is cut where asked.
        assert_eq!(cut("abcdef", 3), "abc… (3 more characters)");
        // A URL ending the text is kept whole, with nothing said to be missing.
        assert_eq!(cut(&format!("see {url}"), 10), format!("see {url}"));
    }

    #[test]
    fn transcripts_say_when_an_exchange_went_to_another_origin() {
        let mut ex = Exchange {
            seq: 3,
            role: Role::LocationPoll,
            surface: Surface::Arm,
            method: "GET".into(),
            url: "http://127.0.0.2:9/op".into(),
            request_headers: vec![("x-ms-client-request-id".into(), "c".into())],
            request_body: None,
            response: None,
            error: Some("connection failed".into()),
            started_at: String::new(),
            elapsed_ms: 1,
            foreign: true,
            throttled: Vec::new(),
            throttled_times: 0,
            retried: Vec::new(),
            front_door: None,
        };
        assert!(
            ex.transcript(100)
                .contains("another origin than the target")
        );
        ex.foreign = false;
        assert!(!ex.transcript(100).contains("another origin"));
    }
}
