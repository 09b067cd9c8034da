//! Reading a target file (YAML) into a [`Target`], with every mistake positioned: the top level
//! here, resource types in `types`, status monitors and task APIs in `surfaces`.

mod secrets;
mod surfaces;
mod types;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use marked_yaml::Node;
use regex::Regex;

use super::{Auth, Namespace, ResourceGroup, Target, is_guid};
use crate::diag::{Diagnostic, Report};
use crate::rules::catalogue::Profile;
use crate::yaml::{Map, Reader, parse};

const TOP_KEYS: &[&str] = &[
    "base_url",
    "auth",
    "secret_headers",
    "headers",
    "subscription",
    "resource_group",
    "profiles",
    "namespace",
    "api_version",
    "namespaces",
    "location",
    "deadline",
    "identity",
    "types",
    "monitors",
    "tasks",
    "arm_paths",
    "openapi",
    "subject",
    "front_door",
];

/// Read and parse a target file from disk.
pub fn load_target(path: &Path) -> Result<Target, Report> {
    let mut report = Report::default();
    let text = match crate::yaml::read_text(path, crate::yaml::MAX_SOURCE_BYTES) {
        Ok(t) => t,
        Err(e) => {
            let file: Arc<Path> = Arc::from(path);
            report.push(Diagnostic::new(
                crate::diag::Pos::new(&file, e.line, e.col),
                format!("cannot read target file: {e}"),
            ));
            return Err(report);
        }
    };
    parse_target(path, &text, &path.display().to_string())
}

/// Parse target YAML; `label` names the target in reports. No diagnostic shows a secret of
/// the file (see [`secrets`]).
pub fn parse_target(path: &Path, text: &str, label: &str) -> Result<Target, Report> {
    parse_target_unscrubbed(path, text, label).map_err(|mut report| {
        secrets::FileSecrets::of(text).scrub(&mut report);
        report
    })
}

fn parse_target_unscrubbed(path: &Path, text: &str, label: &str) -> Result<Target, Report> {
    let file: Arc<Path> = Arc::from(path);
    let mut report = Report::default();
    report.add_source(path, Arc::from(text));
    let root = match parse(&file, text) {
        Ok(n) => n,
        Err(d) => {
            report.push(d);
            return Err(report);
        }
    };
    let mut r = Reader::new(file);
    let target = read_target(&mut r, &root, label);
    report.extend(r.diags);
    match target {
        Some(t) if report.is_empty() => Ok(t),
        _ => Err(report),
    }
}

/// ARM api-versions: `YYYY-MM-DD`, optionally with a suffix such as `-preview`.
fn api_version_ok(v: &str) -> bool {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])(-[A-Za-z][A-Za-z0-9.]*)?$")
            .expect("valid regex")
    })
    .is_match(v)
}

/// Provider namespaces: `Company.Service` (dot-separated words).
fn namespace_ok(v: &str) -> bool {
    let parts: Vec<&str> = v.split('.').collect();
    parts.len() >= 2
        && parts.iter().all(|p| {
            p.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && p.chars().all(|c| c.is_ascii_alphanumeric())
        })
}

pub(super) fn api_version(r: &mut Reader, n: &Node, what: &str) -> Option<String> {
    let v = r.string(n, what)?;
    if !api_version_ok(&v) {
        r.error(
            n,
            format!("{what} `{v}` is not an ARM api-version"),
            Some(
                "YYYY-MM-DD, optionally with a suffix: \"2024-05-01\", \"2024-09-01-preview\""
                    .into(),
            ),
        );
        return None;
    }
    Some(v)
}

fn namespace(r: &mut Reader, n: &Node, what: &str) -> Option<String> {
    let v = r.string(n, what)?;
    if !namespace_ok(&v) {
        r.error(
            n,
            format!("{what} `{v}` is not a provider namespace"),
            Some("Company.Service, such as Microsoft.Contoso".into()),
        );
        return None;
    }
    Some(v)
}

/// A key the target file must have: its node, or an error at the top when it is missing.
fn required<'n>(r: &mut Reader, m: &Map<'n>, root: &Node, key: &str) -> Option<&'n Node> {
    let n = m.get(key);
    if n.is_none() {
        r.error(
            root,
            format!("missing key `{key}` in the target file"),
            None,
        );
    }
    n
}

