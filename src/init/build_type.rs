//! One `types:` entry: where the type lives, what it is, how its operations run, and the
//! bodies to send (from examples or schemas, with ids of other resources turned into
//! `${parent.id}` / `${dependency.id}` where the spec's own types explain them).

use super::InitError;
use super::bodies;
use super::build::{self, Ctx, action_node, extends, if_match, lro_node, set_pointer, type_facts};
use super::emit::{Item, Node};
use super::lro;
use super::ops::Op;
use super::paths::{self, Scope};
use serde_json::{Value, json};

/// The node for type `i` and the comment lines above its key.
pub(crate) fn type_node(
    cx: &mut Ctx,
    i: usize,
    default_ns: &str,
) -> Result<(Node, Vec<String>), InitError> {
    let model = cx.model;
    let t = &model.types[i];
    let place = format!("types.{}", t.name);
    let mut above = Vec::new();
    if t.put.is_none() {
        above.push(cx.todo(
            &place,
            "the spec has no PUT for this type; rpconform creates it to test the types under it: write create_body by hand",
        ));
    }
    let name_param = t.name_param.as_ref().and_then(|np| {
        [&t.put, &t.get]
            .into_iter()
            .flatten()
            .find_map(|o| o.param(np))
    });
    if let Some(p) = name_param {
        match (&p.pattern, p.max_length) {
            (Some(pat), Some(max)) => {
                above.push(format!("names must match {pat} (at most {max} characters)"))
            }
            (Some(pat), None) => above.push(format!("names must match {pat}")),
            (None, Some(max)) => above.push(format!("names are at most {max} characters")),
            (None, None) => {}
        }
    }

    // Bodies and actions first: they decide depends_on.
    let create = match &t.put {
        Some(put) => body(cx, i, put, true, &format!("{place}.create_body"))?,
        None => {
            let schema = t.get.as_ref().and_then(|g| {
                g.success()
                    .find(|r| r.status() == Some(200))
                    .and_then(|r| r.schema.clone())
            });
            let v = match schema {
                Some(s) => bodies::minimal_body(cx.store, &s)?.body,
                None => json!({}),
            };
            (Node::from_json(&v), None)
        }
    };
    let update = match &t.patch {
        Some(patch) => Some(body(cx, i, patch, false, &format!("{place}.update_body"))?),
        None => None,
    };
    let mut actions = Vec::new();
    for (k, (name, op)) in t.actions.iter().enumerate() {
        actions.push(action_node(
            cx,
            i,
            name,
            op,
            &format!("{place}.actions[{k}]"),
        )?);
    }

    let mut n = Node::map();
    if t.namespace != default_ns {
        n.push("namespace", Node::str(t.namespace.clone()));
    }
    if let Some(v) = t.spec().and_then(|s| cx.specs[s].version.clone())
        && build::is_api_version(&v)
        && cx.version_of(&t.namespace) != Some(&v)
    {
        n.push("api_version", Node::str(v));
    }
    if t.name != t.segment {
        n.push("path", Node::str(t.segment.clone()));
    }
    match t.parent {
        Some(p) => {
            n.push("parent", Node::str(model.types[p].name.clone()));
        }
        None => {
            let e = n.push("scope", Node::str(t.scope.word()));
            if let Some(note) = &t.scope_note {
                e.comment(cx.todo(&format!("{place}.scope"), note));
            }
            if let Scope::Extension(prefix) = &t.scope {
                let e = extends(cx, i, prefix, &format!("{place}.extends"));
                if let Node::Map(entries) = &mut n {
                    entries.push(e);
                }
            }
        }
    }
    if let Some(&d) = cx.depends.get(&i) {
        let c = cx.todo(
            &format!("{place}.depends_on"),
            "a guess from an id in the example body",
        );
        n.push("depends_on", Node::str(model.types[d].name.clone()))
            .comment(c);
    }

    let facts = type_facts(cx.store, t)?;
    let tracked = facts.location_required || facts.tracked_base || facts.has_location;
    let e = n.push("kind", Node::str(if tracked { "tracked" } else { "proxy" }));
    if facts.has_location && !(facts.location_required || facts.tracked_base) {
        e.comment(cx.todo(
            &format!("{place}.kind"),
            "the schema has `location` but does not require it",
        ));
    }
    if let Some(f) = &t.fixed_name {
        n.push("singleton", Node::str(f.clone()));
    } else if let Some(p) = name_param.filter(|p| !p.enum_values.is_empty()) {
        n.push(
            "names",
            Node::Seq(
                p.enum_values
                    .iter()
                    .map(|v| Item::new(Node::str(v.clone())))
                    .collect(),
            ),
        );
    }
    let e = n.push("etag", Node::bool(facts.etag || if_match(t)));
    if !facts.etag && if_match(t) {
        e.comment("If-Match is a parameter; the schema has no etag property");
    }
    n.push("provisioning_state", Node::bool(facts.provisioning_state));
    n.push("skus", Node::bool(t.skus));

    // Per-operation LRO patterns; those the spec does not state are left to `async: true`.
    let mut lro_map = Node::map();
    let mut unstated = Vec::new();
    let mut any_long = false;
    for (word, op) in [("put", &t.put), ("patch", &t.patch), ("delete", &t.delete)] {
        let Some(op) = op else { continue };
        let l = lro::classify(op);
        any_long |= l.long_running();
        match lro_node(&l) {
            Some(node) => {
                let e = lro_map.push(word, node);
                if let Some(todo) = &l.todo {
                    e.comment(cx.todo(&format!("{place}.lro.{word}"), todo));
                }
            }
            None => unstated.push(cx.todo(
                &format!("{place}.lro.{word}"),
                &format!(
                    "{word}: {}",
                    l.todo.as_deref().unwrap_or("pattern not stated")
                ),
            )),
        }
    }
    let e = n.push("async", Node::bool(any_long));
    if !unstated.is_empty() {
        e.comment("any ARM pattern for the operations lro does not list");
        e.above = unstated;
    }
    if matches!(&lro_map, Node::Map(m) if !m.is_empty()) {
        n.push("lro", lro_map);
    }

    let (create_node, create_comment) = create;
    let e = n.push("create_body", create_node);
    if let Some(c) = create_comment {
        e.comment(c);
    }
    if let Some((node, comment)) = update {
        let e = n.push("update_body", node);
        if let Some(c) = comment {
            e.comment(c);
        }
        if tracked && patch_has_tags(cx, t.patch.as_ref())? {
            n.push(
                "tags_body",
                Node::from_json(&json!({"tags": {"rpconform": "tagged"}})),
            );
        }
    }
    if !actions.is_empty() {
        n.push("actions", Node::Seq(actions));
    }
    Ok((n, above))
}

