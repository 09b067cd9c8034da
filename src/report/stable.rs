//! What a finding says that stays the same from run to run: where a defect lives in the RP
//! (provider namespace, resource type, operation — [`Place`]), text with the run's random names
//! taken out ([`stable_text`]), and the user's file and line that declares that place
//! ([`Site`], recorded in [`super::RunInfo::sites`]). SARIF groups findings by it and
//! fingerprints them with it; JUnit's failure messages use the same text, so code scanning and
//! CI test tabs see one defect as the same thing in every run.
//!
//! A run's random parts are its resource names and group (they carry the run id), GUIDs (the
//! RP's operation ids), timestamps, the port of a local endpoint and exchange numbers; URLs are
//! shown as their path's shape (`/subscriptions/{subscriptionId}/.../widgets/{name}`).

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// A place in the user's files that declares part of the RP: a resource type's key in the
/// target file, or an operation of the target's OpenAPI spec.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Site {
    /// The spec operation's method (upper case); none for a target-file type (any method).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The provider namespace (as written).
    pub namespace: String,
    /// A type: its ARM type segments after the namespace (`widgets/gadgets`); a spec
    /// operation: its path's shape after the namespace (`widgets/{name}/gadgets/{name}`).
    pub shape: String,
    /// The target file's key (`widgets`) or the operation's id.
    pub label: String,
    /// The file, as the run was given it (relative to where it ran, when it is below it).
    pub file: String,
    /// 1-based; 0 when unknown.
    pub line: usize,
}

/// Where a defect lives in the RP: the part fingerprints and grouping use.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Place {
    /// The provider namespace (empty for a URL without one: a data plane, a group).
    pub namespace: String,
    /// `Microsoft.Contoso/widgets/gadgets`, or the test's type when no URL shows one.
    pub resource_type: String,
    /// `DELETE widgets/{name}/gadgets/{name}`: the method and the path's shape after the
    /// namespace (the whole path's shape without one).
    pub operation: String,
}

/// The segments of a path (no empty ones).
fn segments(path: &str) -> Vec<&str> {
    path.split('/').filter(|s| !s.is_empty()).collect()
}

/// The path of a URL (or of a path with a query), without its query.
fn path_of(url: &str) -> String {
    match crate::http::parse_url(url) {
        Ok(u) => u.path().to_string(),
        Err(_) => url.split(['?', '#']).next().unwrap_or("").to_string(),
    }
}

/// An ARM path after its last `providers/{namespace}`: (namespace, type segments, shape with
/// every name as `{name}`).
fn arm_tail(path: &str) -> Option<(String, Vec<String>, String)> {
    let segs = segments(path);
    let i = segs
        .iter()
        .rposition(|s| s.eq_ignore_ascii_case("providers"))?;
    let ns = segs.get(i + 1)?.to_string();
    let rest = &segs[i + 2..];
    let types: Vec<String> = rest.iter().step_by(2).map(|s| s.to_string()).collect();
    let shape: Vec<&str> = rest
        .iter()
        .enumerate()
        .map(|(k, s)| if k % 2 == 0 { *s } else { "{name}" })
        .collect();
    Some((ns, types, shape.join("/")))
}

/// A path with its random parts as placeholders: ARM names by their role, other segments that
/// carry the run id, a GUID or a number.
pub fn path_shape(path: &str, run_ids: &[String]) -> String {
    let segs = segments(path);
    let mut out = Vec::with_capacity(segs.len());
    let mut k = 0;
    while k < segs.len() {
        let s = segs[k];
        out.push(scrub_segment(s, run_ids));
        let low = s.to_ascii_lowercase();
        let name = match low.as_str() {
            "subscriptions" => Some("{subscriptionId}"),
            "resourcegroups" => Some("{resourceGroup}"),
            "providers" => None,
            _ => None,
        };
        if let Some(n) = name
            && k + 1 < segs.len()
        {
            out.push(n.to_string());
            k += 2;
            continue;
        }
        if low == "providers" && k + 1 < segs.len() {
            out.push(segs[k + 1].to_string());
            // Type and name alternate until the next `providers`.
            let mut j = k + 2;
            while j < segs.len() && !segs[j].eq_ignore_ascii_case("providers") {
                out.push(if (j - k) % 2 == 0 {
                    segs[j].to_string()
                } else {
                    "{name}".to_string()
                });
                j += 1;
            }
            k = j;
            continue;
        }
        k += 1;
    }
    format!("/{}", out.join("/"))
}

/// One segment of a path outside ARM's name positions.
fn scrub_segment(s: &str, run_ids: &[String]) -> String {
    let random = run_ids
        .iter()
        .any(|id| id.len() >= 4 && s.contains(id.as_str()))
        || GUID.is_match(s)
        || s.chars().filter(char::is_ascii_digit).count() >= 4;
    if random { "{id}".into() } else { s.to_string() }
}

