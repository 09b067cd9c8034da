//! The ways to follow an operation, chosen in the order the Azure SDK's ARM poller tries them:
//! an operation resource (Azure-AsyncOperation, or a monitor's declared link), then Location,
//! then the resource's own provisioningState (PUT and PATCH only), else nothing to poll.

use crate::http::Response;

use super::{Channel, Outcome, State, Vocabulary, resolve, resource_state};

/// Where the final result of a finished operation is read (OpenAPI
/// `x-ms-long-running-operation-options.final-state-via`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FinalStateVia {
    AzureAsyncOperation,
    Location,
    OriginalUri,
    OperationLocation,
}

impl FinalStateVia {
    pub const NAMES: &'static [&'static str] = &[
        "azure-async-operation",
        "location",
        "original-uri",
        "operation-location",
    ];

    pub fn from_name(s: &str) -> Option<FinalStateVia> {
        match s.trim().to_ascii_lowercase().as_str() {
            "azure-async-operation" | "azure-asyncoperation" => {
                Some(FinalStateVia::AzureAsyncOperation)
            }
            "location" => Some(FinalStateVia::Location),
            "original-uri" => Some(FinalStateVia::OriginalUri),
            "operation-location" => Some(FinalStateVia::OperationLocation),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            FinalStateVia::AzureAsyncOperation => "azure-async-operation",
            FinalStateVia::Location => "location",
            FinalStateVia::OriginalUri => "original-uri",
            FinalStateVia::OperationLocation => "operation-location",
        }
    }
}

/// One way to follow an operation.
#[derive(Debug, Clone, PartialEq)]
pub enum Strategy {
    /// Read an operation resource (or status monitor) until its status is terminal.
    Operation {
        channel: Channel,
        url: String,
        /// The initial 202's Location: read beside the operation resource, and for the final
        /// result.
        location: Option<String>,
        /// A 200/201's Location (the resource it names): read for the final result only,
        /// where `final-state-via: location` sends the SDK.
        named: Option<String>,
        vocabulary: Vocabulary,
    },
    /// Read the Location URL until it stops answering 202, following the newest Location.
    Location { url: String },
    /// Read the resource itself until its provisioningState is terminal (PUT, PATCH).
    Body { url: String },
    /// Nothing to poll: the initial answer is the result.
    Done,
    /// The answer names how to poll, but not with a URL a client can use (a bare path, a
    /// garbage value): nothing is polled, and the rules report the header.
    Unusable { why: String },
}

/// A polling header's value an ARM client can follow: an absolute URI (characters a URL cannot
/// hold raw are percent-encoded by the resolver). A bare path is not joined to the request.
fn followable(v: &str) -> bool {
    crate::http::parse_url(v.trim()).is_ok_and(|u| u.has_host())
}

impl Strategy {
    /// How an ARM client follows this initial answer (Azure SDK `ARMPolling` order).
    pub fn arm(method: &str, request_url: &str, resp: &Response) -> Strategy {
        let link = |h: &str| {
            resp.sent_header(h)
                .filter(|v| followable(v))
                .and_then(|v| resolve(request_url, v))
        };
        let unusable = |h: &str| {
            resp.header(h)
                .filter(|v| !v.trim().is_empty() && !followable(v))
                .map(|v| format!("its {h} `{v}` is not an absolute URI: a client cannot poll it"))
        };
        // Only a 202's Location drives an operation. A Location on a 200/201 is the created
        // (or updated) resource's address (RFC 7231; 001 has a PUT answer 201/200 and be
        // polled through its provisioningState or Azure-AsyncOperation), which the SDKs read
        // as done (a Location answer other than 202 is the end): never a link to poll, beside
        // an operation resource or alone, whatever its path.
        let polled = resp.status == 202;
        let location = link("location").filter(|_| polled);
        if let Some(url) = link("azure-asyncoperation") {
            return Strategy::Operation {
                channel: Channel::AzureAsyncOperation,
                url,
                location,
                named: link("location").filter(|_| !polled),
                vocabulary: Vocabulary::arm(),
            };
        }
        if location.is_none()
            && let Some(why) =
                unusable("Azure-AsyncOperation").or_else(|| unusable("Location").filter(|_| polled))
        {
            return Strategy::Unusable { why };
        }
        if let Some(url) = location {
            return Strategy::Location { url };
        }
        if matches!(method, "PUT" | "PATCH") && matches!(resp.status, 200..=202) {
            return Strategy::Body {
                url: request_url.to_string(),
            };
        }
        Strategy::Done
    }

    /// How a client follows a data-plane operation whose status monitor is linked by `link`.
    pub fn monitor(
        link: Channel,
        request_url: &str,
        resp: &Response,
        vocabulary: Vocabulary,
    ) -> Strategy {
        let header = link.header().unwrap_or("operation-location");
        match resp
            .sent_header(header)
            .and_then(|v| resolve(request_url, v))
        {
            Some(url) => Strategy::Operation {
                channel: link,
                url,
                location: resp
                    .sent_header("location")
                    .and_then(|v| resolve(request_url, v)),
                named: None,
                vocabulary,
            },
            None => Strategy::Done,
        }
    }

