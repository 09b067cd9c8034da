//! The long-running-operation pattern an operation declares.
//!
//! Sources, strongest first: the declared response headers of the success responses
//! (`Azure-AsyncOperation`, `Location`), then `final-state-via`, then the status codes (ARM
//! requires `Location` on a 202). `x-ms-long-running-operation` says whether the operation is
//! long-running at all; OpenAPI 3 has no such flag (TypeSpec's `openapi3` emitter drops it), so
//! there a 202 or a polling header makes it long-running. A long-running operation with no
//! header, no `final-state-via` and no 202 states no pattern: the type then says `async: true`
//! (any ARM pattern) and the operation gets a TODO.

use super::ops::Op;

/// An ARM LRO pattern, as the target format writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pattern {
    Sync,
    AzureAsyncOperation,
    Location,
    AzureAsyncOperationLocation,
}

impl Pattern {
    pub fn word(self) -> &'static str {
        match self {
            Pattern::Sync => "sync",
            Pattern::AzureAsyncOperation => "azure-async-operation",
            Pattern::Location => "location",
            Pattern::AzureAsyncOperationLocation => "azure-async-operation+location",
        }
    }
}

/// `final-state-via` values the target format knows.
pub(crate) const FINAL_STATES: &[&str] = &[
    "azure-async-operation",
    "location",
    "original-uri",
    "operation-location",
];

/// What the spec says about one operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Lro {
    /// `None`: long-running by a pattern the spec does not state.
    pub pattern: Option<Pattern>,
    /// As stated by the spec (lower-cased), when it is one the format knows.
    pub final_state_via: Option<String>,
    /// What a reviewer should check.
    pub todo: Option<String>,
    /// Success statuses of the final answer (202 excluded), ascending.
    pub result_status: Vec<u16>,
}

impl Lro {
    pub fn long_running(&self) -> bool {
        self.pattern != Some(Pattern::Sync)
    }
}

pub(crate) fn classify(op: &Op) -> Lro {
    let codes: Vec<u16> = op.success().filter_map(|r| r.status()).collect();
    let has = |h: &str| op.success().any(|r| r.has_header(h));
    let (aao, loc, opl) = (
        has("Azure-AsyncOperation"),
        has("Location"),
        has("Operation-Location"),
    );
    let accepted = codes.contains(&202);
    let mut result_status: Vec<u16> = codes.iter().copied().filter(|&c| c != 202).collect();
    result_status.sort_unstable();
    result_status.dedup();
    let mut todos: Vec<String> = Vec::new();

    let (fsv, fsv_raw) = match &op.final_state_via {
        Some(v) => {
            let lower = v.to_ascii_lowercase();
            if FINAL_STATES.contains(&lower.as_str()) {
                (Some(lower), None)
            } else {
                (None, Some(v.clone()))
            }
        }
        None => (None, None),
    };
    if let Some(raw) = fsv_raw {
        todos.push(format!(
            "final-state-via `{raw}` is not one rpconform knows"
        ));
    }

    let long_running = match op.long_running {
        Some(flag) => flag,
        None if op.oas3 => accepted || aao || loc || opl,
        None => false,
    };
    if !long_running {
        if accepted || aao || opl {
            todos.push(
                "the spec declares a 202 or a polling header but not x-ms-long-running-operation; sync assumed"
                    .into(),
            );
        }
        return Lro {
            pattern: Some(Pattern::Sync),
            final_state_via: None,
            todo: join(todos),
            result_status,
        };
    }

    let pattern = if aao && loc {
        Some(Pattern::AzureAsyncOperationLocation)
    } else if aao {
        Some(Pattern::AzureAsyncOperation)
    } else if loc {
        Some(Pattern::Location)
    } else if opl {
        todos.push(
            "the spec declares Operation-Location, which is not an ARM pattern; check what the RP sends"
                .into(),
        );
        None
    } else {
        match fsv.as_deref() {
            Some("azure-async-operation") => {
                todos.push("no polling header declared; pattern taken from final-state-via".into());
                Some(Pattern::AzureAsyncOperation)
            }
            Some("location") => {
                todos.push("no polling header declared; pattern taken from final-state-via".into());
                Some(Pattern::Location)
            }
            _ if accepted => {
                todos.push(
                    "no polling header declared; a 202 must carry Location (ARM), check whether Azure-AsyncOperation comes too"
                        .into(),
                );
                Some(Pattern::Location)
            }
            _ => {
                todos.push(format!(
                    "long-running, but the spec declares no Azure-AsyncOperation or Location header{}: any ARM pattern accepted",
                    match &fsv {
                        Some(f) => format!(" (final-state-via {f})"),
                        None => String::new(),
                    }
                ));
                None
            }
        }
    };
    Lro {
        pattern,
        final_state_via: fsv,
        todo: join(todos),
        result_status,
    }
}