fn patch_has_tags(cx: &Ctx, patch: Option<&Op>) -> Result<bool, InitError> {
    match patch.and_then(|p| p.body_schema.as_ref()) {
        Some(s) => Ok(bodies::flatten(cx.store, s)?.prop("tags").is_some()),
        None => Ok(false),
    }
}

/// The body for `op` of type `i` and the comment for its key.
pub(crate) fn body(
    cx: &mut Ctx,
    i: usize,
    op: &Op,
    create: bool,
    place: &str,
) -> Result<(Node, Option<String>), InitError> {
    let model = cx.model;
    let ex = bodies::example_body(cx.store, op)?;
    let mut notes: Vec<(String, String)> = Vec::new();
    let mut comments: Vec<String> = Vec::new();
    let from_example = ex.body.is_some();
    let mut value = match ex.body {
        Some(b) => {
            comments.push(format!(
                "from example \"{}\"",
                ex.title.as_deref().unwrap_or_default()
            ));
            if !ex.missing.is_empty() {
                comments.push(cx.todo(
                    place,
                    &format!("example files missing: {}", ex.missing.join(", ")),
                ));
            }
            b
        }
        None => {
            let why = if !ex.missing.is_empty() {
                format!("example files missing: {}", ex.missing.join(", "))
            } else if op.examples.is_empty() {
                "no x-ms-examples".to_string()
            } else {
                "the examples have no body".to_string()
            };
            match &op.body_schema {
                Some(s) => {
                    let built = bodies::minimal_body(cx.store, s)?;
                    notes.extend(built.notes);
                    let mut v = built.body;
                    // A PATCH that changes something: tags, when the schema has them.
                    if !create
                        && let Some(m) = v.as_object_mut()
                        && !m.contains_key("tags")
                        && bodies::flatten(cx.store, s)?.prop("tags").is_some()
                    {
                        m.insert("tags".into(), json!({"rpconform": "updated"}));
                    }
                    comments.push(cx.todo(
                        place,
                        &format!("check: built from the schema's required fields ({why})"),
                    ));
                    v
                }
                None => {
                    comments.push(cx.todo(place, &format!("the spec describes no body ({why})")));
                    json!({})
                }
            }
        }
    };
    if create && value.get("location").is_some_and(Value::is_string) {
        value["location"] = json!("${target.location}");
    }
    for (ptr, id) in bodies::resource_ids(&value) {
        let Some((ns, segs)) = paths::id_types(&id) else {
            continue;
        };
        match model.by_segments(&ns, &segs) {
            Some(j) if Some(j) == model.types[i].parent => {
                set_pointer(&mut value, &ptr, json!("${parent.id}"));
                notes.push((ptr, "the parent's id".into()));
            }
            Some(j) if j == i || model.is_ancestor(j, i) => notes.push((
                ptr,
                "TODO: the id of this type or an ancestor; template it or point it at a real one"
                    .into(),
            )),
            Some(j) => {
                let dep = *cx.depends.entry(i).or_insert(j);
                let name = &model.types[j].name;
                if dep == j {
                    set_pointer(&mut value, &ptr, json!("${dependency.id}"));
                    notes.push((
                        ptr,
                        format!("TODO: check: was the id of a `{name}` resource"),
                    ));
                } else {
                    notes.push((
                        ptr,
                        format!("TODO: references a `{name}` resource; only one depends_on can be declared"),
                    ));
                }
            }
            None => notes.push((
                ptr,
                format!(
                    "TODO: references an existing {ns}/{} resource; create it and put its id here",
                    segs.join("/")
                ),
            )),
        }
    }
    if from_example {
        for ptr in bodies::identity_ids(&value) {
            notes.push((
                ptr,
                "TODO: made-up identity ids from the spec's example; put ones the RP may use, or leave `identity` out".into(),
            ));
        }
    }
    let mut node = Node::from_json(&value);
    for (ptr, text) in notes {
        let text = if text.starts_with("TODO: ") {
            cx.todo(&format!("{place}{ptr}"), &text)
        } else {
            text
        };
        match node.at_pointer_mut(&ptr) {
            Some(mut target) => target.add_trailing(&text),
            None => comments.push(if ptr.is_empty() {
                text
            } else {
                format!("{ptr}: {text}")
            }),
        }
    }
    Ok((node, (!comments.is_empty()).then(|| comments.join("; "))))
}