    pub fn channel(&self) -> Option<Channel> {
        match self {
            Strategy::Operation { channel, .. } => Some(*channel),
            Strategy::Location { .. } => Some(Channel::Location),
            Strategy::Body { .. } => Some(Channel::Resource),
            Strategy::Done | Strategy::Unusable { .. } => None,
        }
    }

    /// The URL of the next poll.
    pub fn url(&self) -> Option<&str> {
        match self {
            Strategy::Operation { url, .. }
            | Strategy::Location { url }
            | Strategy::Body { url } => Some(url),
            Strategy::Done | Strategy::Unusable { .. } => None,
        }
    }

    /// What the initial answer says, as the SDK reads it (an operation-resource or Location
    /// strategy always polls at least once).
    pub fn initial(&self, resp: &Response) -> State {
        let ok = matches!(resp.status, 200 | 201 | 202 | 204);
        match self {
            _ if !ok => State::Done(Outcome::Failed, format!("HTTP {}", resp.status)),
            // An initial body that carries the operation's own status is read as the SDK reads
            // it (an action answered 202 with {"status": "Succeeded"} is done); anything else
            // is running until the first poll says otherwise.
            Strategy::Operation { vocabulary, .. } => {
                match vocabulary.state_of(resp.json.as_ref()) {
                    s @ State::Done(..) => s,
                    _ => State::Running(None),
                }
            }
            Strategy::Location { .. } | Strategy::Unusable { .. } => State::Running(None),
            Strategy::Body { .. } => match resp.status {
                202 => State::Running(None),
                204 => State::Done(Outcome::Succeeded, String::new()),
                201 => match super::provisioning_state(resp.json.as_ref()) {
                    None => State::Running(None),
                    Some(_) => resource_state(resp.json.as_ref()),
                },
                _ => resource_state(resp.json.as_ref()),
            },
            Strategy::Done => State::Done(Outcome::Succeeded, String::new()),
        }
    }

    /// What a poll answer says; a Location strategy moves on to the answer's newest Location.
    pub fn read(&mut self, resp: Option<&Response>) -> State {
        let Some(resp) = resp else {
            return State::Unreadable("no response".into());
        };
        let code = resp.status;
        match self {
            Strategy::Operation { vocabulary, .. } => {
                if (200..300).contains(&code) {
                    vocabulary.state_of(resp.json.as_ref())
                } else {
                    State::Unreadable(format!("HTTP {code}"))
                }
            }
            Strategy::Location { url } => {
                if let Some(next) = resp
                    .sent_header("location")
                    .filter(|v| followable(v))
                    .and_then(|v| resolve(url, v))
                {
                    *url = next;
                }
                match code {
                    202 => State::Running(None),
                    200..=299 => State::Done(Outcome::Succeeded, format!("HTTP {code}")),
                    // ARM clients retry these reads (the SDK's retry policy, below its poller).
                    408 | 429 | 500..=599 => State::Unreadable(format!("HTTP {code}, retried")),
                    _ => State::Done(Outcome::Failed, format!("HTTP {code}")),
                }
            }
            Strategy::Body { .. } => match code {
                202 => State::Running(None),
                204 => State::Done(Outcome::Succeeded, format!("HTTP {code}")),
                200 | 201 => resource_state(resp.json.as_ref()),
                _ => State::Unreadable(format!("HTTP {code}")),
            },
            Strategy::Done => State::Done(Outcome::Succeeded, String::new()),
            Strategy::Unusable { why } => State::Unreadable(why.clone()),
        }
    }
}