/// A key required only when `needed` (the target declares ARM resource types).
fn required_if<'n>(
    r: &mut Reader,
    m: &Map<'n>,
    root: &Node,
    key: &str,
    needed: bool,
) -> Option<&'n Node> {
    if needed {
        required(r, m, root, key)
    } else {
        m.get(key)
    }
}

/// `base_url`: an absolute http(s) URL without query or fragment.
fn read_base_url(r: &mut Reader, n: &Node) -> Option<url::Url> {
    let b = r.string(n, "base_url")?;
    match crate::http::parse_url(&b) {
        // A query or fragment would be glued to every path the run builds: refused.
        Ok(u) if u.query().is_some() || u.fragment().is_some() => {
            r.error(
                n,
                format!(
                    "base_url `{}` has a {}: every URL the run builds is this base followed by a path",
                    crate::http::strip_userinfo(&b),
                    if u.query().is_some() { "query (`?...`)" } else { "fragment (`#...`)" }
                ),
                Some("https://host[:port][/path/prefix]".into()),
            );
            None
        }
        // Userinfo is allowed (reqwest sends it as Basic); the redactor masks it everywhere.
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => Some(u),
        _ => {
            r.error(
                n,
                format!(
                    "base_url `{}` is not an absolute http(s) URL",
                    crate::http::strip_userinfo(&b)
                ),
                Some("https://host[:port]".into()),
            );
            None
        }
    }
}

/// `subscription`: a GUID.
fn read_subscription(r: &mut Reader, n: &Node) -> Option<String> {
    let s = r.string(n, "subscription")?;
    if !is_guid(&s) {
        r.error(
            n,
            format!("subscription `{s}` is not a GUID"),
            Some("00000000-0000-0000-0000-000000000000".into()),
        );
        return None;
    }
    Some(s)
}

/// `namespaces`: more provider namespaces, each with its `api_version`, appended to `out`
/// (which holds the top-level namespace, if any).
fn read_namespaces(r: &mut Reader, n: &Node, out: &mut Vec<Namespace>) {
    let Some(nm) = r.free_map(n, "namespaces") else {
        return;
    };
    for (k, v) in nm.entries() {
        let Some(name) = namespace(r, &k, "namespace") else {
            continue;
        };
        let Some(vm) = r.map(v, &format!("namespace `{name}`"), &["api_version"]) else {
            continue;
        };
        let version = match vm.get("api_version") {
            Some(x) => api_version(r, x, "api_version"),
            None => {
                r.error(
                    v,
                    format!("namespace `{name}` needs an `api_version`"),
                    None,
                );
                None
            }
        };
        if out
            .iter()
            .any(|x: &Namespace| x.name.eq_ignore_ascii_case(&name))
        {
            r.error(&k, format!("namespace `{name}` is declared twice"), None);
        } else if let Some(api_version) = version {
            out.push(Namespace { name, api_version });
        }
    }
}

/// The profiles a target without `profiles:` implies by what it declares — ARM types (or ARM
/// paths) the ARM contract, monitors the Azure.Core LRO profile, a task API the task profile —
/// with the implied ones named for the report.
fn implied_profiles(m: &Map) -> (Vec<Profile>, Vec<String>) {
    let (mut out, mut implied) = (Vec::new(), Vec::new());
    if m.has("types") || m.has("arm_paths") || !(m.has("monitors") || m.has("tasks")) {
        out.push(Profile::Arm);
    }
    if m.has("monitors") {
        out.push(Profile::AzureCoreLro);
        implied.push(format!("{} (monitors)", Profile::AzureCoreLro.name()));
    }
    if m.has("tasks") {
        out.push(Profile::TaskApi);
        implied.push(format!("{} (tasks)", Profile::TaskApi.name()));
    }
    (out, implied)
}

