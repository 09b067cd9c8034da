//! Resources a test needs: `create` (PUT and follow to the end) and `fresh` (a name never
//! created, under real parents), with the parent chain, the extended resource and any
//! dependency made first; `settle` (read until no operation runs). URLs follow each type's
//! scope; types with fixed names use their declared name.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::exec::{Exec, StepOut, StepResult};
use super::follow::FollowSpec;
use crate::http::Role;
use crate::report::PollRecord;
use crate::scenario::{CreateSpec, TypeRef};
use crate::target::{Extends, ResourceType, Scope};
use crate::template::JsonTemplate;

/// Where a new resource goes: its URL, name and collection, and the resources it lives under
/// and depends on.
struct Placed<'u> {
    url: &'u str,
    name: &'u str,
    collection: &'u str,
    parent: Option<Value>,
    dependency: Option<Value>,
}

impl<'a> Exec<'a> {
    pub(super) fn resolve_type(&self, r: &TypeRef) -> StepResult<&'a ResourceType> {
        let found = r.resolve(&self.ctx.target, self.ty);
        found.ok_or_else(|| format!("the target has no {} type for this scenario", r.label()))
    }

    /// The resource a new one of `ty` lives under: its parent, or the resource it extends.
    async fn host_of(
        &mut self,
        ty: &ResourceType,
        given: Option<Value>,
    ) -> StepResult<Option<Value>> {
        if let Some(v) = given {
            return Ok(Some(v));
        }
        let host_type = match (&ty.parent, &ty.scope) {
            (Some(p), _) => Some(p.clone()),
            (None, Scope::Extension(Extends::Type(t))) => Some(t.clone()),
            _ => None,
        };
        match host_type {
            Some(p) => {
                let pt = self
                    .ctx
                    .target
                    .type_named(&p)
                    .ok_or_else(|| format!("unknown type `{p}`"))?;
                Ok(Some(Box::pin(self.ensure(pt)).await?))
            }
            None => Ok(None),
        }
    }

    /// `create` (PUT and follow) or `fresh` (a name not created, under real parents).
    pub(super) async fn create(
        &mut self,
        spec: &CreateSpec,
        really: bool,
        role: Role,
    ) -> StepResult<StepOut> {
        let ty = self.resolve_type(&spec.type_ref)?;
        let given = match &spec.parent {
            Some(t) if ty.parent.is_some() || matches!(ty.scope, Scope::Extension(_)) => {
                Some(t.render_value(&self.scope)?)
            }
            _ => None,
        };
        let parent = self.host_of(ty, given).await?;
        let dependency = self.dependency_of(ty, spec).await?;
        let parent_url = match &parent {
            Some(p) => Some(
                p.get("url")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .ok_or("`parent` must be a resource from create")?,
            ),
            None => None,
        };
        let collection = self.ctx.target.collection_url(ty, parent_url.as_deref())?;
        let name = self.new_name(ty, really)?;
        let url = format!("{collection}/{name}");
        let (mut bound, body) = self.bound(
            spec,
            ty,
            Placed {
                url: &url,
                name: &name,
                collection: &collection,
                parent,
                dependency,
            },
        )?;
        if !really {
            self.scope.insert(spec.bind.clone(), bound);
            return Ok(StepOut {
                url,
                method: "PUT".into(),
                ..Default::default()
            });
        }
        let idx = self
            .send(
                "PUT",
                &url,
                Vec::new(),
                Some(body.to_string()),
                role,
                &crate::scenario::ApiVersion::Default,
                None,
            )
            .await?;
        let mut out = StepOut {
            exchange: Some(idx),
            initial: Some(idx),
            url: url.clone(),
            method: "PUT".into(),
            ..Default::default()
        };
        if let Some(refused) = self.refused(idx, ty, &url, role)? {
            out.outcome = Some(refused);
            self.scope.insert(spec.bind.clone(), bound);
            return Ok(out);
        }
        if spec.wait {
            self.wait_created(idx, ty, &url, role, &mut out).await?;
        }
        let last_body = out
            .exchange
            .and_then(|i| self.exchanges[i].response.as_ref())
            .and_then(|r| r.json.clone());
        if let Some(b) = &last_body {
            if let Some(id) = b.get("id").and_then(Value::as_str) {
                bound["id"] = json!(id);
            }
            bound["body"] = b.clone();
        }
        self.scope.insert(spec.bind.clone(), bound);
        Ok(out)
    }

    /// The resource a new one of `ty` depends on: the step's, or one made for it.
    async fn dependency_of(
        &mut self,
        ty: &ResourceType,
        spec: &CreateSpec,
    ) -> StepResult<Option<Value>> {
        Ok(match (&ty.depends_on, &spec.dependency) {
            (Some(_), Some(t)) => Some(t.render_value(&self.scope)?),
            (Some(d), None) => {
                let dt = self
                    .ctx
                    .target
                    .type_named(d)
                    .ok_or("unknown dependency type")?;
                Some(Box::pin(self.ensure(dt)).await?)
            }
            _ => None,
        })
    }

    /// The name of the new resource: the type's fixed name, or a unique one.
    fn new_name(&self, ty: &ResourceType, really: bool) -> StepResult<String> {
        match &ty.names {
            // A type with fixed names has no fresh one: a name never created cannot exist.
            Some(_) if !really => Err(format!(
                "type `{}` accepts only fixed names: it has no fresh name",
                ty.name
            )),
            Some(names) => Ok(names[0].clone()),
            None => Ok(self.ctx.unique()),
        }
    }

    /// The variable the step binds (the resource's fields) and the body its PUT sends.
    fn bound(
        &self,
        spec: &CreateSpec,
        ty: &ResourceType,
        at: Placed<'_>,
    ) -> StepResult<(Value, Value)> {
        let Placed {
            url,
            name,
            collection,
            parent,
            dependency,
        } = at;
        // The resource's ARM id: its path without the base URL's prefix.
        let path = self.ctx.target.rel_path(url);
        let mut bound = json!({
            "url": url,
            "path": path,
            "id": path,
            "name": name,
            "arm_type": ty.arm_type(&self.ctx.target),
            "collection": collection,
            "parent": parent.clone().unwrap_or(Value::Null),
            "dependency": dependency.clone().unwrap_or(Value::Null),
            "body": Value::Null,
            "sent": Value::Null,
            "replace": Value::Null,
            "type": ty.name,
            "read_only_probe": Value::Null,
        });
        let mut bscope = self.scope.clone();
        bscope.insert("parent".into(), parent.unwrap_or(Value::Null));
        bscope.insert("dependency".into(), dependency.unwrap_or(Value::Null));
        let body = match &spec.body {
            Some(jt) => jt.render(&bscope)?,
            None => JsonTemplate::parse(&ty.create_body)?.render(&bscope)?,
        };
        bound["sent"] = body.clone();
        // The body a replacing PUT sends: the type's replace_body, rendered like the create
        // body (else the body the create sent).
        bound["replace"] = match (&spec.body, &ty.replace_body) {
            (None, Some(rb)) => JsonTemplate::parse(rb)?.render(&bscope)?,
            _ => body.clone(),
        };
        // `${x.read_only_probe}` (SPEC-07): from the replace body as rendered.
        bound["read_only_probe"] = self.ctx.target.read_only_probe(
            &format!("{url}?api-version={}", ty.api_version),
            &bound["replace"],
        );
        Ok((bound, body))
    }

    /// How the create's PUT was refused (`refused with STATUS`), `None` when it was taken;
    /// an error in setup, or when nothing answered.
    fn refused(
        &self,
        idx: usize,
        ty: &ResourceType,
        url: &str,
        role: Role,
    ) -> StepResult<Option<String>> {
        match self.exchanges[idx].status() {
            Some(200..=202) => Ok(None),
            Some(s) if role == Role::Setup => Err(format!(
                "could not create {} at {url}: status {s} ({})",
                ty.name,
                self.exchanges[idx].summary()
            )),
            Some(s) => Ok(Some(format!("refused with {s}"))),
            None => Err(format!(
                "could not create {}: {}",
                ty.name,
                self.exchanges[idx].error.clone().unwrap_or_default()
            )),
        }
    }

    /// Follow the create to its end, the resource itself read while it provisions (PUT-03's
    /// evidence); in setup, anything but success is an error.
    async fn wait_created(
        &mut self,
        idx: usize,
        ty: &ResourceType,
        url: &str,
        role: Role,
        out: &mut StepOut,
    ) -> StepResult<()> {
        let p = self
            .follow(
                idx,
                FollowSpec {
                    method: "PUT",
                    resource: Some(url.to_string()),
                    declared: Some(ty.lro.put),
                    deadline: self.ctx.target.deadline,
                    watch: vec![url.to_string()],
                },
            )
            .await;
        p.or_unread()?;
        out.outcome = Some(p.outcome.clone());
        if let Some(f) = p.exchange {
            out.exchange = Some(f);
        }
        if role == Role::Setup && p.outcome != "Succeeded" {
            return Err(format!(
                "could not create {} at {url}: the operation ended {}",
                ty.name, p.outcome
            ));
        }
        Ok(())
    }

    /// A resource of this type that exists and is settled (created for the scenario).
    pub(super) async fn ensure(&mut self, ty: &ResourceType) -> StepResult<Value> {
        let bind = format!("__auto_{}", self.ctx.unique());
        let spec = CreateSpec {
            bind: bind.clone(),
            type_ref: TypeRef::Named(ty.name.clone()),
            parent: None,
            dependency: None,
            body: None,
            wait: true,
        };
        self.create(&spec, true, Role::Setup).await?;
        self.scope
            .remove(&bind)
            .ok_or_else(|| "internal: created resource not bound".to_string())
    }

    /// GET a resource until no operation runs on it (terminal or absent provisioningState, or 404).
    pub(super) async fn settle(
        &mut self,
        url: &str,
        deadline: Duration,
    ) -> (String, Option<usize>) {
        let start = Instant::now();
        let mut attempts = 0;
        let mut last = None;
        let outcome = loop {
            attempts += 1;
            let idx = match self.get(url, Role::ResourcePoll).await {
                Ok(i) => i,
                Err(e) => break format!("error: {e}"),
            };
            last = Some(idx);
            let resp = self.exchanges[idx].response.as_ref();
            match resp.map(|r| r.status) {
                Some(404) => break "Gone".into(),
                Some(200) => {
                    if let crate::lro::State::Done(o, _) =
                        crate::lro::resource_state(resp.and_then(|r| r.json.as_ref()))
                    {
                        break o.as_str().into();
                    }
                }
                Some(s) => break format!("status {s}"),
                None => {
                    break format!(
                        "error: {}",
                        self.exchanges[idx].error.clone().unwrap_or_default()
                    );
                }
            }
            if start.elapsed() >= deadline {
                break format!("timed out after {} s", deadline.as_secs());
            }
            if !self.ctx.sleep(2.0).await {
                break "interrupted".into();
            }
        };
        self.polls.push(PollRecord {
            step: self.step_label.clone(),
            via: "resource".into(),
            attempts,
            elapsed_ms: start.elapsed().as_millis() as u64,
            outcome: outcome.clone(),
        });
        (outcome, last)
    }
}