/// Where an exchange (`method`, `url`) lives in the RP; `fallback_type` names the type when
/// the URL shows none (a data plane URL, no URL at all).
pub fn place(method: &str, url: &str, run_ids: &[String], fallback_type: &str) -> Place {
    let path = path_of(url);
    let method = method.to_ascii_uppercase();
    match arm_tail(&path) {
        Some((ns, types, shape)) => Place {
            resource_type: if types.is_empty() {
                ns.clone()
            } else {
                format!("{ns}/{}", types.join("/"))
            },
            namespace: ns,
            operation: format!("{method} {shape}"),
        },
        None => Place {
            namespace: String::new(),
            resource_type: fallback_type.to_string(),
            operation: format!("{method} {}", path_shape(&path, run_ids)),
        },
    }
}

/// `#12 202 PUT https://…` (an exchange line, [`super::render::exchange_line`]) → method, URL:
/// its last two words (the outcome before them may have spaces: `(no answer: reset)`).
pub fn split_exchange_line(line: &str) -> Option<(&str, &str)> {
    let mut words = line.rsplitn(3, ' ');
    let url = words.next()?;
    let method = words.next()?;
    (!method.is_empty() && method.chars().all(|c| c.is_ascii_alphabetic())).then_some((method, url))
}

/// The type sites' best match for a place: the type whose ARM type segments are the longest
/// prefix of the URL's (a child type before its parent, an action on its type).
pub fn site_for<'a>(sites: &'a [Site], method: &str, url: &str) -> Option<&'a Site> {
    let (ns, types, shape) = arm_tail(&path_of(url))?;
    let same_ns = |s: &&Site| s.namespace.eq_ignore_ascii_case(&ns);
    // A spec operation of that method and shape first: the spec describes this very answer.
    if let Some(s) = sites.iter().filter(same_ns).find(|s| {
        s.method
            .as_deref()
            .is_some_and(|m| m.eq_ignore_ascii_case(method))
            && spec_shape(&s.shape).eq_ignore_ascii_case(&shape)
    }) {
        return Some(s);
    }
    sites
        .iter()
        .filter(same_ns)
        .filter(|s| s.method.is_none())
        .filter(|s| {
            let st: Vec<&str> = s.shape.split('/').collect();
            st.len() <= types.len()
                && st
                    .iter()
                    .zip(&types)
                    .all(|(a, b)| a.eq_ignore_ascii_case(b))
        })
        .max_by_key(|s| s.shape.split('/').count())
}

/// A spec path template's shape after the namespace, names as `{name}`.
pub fn spec_shape(template_tail: &str) -> String {
    template_tail
        .split('/')
        .enumerate()
        .map(|(k, s)| if k % 2 == 0 { s } else { "{name}" })
        .collect::<Vec<_>>()
        .join("/")
}

/// A spec operation's (namespace, shape) from its path template, when it is an ARM path.
pub fn template_place(template: &str) -> Option<(String, String)> {
    arm_tail(template).map(|(ns, _, shape)| (ns, shape))
}

/// The sites of a target: each type's key in `file` (the target file), and, when the target
/// names its own spec (`openapi:`), each ARM operation of it.
pub fn sites_of(target: &crate::target::Target, file: &str, own_spec: bool) -> Vec<Site> {
    let mut out: Vec<Site> = target
        .types
        .iter()
        .filter_map(|t| {
            let arm = t.arm_type(target);
            let (ns, shape) = arm.split_once('/')?;
            Some(Site {
                method: None,
                namespace: ns.to_string(),
                shape: shape.to_string(),
                label: t.name.clone(),
                file: file.to_string(),
                line: t.line,
            })
        })
        .collect();
    if own_spec && let Some(specs) = &target.specs {
        out.extend(specs.operations().iter().filter_map(|op| {
            let (namespace, shape) = template_place(&op.template)?;
            Some(Site {
                method: Some(op.method.clone()),
                namespace,
                shape,
                label: op.id.clone(),
                file: op.file.clone(),
                line: op.line,
            })
        }));
    }
    out
}

static GUID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
        .expect("GUID pattern")
});

/// URLs and ARM paths in text: an origin (optional), then a path from `/subscriptions/` or
/// `/providers/`, or any path after an origin.
static URL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)(?:https?://[^\s/"'<>`]+(?:/[^\s"'<>`)\]]*)?|/(?:subscriptions|providers)/[^\s"'<>`)\]]*)"#,
    )
    .expect("URL pattern")
});

static TIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?")
        .expect("time pattern")
});

static EXCHANGE_NO: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"#\d+\b").expect("exchange number pattern"));