/// `profiles`: profile names, each once.
fn read_profiles(r: &mut Reader, n: &Node) -> Vec<Profile> {
    let mut out = Vec::new();
    for (p, pos) in r.strings(n, "a profile name") {
        match Profile::from_name(&p) {
            Some(x) if !out.contains(&x) => out.push(x),
            Some(_) => {}
            None => {
                let names: Vec<&str> = Profile::ALL.iter().map(|p| p.name()).collect();
                r.diags.push(
                    Diagnostic::new(pos, format!("unknown profile `{p}`"))
                        .expected(names.join(", ")),
                );
            }
        }
    }
    out
}

/// `deadline`: seconds, five minutes when absent.
fn read_deadline(r: &mut Reader, n: Option<&Node>) -> Duration {
    n.and_then(|n| {
        r.seconds(
            n,
            "deadline",
            super::MAX_DEADLINE_SECS,
            super::MAX_DEADLINE_TEXT,
        )
    })
    .map(Duration::from_secs)
    .unwrap_or(Duration::from_secs(300))
}

/// `secret_headers`: header names (lowercased) whose values the reports never show.
fn read_secret_headers(r: &mut Reader, n: &Node) -> Vec<String> {
    r.strings(n, "a header name")
        .into_iter()
        .map(|(s, _)| s.to_ascii_lowercase())
        .collect()
}

/// `headers`: name → value, sent with every request.
fn read_headers(r: &mut Reader, n: &Node) -> Vec<(String, String)> {
    let mut headers = Vec::new();
    let Some(hm) = r.free_map(n, "headers") else {
        return headers;
    };
    for (k, v) in hm.entries() {
        let key = k
            .as_scalar()
            .map(|s| s.as_str().to_string())
            .unwrap_or_default();
        if let Some(val) = r.string(v, "a header value") {
            headers.push((key, val));
        }
    }
    headers
}

/// `subject`: NAME@VERSION, the RP build under test.
fn read_subject(r: &mut Reader, n: &Node) -> Option<String> {
    let v = r.string(n, "subject")?;
    match super::check_subject(&v) {
        Ok(()) => Some(v),
        Err(e) => {
            r.error(
                n,
                e,
                Some("NAME@VERSION, the RP build under test (contoso-rp@1.4.2)".into()),
            );
            None
        }
    }
}

/// `identity`: the `tenant` and `client` the run acts as.
fn read_identity(r: &mut Reader, n: &Node) -> Option<(String, String)> {
    let im = r.map(n, "identity", &["tenant", "client"])?;
    let t = im.get("tenant").and_then(|x| r.string(x, "tenant"));
    let c = im.get("client").and_then(|x| r.string(x, "client"));
    match (t, c) {
        (Some(t), Some(c)) => Some((t, c)),
        _ => {
            r.error(n, "identity needs both `tenant` and `client`", None);
            None
        }
    }
}

/// `resource_group`: required where the target declares ARM types; a data plane has none.
fn read_resource_group(
    r: &mut Reader,
    n: Option<&Node>,
    root: &Node,
    arm_declared: bool,
) -> Option<ResourceGroup> {
    match n {
        Some(n) => read_rg(r, n),
        None if !arm_declared => Some(ResourceGroup {
            name: String::new(),
            create: false,
            disposable: false,
            api_version: "2021-04-01".into(),
        }),
        None => {
            r.error(
                root,
                "missing key `resource_group` in the target file",
                Some("resource_group: {name: my-rg}".into()),
            );
            None
        }
    }
}

/// `arm_paths`: path prefixes (no query) the run treats as ARM's.
fn read_arm_paths(r: &mut Reader, n: &Node) -> Vec<String> {
    let mut arm_paths = Vec::new();
    for (p, pos) in r.strings(n, "a path prefix") {
        if p.starts_with('/') && !p.contains(['?', '#']) {
            arm_paths.push(p);
        } else {
            r.diags.push(
                Diagnostic::new(pos, format!("arm_paths entry `{p}` is not a path prefix"))
                    .expected("a path starting with `/`, without query: /lro"),
            );
        }
    }
    arm_paths
}

