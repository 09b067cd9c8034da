//! What the contract says of a successful answer to a write, stated as a suite would state it:
//! the expectations `rpconform probe` checks on the one request it sends.

use std::path::Path;
use std::sync::Arc;

use crate::diag::Pos;
use crate::scenario::{Check, Expectation, Predicate};

/// What the contract says of a successful answer to this method, stated as a suite would:
/// PUT-01 (200/201 or 202, with the resource; 201 on a create and 200 on a replace when the
/// probe knows which), PATCH-01 (200 or 202), DEL-01 (200, 202 or 204; a 202 with Location),
/// ACT-01 (a POST's 202 with Location), and RES-01's fields on a write's resource body when
/// the target declares no type for the URL (for a declared type the ambient check does it).
pub fn implied_expectations(
    method: &str,
    declared: bool,
    existed: Option<bool>,
) -> Vec<Expectation> {
    let file: Arc<Path> = Arc::from(Path::new("probe"));
    let pos = Pos::new(&file, 1, 1);
    let exp = |rule: &'static str, when: Option<Vec<u16>>, check: Check| Expectation {
        rules: vec![rule],
        row_rule: None,
        when_status: when,
        when_running_at: None,
        check,
        pos: pos.clone(),
    };
    let present = |pointer: &str| Check::Pointer {
        pointer: pointer.into(),
        predicate: Predicate::Present,
        ignore_case: false,
    };
    let header = |name: &str| Check::Header {
        name: name.into(),
        predicate: Predicate::Present,
        ignore_case: false,
    };
    // A refusal (4xx/5xx) is judged by the error rules, not as the wrong success code.
    let success = || Some((200..300).collect::<Vec<u16>>());
    let mut out = Vec::new();
    let body_statuses = match method {
        "PUT" => {
            let codes = match existed {
                Some(true) => vec![200, 202],
                Some(false) => vec![201, 202],
                None => vec![200, 201, 202],
            };
            out.push(exp("PUT-01", success(), Check::Status(codes)));
            out.push(exp("PUT-01", Some(vec![200, 201]), present("")));
            vec![200, 201]
        }
        "PATCH" => {
            out.push(exp("PATCH-01", success(), Check::Status(vec![200, 202])));
            out.push(exp("PATCH-01", Some(vec![200]), present("")));
            vec![200]
        }
        "DELETE" => {
            out.push(exp("DEL-01", success(), Check::Status(vec![200, 202, 204])));
            out.push(exp("DEL-01", Some(vec![202]), header("location")));
            Vec::new()
        }
        "POST" => {
            out.push(exp("ACT-01", Some(vec![202]), header("location")));
            Vec::new()
        }
        _ => Vec::new(),
    };
    if !declared && !body_statuses.is_empty() {
        for p in ["/id", "/name", "/type"] {
            out.push(exp("RES-01", Some(body_statuses.clone()), present(p)));
        }
    }
    out
}
