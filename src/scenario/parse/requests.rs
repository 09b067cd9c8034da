//! Request-like actions: `request`, `poll`, `create` / `fresh` and `sweep`.

use std::path::Path;
use std::time::Duration;

use marked_yaml::Node;
use serde_json::Value;

use super::{ALWAYS, Defined, SuiteParser, valid_name};
use crate::scenario::ast::*;
use crate::template::{JsonTemplate, Template};

const REQUEST_KEYS: &[&str] = &[
    "method",
    "url",
    "headers",
    "body",
    "raw_body",
    "body_file",
    "api_version",
    "pages",
];

impl<'o> SuiteParser<'o> {
    pub(super) fn request(&mut self, node: &Node, def: &Defined) -> Option<RequestSpec> {
        let m = self.r.map(node, "request", REQUEST_KEYS)?;
        let method = match m.get("method") {
            Some(n) => self.template(n)?,
            None => Template::literal("GET"),
        };
        if let Some(lit) = method.as_literal()
            && !["GET", "PUT", "PATCH", "DELETE", "POST", "HEAD", "OPTIONS"].contains(&lit.as_str())
        {
            self.r.error(
                m.get("method").unwrap_or(node),
                format!("unknown method `{lit}`"),
                Some("GET, PUT, PATCH, DELETE, POST, HEAD or OPTIONS".into()),
            );
        }
        let url = match m.get("url") {
            Some(n) => {
                let t = self.template(n)?;
                self.check_vars(&t.vars().collect::<Vec<_>>(), n, def);
                t
            }
            None => {
                self.r.error(node, "a request needs a `url`", None);
                return None;
            }
        };
        let mut headers = Vec::new();
        if let Some(n) = m.get("headers")
            && let Some(hm) = self.r.free_map(n, "headers")
        {
            for (k, v) in hm.entries() {
                let key = k
                    .as_scalar()
                    .map(|s| s.as_str().to_string())
                    .unwrap_or_default();
                if let Some(t) = self.template(v) {
                    self.check_vars(&t.vars().collect::<Vec<_>>(), v, def);
                    headers.push((key, t));
                }
            }
        }
        let bodies: Vec<&str> = ["body", "raw_body", "body_file"]
            .into_iter()
            .filter(|k| m.has(k))
            .collect();
        if bodies.len() > 1 {
            self.r.error(
                node,
                format!(
                    "a request has one body, this one has {}",
                    bodies.join(" and ")
                ),
                None,
            );
        }
        let body = if let Some(n) = m.get("body") {
            let jt = self.json_template(n)?;
            self.check_vars(&jt.vars(), n, def);
            Some(Body::Json(jt))
        } else if let Some(n) = m.get("raw_body") {
            let t = self.template(n)?;
            self.check_vars(&t.vars().collect::<Vec<_>>(), n, def);
            Some(Body::Raw(t))
        } else if let Some(n) = m.get("body_file") {
            let rel = self.r.string(n, "body_file")?;
            let base = self.r.file.parent().unwrap_or(Path::new("."));
            let path = base.join(&rel);
            match crate::yaml::read_text(&path, crate::yaml::MAX_SOURCE_BYTES) {
                Ok(text) => match serde_json::from_str::<Value>(&text) {
                    Ok(v) => match JsonTemplate::parse(&v) {
                        Ok(jt) => {
                            self.check_vars(&jt.vars(), n, def);
                            Some(Body::Json(jt))
                        }
                        Err(e) => {
                            self.r.error(n, format!("{}: {e}", path.display()), None);
                            None
                        }
                    },
                    Err(e) => {
                        self.r.error(
                            n,
                            format!("{} is not valid JSON: {e}", path.display()),
                            None,
                        );
                        None
                    }
                },
                Err(e) => {
                    self.r.error(
                        n,
                        format!("cannot read body file {}: {e}", path.display()),
                        None,
                    );
                    None
                }
            }
        } else {
            None
        };
        let api_version = match m.get("api_version") {
            None => ApiVersion::Default,
            Some(n) if n.as_scalar().is_some_and(|s| s.as_str() == "omit") => ApiVersion::Omit,
            // A URL the server handed out is sent exactly as given (nothing added).
            Some(n) if n.as_scalar().is_some_and(|s| s.as_str() == "as_given") => {
                ApiVersion::AsGiven
            }
            Some(n) => ApiVersion::Value(self.template(n)?),
        };
        let all_pages = match m.get("pages") {
            None => false,
            Some(n) => match n.as_scalar().map(|s| s.as_str()) {
                Some("all") => true,
                Some("first") => false,
                _ => {
                    self.r.error(n, "pages must be `all` or `first`", None);
                    false
                }
            },
        };
        Some(RequestSpec {
            method,
            url,
            headers,
            body,
            api_version,
            all_pages,
        })
    }