/// Attach the `openapi` specs and imply the front-door profile: playing ARM's part is a
/// profile of its own, its rules judge the RP as ARM calls it.
fn finish_target(mut t: Target, specs: Option<crate::spec::Specs>) -> Target {
    if let Some(s) = specs {
        t.attach_specs(Arc::new(s), "openapi:");
    }
    if t.front_door.is_some() && !t.types.is_empty() && !t.profiles.contains(&Profile::FrontDoor) {
        t.profiles.push(Profile::FrontDoor);
        t.implied_profiles.push(format!(
            "{} (the run plays ARM's part in front of {}: `front_door`)",
            Profile::FrontDoor.name(),
            t.base_url.host_str().unwrap_or("the endpoint")
        ));
    }
    t
}

/// The top level of a target file, one key at a time, in the order its diagnostics are given.
fn read_target(r: &mut Reader, root: &Node, label: &str) -> Option<Target> {
    let m = r.map(root, "the target file", TOP_KEYS)?;
    let base_url = required(r, &m, root, "base_url").and_then(|n| read_base_url(r, n));
    // A data plane (monitors, a task API) has no subscription or resource group: both are
    // required only where the target declares ARM resource types.
    let arm_declared = m.has("types");
    let subscription_node = required_if(r, &m, root, "subscription", arm_declared);
    let subscription = subscription_node.and_then(|n| read_subscription(r, n));
    // A target with only data-plane or task surfaces needs no namespace of its own.
    let ns = required_if(r, &m, root, "namespace", arm_declared)
        .and_then(|n| namespace(r, n, "namespace"));
    let api = required_if(r, &m, root, "api_version", arm_declared)
        .and_then(|n| api_version(r, n, "api_version"));
    let mut namespaces = Vec::new();
    if let (Some(n), Some(v)) = (&ns, &api) {
        namespaces.push(Namespace {
            name: n.clone(),
            api_version: v.clone(),
        });
    }
    if let Some(n) = m.get("namespaces") {
        read_namespaces(r, n, &mut namespaces);
    }
    let (profiles, implied) = match m.get("profiles") {
        None => implied_profiles(&m),
        Some(n) => (read_profiles(r, n), Vec::new()),
    };
    let location = m
        .get("location")
        .and_then(|n| r.string(n, "location"))
        .unwrap_or_else(|| "eastus".into());
    let deadline = read_deadline(r, m.get("deadline"));
    let auth = match m.get("auth") {
        None => Auth::None,
        Some(n) => read_auth(r, n).unwrap_or(Auth::None),
    };
    let secret_headers = m
        .get("secret_headers")
        .map(|n| read_secret_headers(r, n))
        .unwrap_or_default();
    let headers = m
        .get("headers")
        .map(|n| read_headers(r, n))
        .unwrap_or_default();
    let front_door = read_front_door(r, m.get("front_door"), base_url.as_ref());
    let subject = m.get("subject").and_then(|n| read_subject(r, n));
    let identity = m.get("identity").and_then(|n| read_identity(r, n));
    let resource_group = read_resource_group(r, m.get("resource_group"), root, arm_declared);
    let monitors = m
        .get("monitors")
        .map(|n| surfaces::read_monitors(r, n))
        .unwrap_or_default();
    let tasks = m.get("tasks").and_then(|n| surfaces::read_tasks(r, n));
    let arm_paths = m
        .get("arm_paths")
        .map(|n| read_arm_paths(r, n))
        .unwrap_or_default();
    if !arm_declared && !m.has("monitors") && !m.has("tasks") && !m.has("arm_paths") {
        r.error(
            root,
            "declare at least one of `types`, `monitors`, `tasks` or `arm_paths`",
            None,
        );
    }
    let specs = m.get("openapi").and_then(|n| read_openapi(r, n));
    let defaults = types::Defaults {
        namespace: ns.clone().unwrap_or_default(),
        api_version: api.clone().unwrap_or_default(),
        namespaces: namespaces.clone(),
    };
    let types = m
        .get("types")
        .map(|n| types::read_types(r, n, &defaults))
        .unwrap_or_default();
    let target = Target {
        label: label.to_string(),
        base_url: base_url?,
        auth,
        secret_headers,
        headers,
        subscription: match subscription_node {
            Some(_) => subscription?,
            None => String::new(),
        },
        resource_group: resource_group?,
        profiles,
        implied_profiles: implied,
        profiles_declared: m.has("profiles"),
        namespace: ns.unwrap_or_default(),
        api_version: api.unwrap_or_default(),
        namespaces,
        location,
        deadline,
        identity,
        types,
        monitors,
        tasks,
        arm_paths,
        specs: None,
        subject,
        front_door: front_door?,
    };
    Some(finish_target(target, specs))
}