fn join(todos: Vec<String>) -> Option<String> {
    (!todos.is_empty()).then(|| todos.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::init::ops::{Method, Response};

    fn op(codes: &[(&str, &[&str])], lr: Option<bool>, fsv: Option<&str>, oas3: bool) -> Op {
        Op {
            spec: 0,
            method: Method::Put,
            path: "/x".into(),
            params: vec![],
            body_name: None,
            body_schema: None,
            responses: codes
                .iter()
                .map(|(c, h)| Response {
                    code: c.to_string(),
                    headers: h.iter().map(|s| s.to_string()).collect(),
                    schema: None,
                })
                .collect(),
            long_running: lr,
            final_state_via: fsv.map(str::to_string),
            examples: vec![],
            oas3,
        }
    }

    #[test]
    fn patterns() {
        let c = classify(&op(
            &[("200", &[]), ("201", &["Azure-AsyncOperation"])],
            Some(true),
            Some("azure-async-operation"),
            false,
        ));
        assert_eq!(c.pattern, Some(Pattern::AzureAsyncOperation));
        assert_eq!(c.final_state_via.as_deref(), Some("azure-async-operation"));
        assert_eq!(c.todo, None);
        assert_eq!(c.result_status, vec![200, 201]);

        let c = classify(&op(
            &[("202", &["location"]), ("204", &[])],
            Some(true),
            None,
            false,
        ));
        assert_eq!(c.pattern, Some(Pattern::Location));
        assert_eq!(c.result_status, vec![204]);

        let c = classify(&op(
            &[("200", &[]), ("202", &["Azure-AsyncOperation", "Location"])],
            Some(true),
            Some("Location"),
            false,
        ));
        assert_eq!(c.pattern, Some(Pattern::AzureAsyncOperationLocation));
        assert_eq!(c.final_state_via.as_deref(), Some("location"));

        let c = classify(&op(
            &[("200", &[]), ("201", &[])],
            Some(true),
            Some("original-uri"),
            false,
        ));
        assert_eq!(c.pattern, None);
        assert!(c.todo.unwrap().contains("any ARM pattern"));

        let c = classify(&op(&[("200", &[]), ("202", &[])], Some(true), None, false));
        assert_eq!(c.pattern, Some(Pattern::Location));
        assert!(c.todo.is_some());

        let c = classify(&op(&[("200", &[]), ("202", &[])], None, None, false));
        assert_eq!(c.pattern, Some(Pattern::Sync));
        assert!(c.todo.is_some());

        let c = classify(&op(&[("200", &[])], None, None, false));
        assert_eq!(
            c,
            Lro {
                pattern: Some(Pattern::Sync),
                final_state_via: None,
                todo: None,
                result_status: vec![200]
            }
        );

        // OpenAPI 3: long-running by its headers.
        let c = classify(&op(
            &[
                ("200", &[]),
                ("201", &["Azure-AsyncOperation", "Retry-After"]),
            ],
            None,
            None,
            true,
        ));
        assert_eq!(c.pattern, Some(Pattern::AzureAsyncOperation));
        let c = classify(&op(&[("200", &[])], None, None, true));
        assert_eq!(c.pattern, Some(Pattern::Sync));

        let c = classify(&op(&[("200", &[])], Some(true), Some("weird"), false));
        assert_eq!(c.final_state_via, None);
        assert!(c.todo.unwrap().contains("weird"));
    }
}