/// Text with the run's random parts as placeholders: URLs as their path's shape (no origin, no
/// query), GUIDs, timestamps, exchange numbers and any word holding the run id.
pub fn stable_text(text: &str, run_ids: &[String]) -> String {
    let s = URL.replace_all(text, |c: &regex::Captures<'_>| {
        let m = &c[0];
        let trail = m.len() - m.trim_end_matches(['.', ',', ';', ':']).len();
        let (url, rest) = m.split_at(m.len() - trail);
        let path = path_of(url);
        let shown = if path.is_empty() || path == "/" {
            "{endpoint}".to_string()
        } else {
            path_shape(&path, run_ids)
        };
        format!("{shown}{rest}")
    });
    let s = GUID.replace_all(&s, "{guid}");
    let s = TIME.replace_all(&s, "{time}");
    let s = EXCHANGE_NO.replace_all(&s, "#…");
    let ids: Vec<String> = run_ids
        .iter()
        .filter(|id| id.len() >= 4)
        .map(|id| regex::escape(id))
        .collect();
    if ids.is_empty() {
        return s.into_owned();
    }
    // Words holding a run id: resource and group names.
    let word = Regex::new(&format!(
        r"[A-Za-z0-9_\-]*(?:{})[A-Za-z0-9_\-]*",
        ids.join("|")
    ))
    .expect("escaped run ids");
    word.replace_all(&s, "{name}").into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(id: &str) -> Vec<String> {
        vec![id.to_string()]
    }

    const URL1: &str = "http://127.0.0.1:46429/subscriptions/00000000-0000-0000-0000-00000000c0de/resourceGroups/rpconform-oebr49/providers/Microsoft.Contoso/widgets/rpcoebr49359/gadgets/rpcoebr49613?api-version=2024-05-01";

    #[test]
    fn places_are_namespace_type_and_the_operation_shape() {
        let p = place("delete", URL1, &ids("oebr49"), "gadgets");
        assert_eq!(p.namespace, "Microsoft.Contoso");
        assert_eq!(p.resource_type, "Microsoft.Contoso/widgets/gadgets");
        assert_eq!(p.operation, "DELETE widgets/{name}/gadgets/{name}");
        let action = place(
            "POST",
            "http://h/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/w1/restart",
            &[],
            "",
        );
        assert_eq!(action.resource_type, "Microsoft.Contoso/widgets/restart");
        assert_eq!(action.operation, "POST widgets/{name}/restart");
        let plane = place(
            "GET",
            "http://127.0.0.1:9/monitors/rpcabc12342/runs/7781",
            &ids("abc123"),
            "monitors",
        );
        assert_eq!(plane.namespace, "");
        assert_eq!(plane.resource_type, "monitors");
        assert_eq!(plane.operation, "GET /monitors/{id}/runs/{id}");
    }

    #[test]
    fn exchange_lines_split_into_method_and_url() {
        assert_eq!(
            split_exchange_line("#4 (no answer: connection reset) GET http://h/x"),
            Some(("GET", "http://h/x"))
        );
        assert_eq!(split_exchange_line("#4 202 PUT u"), Some(("PUT", "u")));
        assert_eq!(split_exchange_line("nothing"), None);
    }

    #[test]
    fn stable_text_has_no_run_random_part() {
        let seen = format!(
            "Location: /subscriptions/00000000-0000-0000-0000-00000000c0de/providers/Microsoft.Contoso/locations/eastus/operationResults/9a62a393-650d-489a-8877-b994a44b2bd2?api-version=2024-05-01 — #4104 202 DELETE {URL1}; at 2026-12-02T03:42:01.123Z, name rpcoebr49359."
        );
        let s = stable_text(&seen, &ids("oebr49"));
        assert_eq!(
            s,
            "Location: /subscriptions/{subscriptionId}/providers/Microsoft.Contoso/locations/{name}/operationResults/{name} — #… 202 DELETE /subscriptions/{subscriptionId}/resourceGroups/{resourceGroup}/providers/Microsoft.Contoso/widgets/{name}/gadgets/{name}; at {time}, name {name}."
        );
        assert!(!s.contains("oebr49") && !s.contains("46429"), "{s}");
        assert_eq!(stable_text("a 4xx", &ids("oebr49")), "a 4xx");
        // A merged report: every shard's run id.
        let two = vec!["aaaa11".to_string(), "bbbb22".to_string()];
        assert_eq!(
            stable_text("rpcaaaa113 and rpcbbbb227", &two),
            "{name} and {name}"
        );
    }

    fn site(method: Option<&str>, shape: &str, label: &str) -> Site {
        Site {
            method: method.map(String::from),
            namespace: "Microsoft.Contoso".into(),
            shape: shape.into(),
            label: label.into(),
            file: "t.yaml".into(),
            line: 3,
        }
    }

    #[test]
    fn sites_match_the_spec_operation_first_then_the_deepest_type() {
        let sites = [
            site(None, "widgets", "widgets"),
            site(None, "widgets/gadgets", "gadgets"),
            site(Some("PUT"), "widgets/{widgetName}", "Widgets_Create"),
        ];
        let at = |m, u| site_for(&sites, m, u).map(|s| s.label.as_str());
        assert_eq!(at("DELETE", URL1), Some("gadgets"));
        let w = "http://h/subscriptions/s/resourceGroups/g/providers/microsoft.contoso/widgets/w1";
        assert_eq!(at("PUT", w), Some("Widgets_Create"));
        assert_eq!(at("GET", w), Some("widgets"));
        assert_eq!(at("GET", "http://h/monitors/1"), None);
        assert_eq!(
            template_place("/subscriptions/{s}/providers/Microsoft.Contoso/widgets/{w}"),
            Some(("Microsoft.Contoso".into(), "widgets/{name}".into()))
        );
    }
}