/// `front_door: emulate | none | {public_host: NAME}`: whether the run plays ARM's part in
/// front of the endpoint, and under which public host. By default it does for an endpoint that
/// is not an ARM host (an RP's own endpoint), and does not for ARM itself.
fn read_front_door(
    r: &mut Reader,
    n: Option<&Node>,
    base: Option<&url::Url>,
) -> Option<Option<String>> {
    let default_host = crate::http::front_door::DEFAULT_PUBLIC_HOST.to_string();
    let Some(n) = n else {
        let arm =
            base.is_some_and(|b| crate::preflight::arm::is_arm_host(b.host_str().unwrap_or("")));
        return Some((!arm).then_some(default_host));
    };
    if n.as_mapping().is_some() {
        let m = r.map(n, "front_door", &["public_host"])?;
        let Some(h) = m.get("public_host") else {
            r.error(
                n,
                "front_door needs `public_host`",
                Some("{public_host: management.contoso.test}".into()),
            );
            return None;
        };
        let host = r.string(h, "public_host")?;
        let ok = crate::http::parse_url(&format!("https://{host}/"))
            .ok()
            .is_some_and(|u| u.host_str().is_some_and(|h| h.eq_ignore_ascii_case(&host)));
        if !ok {
            r.error(
                n,
                format!("front_door: `{host}` is not a host name"),
                Some("a host name such as management.contoso.test".into()),
            );
            return None;
        }
        return Some(Some(host));
    }
    match r.string(n, "front_door")?.as_str() {
        "emulate" => Some(Some(default_host)),
        "none" => Some(None),
        other => {
            r.error(
                n,
                format!("front_door: `{other}` is not `emulate`, `none` or `{{public_host: NAME}}`"),
                Some("emulate (play ARM's part in front of the endpoint) or none (the endpoint is ARM)".into()),
            );
            None
        }
    }
}

/// `openapi: [files]`, relative to the target file: the RP's own spec, loaded now so that a
/// file that cannot be read is an error at its line, before anything is sent.
fn read_openapi(r: &mut Reader, n: &Node) -> Option<crate::spec::Specs> {
    let dir = r.file.parent().map(Path::to_path_buf).unwrap_or_default();
    let files = r.strings(n, "an OpenAPI file");
    let first = files.first().map(|(_, pos)| pos.clone())?;
    let paths: Vec<std::path::PathBuf> = files.iter().map(|(p, _)| dir.join(p)).collect();
    match crate::spec::Specs::load(&paths) {
        Ok(s) => Some(s),
        Err(e) => {
            r.diags.push(Diagnostic::new(
                first,
                format!("cannot read the OpenAPI spec: {e}"),
            ));
            None
        }
    }
}

fn read_auth(r: &mut Reader, n: &Node) -> Option<Auth> {
    crate::http::parse_auth(r, n)
}