/// Where an SDK reads the final result once the operation succeeded (`None`: the last poll
/// answer is the result). Mirrors azure-core's `get_final_get_url` per strategy.
pub fn final_url(
    strategy: &Strategy,
    method: &str,
    request_url: &str,
    via: Option<FinalStateVia>,
    last: Option<&Response>,
) -> Option<String> {
    let Strategy::Operation {
        location,
        named,
        url,
        ..
    } = strategy
    else {
        return None;
    };
    if via == Some(FinalStateVia::Location)
        && let Some(l) = location.as_ref().or(named.as_ref())
    {
        return Some(l.clone());
    }
    if matches!(
        via,
        Some(FinalStateVia::AzureAsyncOperation | FinalStateVia::OperationLocation)
    ) && method == "POST"
    {
        return None;
    }
    if let Some(rl) = last
        .and_then(|r| r.json.as_ref())
        .and_then(|j| j.get("resourceLocation"))
        .and_then(|v| v.as_str())
        .and_then(|v| resolve(url, v))
    {
        return Some(rl);
    }
    // `original-uri` needs no rule of its own: PUT and PATCH read the request URL anyway, and
    // for a POST the SDK treats it as absent (it reads Location).
    match method {
        "PUT" | "PATCH" => Some(request_url.to_string()),
        "POST" => location.clone(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn resp(status: u16, headers: &[(&str, &str)], body: serde_json::Value) -> Response {
        Response {
            status,
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            body: body.to_string(),
            body_bytes: 0,
            json: Some(body),
            json_error: None,
            set_cookies: Vec::new(),
            sent: None,
        }
    }

    const REQ: &str = "https://h/subscriptions/s/resourceGroups/g/providers/N/t/x?api-version=1";

    #[test]
    fn strategies_are_chosen_in_the_sdk_order() {
        let both = resp(
            201,
            &[
                ("Azure-AsyncOperation", "https://h/op/1"),
                ("Location", "https://h/res/1"),
            ],
            json!({}),
        );
        assert_eq!(
            Strategy::arm("PUT", REQ, &both).channel(),
            Some(Channel::AzureAsyncOperation)
        );
        let loc = resp(202, &[("Location", "https://h/res/1")], json!(null));
        assert_eq!(
            Strategy::arm("DELETE", REQ, &loc).channel(),
            Some(Channel::Location)
        );
        let body = resp(
            201,
            &[],
            json!({"properties": {"provisioningState": "Creating"}}),
        );
        let s = Strategy::arm("PUT", REQ, &body);
        assert_eq!(s.channel(), Some(Channel::Resource));
        assert!(s.initial(&body).is_running());
        let sync = resp(
            200,
            &[],
            json!({"properties": {"provisioningState": "Succeeded"}}),
        );
        let s = Strategy::arm("PATCH", REQ, &sync);
        assert_eq!(s.initial(&sync).outcome(), Some(Outcome::Succeeded));
        assert_eq!(
            Strategy::arm("DELETE", REQ, &resp(200, &[], json!(null))),
            Strategy::Done
        );
        // A 201's Location names the resource created, never a poll link: not the resource
        // itself, not another URL, not a bare path, not beside an operation resource.
        let here = resp(201, &[("Location", REQ)], json!({}));
        assert_eq!(
            Strategy::arm("PUT", REQ, &here).channel(),
            Some(Channel::Resource)
        );
        let elsewhere = resp(201, &[("Location", "https://h/res/1")], json!({}));
        assert_eq!(
            Strategy::arm("PUT", REQ, &elsewhere).channel(),
            Some(Channel::Resource)
        );
        let bare = resp(201, &[("Location", "/subscriptions/s/x/y")], json!({}));
        assert_eq!(
            Strategy::arm("PUT", REQ, &bare).channel(),
            Some(Channel::Resource)
        );
        let created = resp(200, &[("Location", "https://h/res/1")], json!({}));
        assert_eq!(Strategy::arm("POST", REQ, &created), Strategy::Done);
        match Strategy::arm("PUT", REQ, &both) {
            Strategy::Operation { location, .. } => assert_eq!(location, None),
            s => panic!("{s:?}"),
        }
        // A 202's Location is polled, even the request's own address.
        let accepted = resp(202, &[("Location", REQ)], json!(null));
        assert_eq!(
            Strategy::arm("PUT", REQ, &accepted).channel(),
            Some(Channel::Location)
        );
    }

    #[test]
    fn location_polls_follow_the_newest_location() {
        let mut s = Strategy::Location {
            url: "https://h/op/1".into(),
        };
        let st = s.read(Some(&resp(
            202,
            &[("Location", "https://h/op/2")],
            json!(null),
        )));
        assert!(st.is_running());
        assert_eq!(s.url(), Some("https://h/op/2"));
        assert_eq!(
            s.read(Some(&resp(204, &[], json!(null)))).outcome(),
            Some(Outcome::Succeeded)
        );
        assert_eq!(
            s.read(Some(&resp(400, &[], json!({})))).outcome(),
            Some(Outcome::Failed)
        );
    }

    #[test]
    fn final_results_are_where_the_sdk_reads_them() {
        let init = resp(
            201,
            &[
                ("Azure-AsyncOperation", "https://h/op/1"),
                ("Location", "https://h/res/1"),
            ],
            json!({}),
        );
        let s = Strategy::arm("PUT", REQ, &init);
        assert_eq!(final_url(&s, "PUT", REQ, None, None).as_deref(), Some(REQ));
        assert_eq!(
            final_url(&s, "PUT", REQ, Some(FinalStateVia::Location), None).as_deref(),
            Some("https://h/res/1")
        );
        let post = Strategy::arm(
            "POST",
            REQ,
            &resp(
                202,
                &[
                    ("Azure-AsyncOperation", "https://h/op/1"),
                    ("Location", "https://h/res/1"),
                ],
                json!(null),
            ),
        );
        assert_eq!(
            final_url(&post, "POST", REQ, None, None).as_deref(),
            Some("https://h/res/1")
        );
        assert_eq!(
            final_url(
                &post,
                "POST",
                REQ,
                Some(FinalStateVia::AzureAsyncOperation),
                None
            ),
            None
        );
        assert_eq!(final_url(&post, "DELETE", REQ, None, None), None);
        let with_rl = resp(
            200,
            &[],
            json!({"status": "Succeeded", "resourceLocation": "/res/9"}),
        );
        assert_eq!(
            final_url(&post, "POST", REQ, None, Some(&with_rl)).as_deref(),
            Some("https://h/res/9")
        );
    }
}
