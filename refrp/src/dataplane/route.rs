//! Paths of the data-plane surface: turns a request path under `/dataplane` into a [`Route`].
//!
//! Fixed segments and action names match case-insensitively; widget names, operation ids and
//! snapshot ids are kept as sent (percent-decoded) and matched exactly.

use crate::path::percent_decode;

/// The status monitors of the surface; each has its own path segment and naming.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Monitor {
    /// `/dataplane/operations/{id}`: the standard Azure.Core monitor.
    Operations,
    /// `/dataplane/exports/{id}`: custom terminal names (Completed / Faulted / Aborted).
    Exports,
    /// `/dataplane/analyses/{id}`: custom result fields (`success` / `failure`).
    Analyses,
    /// `/dataplane/restarts/{id}`: linked through `Location`.
    Restarts,
    /// `/dataplane/rebuilds/{id}`: linked through `Azure-AsyncOperation`.
    Rebuilds,
}

impl Monitor {
    const ALL: [Monitor; 5] = [
        Monitor::Operations,
        Monitor::Exports,
        Monitor::Analyses,
        Monitor::Restarts,
        Monitor::Rebuilds,
    ];

    /// The collection segment of the monitor's URL.
    pub fn segment(self) -> &'static str {
        match self {
            Monitor::Operations => "operations",
            Monitor::Exports => "exports",
            Monitor::Analyses => "analyses",
            Monitor::Restarts => "restarts",
            Monitor::Rebuilds => "rebuilds",
        }
    }

    fn from_segment(seg: &str) -> Option<Monitor> {
        Monitor::ALL
            .into_iter()
            .find(|m| m.segment().eq_ignore_ascii_case(seg))
    }
}

/// A long-running action on a widget: `POST /dataplane/widgets/{name}:{action}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    Export,
    Analyze,
    Restart,
    Rebuild,
    Snapshot,
}

impl Action {
    const ALL: [Action; 5] = [
        Action::Export,
        Action::Analyze,
        Action::Restart,
        Action::Rebuild,
        Action::Snapshot,
    ];

    /// The name after the `:`.
    pub fn name(self) -> &'static str {
        match self {
            Action::Export => "export",
            Action::Analyze => "analyze",
            Action::Restart => "restart",
            Action::Rebuild => "rebuild",
            Action::Snapshot => "snapshot",
        }
    }

    /// The monitor that reports the action's operation.
    pub fn monitor(self) -> Monitor {
        match self {
            Action::Export => Monitor::Exports,
            Action::Analyze => Monitor::Analyses,
            Action::Restart => Monitor::Restarts,
            Action::Rebuild => Monitor::Rebuilds,
            Action::Snapshot => Monitor::Operations,
        }
    }

    fn from_name(name: &str) -> Option<Action> {
        Action::ALL
            .into_iter()
            .find(|a| a.name().eq_ignore_ascii_case(name))
    }
}

/// Everything the data-plane surface serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `/dataplane/widgets`
    Widgets,
    /// `/dataplane/widgets/{name}`
    Widget(String),
    /// `/dataplane/widgets/{name}:{action}`
    Action(String, Action),
    /// `/dataplane/{monitor segment}/{id}`
    Monitor(Monitor, String),
    /// `/dataplane/exports/{id}/content`: what a completed export produced.
    ExportContent(String),
    /// `/dataplane/snapshots/{id}`: the final-result link of `:snapshot`.
    Snapshot(String),
}

impl Route {
    /// The methods the route answers, for 405 and `Allow`.
    pub fn allowed(&self) -> &'static str {
        match self {
            Route::Widget(_) => "GET, HEAD, PUT, DELETE",
            Route::Action(..) => "POST",
            Route::Widgets | Route::Monitor(..) | Route::ExportContent(_) | Route::Snapshot(_) => {
                "GET, HEAD"
            }
        }
    }
}

/// Whether `path` belongs to this surface (its first segment is `dataplane`).
pub fn is_dataplane(path: &str) -> bool {
    let first = path.trim_start_matches('/').split('/').next().unwrap_or("");
    first.eq_ignore_ascii_case("dataplane")
}

/// Parses a request path (no query). `None`: no such route.
pub fn parse(path: &str) -> Option<Route> {
    let trimmed = path.strip_suffix('/').unwrap_or(path);
    let segs: Vec<String> = trimmed
        .strip_prefix('/')?
        .split('/')
        .map(percent_decode)
        .collect::<Option<Vec<_>>>()?;
    if segs.iter().any(String::is_empty) || !segs[0].eq_ignore_ascii_case("dataplane") {
        return None;
    }
    let s: Vec<&str> = segs[1..].iter().map(String::as_str).collect();
    match s.as_slice() {
        [w] if w.eq_ignore_ascii_case("widgets") => Some(Route::Widgets),
        [w, item] if w.eq_ignore_ascii_case("widgets") => match item.rsplit_once(':') {
            Some((name, action)) if !name.is_empty() => {
                Some(Route::Action(name.to_string(), Action::from_name(action)?))
            }
            Some(_) => None,
            None => Some(Route::Widget(item.to_string())),
        },
        [seg, id] if seg.eq_ignore_ascii_case("snapshots") => Some(Route::Snapshot(id.to_string())),
        [seg, id] => Some(Route::Monitor(Monitor::from_segment(seg)?, id.to_string())),
        [seg, id, content]
            if seg.eq_ignore_ascii_case("exports") && content.eq_ignore_ascii_case("content") =>
        {
            Some(Route::ExportContent(id.to_string()))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes() {
        assert_eq!(parse("/dataplane/widgets"), Some(Route::Widgets));
        assert_eq!(
            parse("/DataPlane/Widgets/w1/"),
            Some(Route::Widget("w1".into()))
        );
        assert_eq!(
            parse("/dataplane/widgets/w1:Export"),
            Some(Route::Action("w1".into(), Action::Export))
        );
        assert_eq!(
            parse("/dataplane/widgets/w1%3Asnapshot"),
            Some(Route::Action("w1".into(), Action::Snapshot))
        );
        assert_eq!(
            parse("/dataplane/analyses/Op-1"),
            Some(Route::Monitor(Monitor::Analyses, "Op-1".into()))
        );
        assert_eq!(
            parse("/dataplane/exports/x/content"),
            Some(Route::ExportContent("x".into()))
        );
        assert_eq!(
            parse("/dataplane/snapshots/s"),
            Some(Route::Snapshot("s".into()))
        );
        assert!(is_dataplane("/DATAPLANE/x") && !is_dataplane("/dataplanes"));
    }

    #[test]
    fn unknown_paths() {
        for p in [
            "/dataplane",
            "/dataplane/",
            "/dataplane/things/x",
            "/dataplane/widgets/w:fly",
            "/dataplane/widgets/:export",
            "/dataplane/widgets/w/x",
            "/dataplane//widgets",
            "/dataplane/operations/a/b",
            "/dataplane/widgets/%ZZ",
        ] {
            assert_eq!(parse(p), None, "{p}");
        }
    }
}