fn read_rg(r: &mut Reader, n: &Node) -> Option<ResourceGroup> {
    let m = r.map(
        n,
        "resource_group",
        &["name", "create", "disposable", "api_version"],
    )?;
    let name = match m.get("name") {
        Some(x) => r.string(x, "name")?,
        None => {
            r.error(n, "resource_group needs a `name`", None);
            return None;
        }
    };
    Some(ResourceGroup {
        name,
        create: m
            .get("create")
            .and_then(|x| r.bool(x, "create"))
            .unwrap_or(false),
        disposable: m
            .get("disposable")
            .and_then(|x| r.bool(x, "disposable"))
            .unwrap_or(false),
        api_version: m
            .get("api_version")
            .and_then(|x| api_version(r, x, "api_version"))
            .unwrap_or_else(|| "2021-04-01".into()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_versions_and_namespaces_are_checked() {
        for ok in [
            "2024-05-01",
            "2024-09-01-preview",
            "2023-01-01-beta",
            "2022-10-01-privatepreview",
        ] {
            assert!(api_version_ok(ok), "{ok}");
        }
        for bad in [
            "1",
            "2024-5-1",
            "2024-13-01",
            "2024-05-01-",
            "v1",
            "2024-05-01preview",
        ] {
            assert!(!api_version_ok(bad), "{bad}");
        }
        assert!(namespace_ok("Microsoft.Contoso"));
        assert!(namespace_ok("Contoso.Widgets.Data"));
        assert!(!namespace_ok("Contoso"));
        assert!(!namespace_ok("Microsoft..X"));
    }

    fn errors(yaml: &str) -> String {
        match parse_target(Path::new("t.yaml"), yaml, "t") {
            Ok(_) => String::new(),
            Err(r) => r.render(),
        }
    }

    #[test]
    fn a_data_plane_needs_no_subscription_and_implies_its_profile() {
        let mon = "base_url: http://h\nmonitors:\n  m: {request: {method: PUT, url: /w}, link: operation-location}\n";
        let t = match parse_target(Path::new("t.yaml"), mon, "t") {
            Ok(t) => t,
            Err(r) => panic!("{}", r.render()),
        };
        assert_eq!(t.profiles, vec![Profile::AzureCoreLro]);
        assert_eq!(t.implied_profiles, ["azure-core-lro (monitors)"]);
        assert!(t.subscription.is_empty() && t.resource_group.name.is_empty());
        // Declared profiles are taken as they are.
        let t = parse_target(Path::new("t.yaml"), &format!("{mon}profiles: [arm]\n"), "t").ok();
        assert_eq!(t.map(|t| t.implied_profiles.len()), Some(0));
        // ARM types still need both.
        let e = errors(
            "base_url: http://h\nnamespace: Microsoft.C\napi_version: \"2024-05-01\"\ntypes: {w: {create_body: {}}}\n",
        );
        assert!(e.contains("missing key `subscription`"), "{e}");
        assert!(e.contains("missing key `resource_group`"), "{e}");
    }

    #[test]
    fn bad_values_are_positioned_errors() {
        let base = "base_url: http://h\nsubscription: 00000000-0000-0000-0000-000000000001\nresource_group: {name: g}\nnamespace: Microsoft.C\napi_version: \"2024-05-01\"\ntypes: {w: {create_body: {}}}\n";
        assert_eq!(errors(base), "");
        let e = errors(&base.replace("\"2024-05-01\"", "\"1.0\""));
        assert!(
            e.contains("t.yaml:5:14") && e.contains("not an ARM api-version"),
            "{e}"
        );
        let e = errors(&base.replace("00000000-0000-0000-0000-000000000001", "sub1"));
        assert!(e.contains("t.yaml:2:15") && e.contains("not a GUID"), "{e}");
        let e = errors(&base.replace("Microsoft.C", "Contoso"));
        assert!(e.contains("not a provider namespace"), "{e}");
        // Userinfo is accepted (sent as Basic, masked in every output).
        assert_eq!(errors(&base.replace("http://h", "http://u:p@h")), "");
        let e = errors(&base.replace("http://h", "ftp://u:p@h"));
        assert!(
            e.contains("not an absolute http(s) URL") && !e.contains("u:p@"),
            "{e}"
        );
        let e = errors(&format!("{base}profiles: [arm, aro]\n"));
        assert!(
            e.contains("unknown profile `aro`") && e.contains("aro-hcp"),
            "{e}"
        );
    }

    #[test]
    fn deadlines_are_bounded_at_parse_time() {
        let base = "base_url: http://h\nsubscription: 00000000-0000-0000-0000-000000000001\nresource_group: {name: g}\nnamespace: Microsoft.C\napi_version: \"2024-05-01\"\ntypes: {w: {create_body: {}}}\n";
        let t = parse_target(
            Path::new("t.yaml"),
            &format!("{base}deadline: 604800\n"),
            "t",
        )
        .unwrap();
        assert_eq!(t.deadline, Duration::from_secs(604_800));
        for bad in ["9223372036854775807", "604801", "0"] {
            let e = errors(&format!("{base}deadline: {bad}\n"));
            assert!(
                e.contains("t.yaml:7:11")
                    && e.contains("deadline must be from 1 to 604800 seconds (a week)"),
                "{bad}: {e}"
            );
        }
    }
}