    pub(super) fn poll(&mut self, node: &Node, def: &Defined) -> Option<PollSpec> {
        // `poll: step-name` or `poll: {follow: step-name, deadline: 60, watch: [url]}`.
        if let Some(s) = node.as_scalar() {
            let follow = s.as_str().to_string();
            self.check_step_ref(&follow, node, def);
            return Some(PollSpec {
                follow,
                deadline: None,
                watch: Vec::new(),
            });
        }
        let m = self.r.map(node, "poll", &["follow", "deadline", "watch"])?;
        let follow = match m.get("follow") {
            Some(n) => {
                let f = self.r.string(n, "follow")?;
                self.check_step_ref(&f, n, def);
                f
            }
            None => {
                self.r.error(node, "poll needs `follow: <step name>`", None);
                return None;
            }
        };
        let deadline = m
            .get("deadline")
            .and_then(|n| {
                self.r.seconds(
                    n,
                    "deadline",
                    crate::target::MAX_DEADLINE_SECS,
                    crate::target::MAX_DEADLINE_TEXT,
                )
            })
            .map(Duration::from_secs);
        let mut watch = Vec::new();
        if let Some(n) = m.get("watch") {
            for w in self.r.one_or_many(n) {
                if let Some(t) = self.template(w) {
                    self.check_vars(&t.vars().collect::<Vec<_>>(), w, def);
                    watch.push(t);
                }
            }
        }
        Some(PollSpec {
            follow,
            deadline,
            watch,
        })
    }

    pub(super) fn create(&mut self, node: &Node, def: &Defined) -> Option<CreateSpec> {
        let m = self.r.map(
            node,
            "create",
            &["as", "type", "parent", "dependency", "body", "wait"],
        )?;
        let bind = match m.get("as") {
            Some(n) => {
                let b = self.r.string(n, "as")?;
                if !valid_name(&b) || ALWAYS.contains(&b.as_str()) || b == "type" || b == "row" {
                    self.r
                        .error(n, format!("`{b}` cannot name a resource"), None);
                }
                b
            }
            None => {
                self.r.error(
                    node,
                    "create needs `as: <variable>` to name the resource",
                    None,
                );
                return None;
            }
        };
        let type_ref = match m
            .get("type")
            .and_then(|n| self.r.string(n, "type"))
            .as_deref()
        {
            None | Some("self") => TypeRef::SelfType,
            Some("parent") => TypeRef::Parent,
            Some("child") => TypeRef::Child,
            Some("grandchild") => TypeRef::Grandchild,
            Some("dependency") => TypeRef::Dependency,
            Some(other) => TypeRef::Named(other.to_string()),
        };
        if type_ref != TypeRef::SelfType && !matches!(type_ref, TypeRef::Named(_)) && !def.has_type
        {
            self.r.error(
                node,
                "relative types (parent, child, dependency) need `for_each_type` on the scenario",
                None,
            );
        }
        if matches!(type_ref, TypeRef::SelfType) && !def.has_type && !m.has("type") {
            self.r.error(
                node,
                "create needs `type:` when the scenario has no `for_each_type`",
                None,
            );
        }
        let tmpl = |key: &str, r: &mut Self| -> Option<Template> {
            let n = m.get(key)?;
            let t = r.template(n)?;
            r.check_vars(&t.vars().collect::<Vec<_>>(), n, def);
            Some(t)
        };
        let parent = tmpl("parent", self);
        let dependency = tmpl("dependency", self);
        let body = match m.get("body") {
            Some(n) => {
                let jt = self.json_template(n)?;
                self.check_vars(&jt.vars(), n, def);
                Some(jt)
            }
            None => None,
        };
        let wait = m
            .get("wait")
            .and_then(|n| self.r.bool(n, "wait"))
            .unwrap_or(true);
        Some(CreateSpec {
            bind,
            type_ref,
            parent,
            dependency,
            body,
            wait,
        })
    }

    pub(super) fn sweep(&mut self, node: &Node, def: &Defined) -> Option<SweepSpec> {
        let m = self.r.map(node, "sweep", &["resources", "seed"])?;
        let mut resources = Vec::new();
        match m.get("resources") {
            Some(n) => {
                for item in self.r.one_or_many(n) {
                    if let Some(t) = self.template(item) {
                        self.check_vars(&t.vars().collect::<Vec<_>>(), item, def);
                        resources.push(t);
                    }
                }
            }
            None => self
                .r
                .error(node, "sweep needs `resources:` (resource URLs)", None),
        }
        let seed = m
            .get("seed")
            .and_then(|n| self.r.u64(n, "seed"))
            .unwrap_or(1);
        Some(SweepSpec { resources, seed })
    }
}
