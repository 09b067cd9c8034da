//! One `types:` entry: where the type lives, what it is, how its operations run, and the
//! bodies to send (from examples or schemas, with ids of other resources turned into
//! `${parent.id}` / `${dependency.id}` where the spec's own types explain them).

use super::InitError;
use super::bodies;
use super::bodies::Facts;
use super::ctx::{self, Ctx};
use super::emit::Entry;
use super::emit::{Item, Node};
use super::lro;
use super::lro::{Lro, Pattern};
use super::model::TypeModel;
use super::ops::{Op, Param};
use super::paths::Seg;
use super::paths::{self, Scope};
use super::spec::Store;
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
    let name_param = name_param(t);
    if let Some(rule) = name_param.and_then(name_rule) {
        above.push(rule);
    }
    // Bodies and actions first: they decide depends_on.
    let create = create_body(cx, i, t, &place)?;
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
    placement(cx, i, default_ns, &place, &mut n);
    let tracked = shape(cx, t, name_param, &place, &mut n)?;
    operations(cx, t, &place, &mut n);
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

/// The parameter that names resources of the type, as its PUT (or GET) declares it.
fn name_param(t: &TypeModel) -> Option<&Param> {
    t.name_param.as_ref().and_then(|np| {
        [&t.put, &t.get]
            .into_iter()
            .flatten()
            .find_map(|o| o.param(np))
    })
}

/// The comment line stating the name's pattern and length, when the spec gives them.
fn name_rule(p: &Param) -> Option<String> {
    match (&p.pattern, p.max_length) {
        (Some(pat), Some(max)) => {
            Some(format!("names must match {pat} (at most {max} characters)"))
        }
        (Some(pat), None) => Some(format!("names must match {pat}")),
        (None, Some(max)) => Some(format!("names are at most {max} characters")),
        (None, None) => None,
    }
}

/// `create_body`: from the PUT, or, without one, a minimal body of the GET's schema.
fn create_body(
    cx: &mut Ctx,
    i: usize,
    t: &TypeModel,
    place: &str,
) -> Result<(Node, Option<String>), InitError> {
    match &t.put {
        Some(put) => body(cx, i, put, true, &format!("{place}.create_body")),
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
            Ok((Node::from_json(&v), None))
        }
    }
}

/// Where the type lives: namespace, api_version, path, parent or scope, depends_on.
fn placement(cx: &mut Ctx, i: usize, default_ns: &str, place: &str, n: &mut Node) {
    let model = cx.model;
    let t = &model.types[i];
    if t.namespace != default_ns {
        n.push("namespace", Node::str(t.namespace.clone()));
    }
    if let Some(v) = t.spec().and_then(|s| cx.specs[s].version.clone())
        && ctx::is_api_version(&v)
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
                if let Node::Map(entries) = n {
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
}

/// What the type is: kind, singleton or names, etag, provisioning_state, skus. True when it
/// is tracked.
fn shape(
    cx: &mut Ctx,
    t: &TypeModel,
    name_param: Option<&Param>,
    place: &str,
    n: &mut Node,
) -> Result<bool, InitError> {
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
    Ok(tracked)
}

/// How its operations run: `async`, and per-operation LRO patterns; those the spec does not
/// state are left to `async: true`.
fn operations(cx: &mut Ctx, t: &TypeModel, place: &str, n: &mut Node) {
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

/// The LRO entry of one operation: the node for `lro.<op>`, or `None` when the pattern is
/// not stated (the type's `async: true` covers it); the TODO goes on the entry or above.
pub(crate) fn lro_node(l: &Lro) -> Option<Node> {
    let pattern = l.pattern?;
    Some(match &l.final_state_via {
        Some(f) => {
            let mut m = Node::map();
            m.push("pattern", Node::str(pattern.word()));
            m.push("final_state_via", Node::str(f.clone()));
            m
        }
        None => Node::str(pattern.word()),
    })
}

/// Facts from the PUT body schema and the GET/PUT response schemas.
pub(crate) fn type_facts(store: &Store, t: &TypeModel) -> Result<Facts, InitError> {
    let mut schemas = Vec::new();
    if let Some(s) = t.put.as_ref().and_then(|o| o.body_schema.clone()) {
        schemas.push(s);
    }
    for op in [&t.get, &t.put].into_iter().flatten() {
        if let Some(s) = op
            .success()
            .find(|r| r.status() == Some(200))
            .and_then(|r| r.schema.clone())
        {
            schemas.push(s);
        }
    }
    let mut f = Facts::default();
    for s in schemas {
        let g = bodies::facts(store, &s)?;
        f.has_location |= g.has_location;
        f.location_required |= g.location_required;
        f.tracked_base |= g.tracked_base;
        f.etag |= g.etag;
        f.provisioning_state |= g.provisioning_state;
    }
    Ok(f)
}

/// Does the spec let clients send If-Match on a write?
pub(crate) fn if_match(t: &TypeModel) -> bool {
    [&t.put, &t.patch, &t.delete]
        .into_iter()
        .flatten()
        .any(|o| o.has_header_param("If-Match"))
}

/// What an extension type extends: a type of this file when the prefix is one, else a fixed
/// resource id built from the prefix, with a TODO either way.
pub(crate) fn extends(cx: &mut Ctx, i: usize, prefix: &[Seg], place: &str) -> Entry {
    let model = cx.model;
    let joined: String = prefix
        .iter()
        .map(|s| match s {
            Seg::Lit(l) => format!("/{l}"),
            Seg::Param(p) => format!("/{{{p}}}"),
        })
        .collect();
    // Another provider's (or our own) resource type.
    if let Some(p) = paths::parse(&joined).filter(|p| !p.chain.is_empty() && p.tail.is_empty()) {
        let segs: Vec<String> = p.chain.iter().map(|(s, _)| s.clone()).collect();
        if let Some(j) = model.by_segments(&p.namespace, &segs).filter(|&j| j != i) {
            let mut e = Entry::new("extends", Node::str(model.types[j].name.clone()));
            e.comment(cx.todo(place, &format!("the spec puts it under {joined}")));
            return e;
        }
    }
    // Any resource (`{resourceUri}`, `{scope}`): guess the first top-level type of the file.
    let candidates: Vec<usize> = model
        .order()
        .into_iter()
        .filter(|&j| {
            let t = &model.types[j];
            j != i
                && t.parent.is_none()
                && t.put.is_some()
                && !matches!(t.scope, Scope::Extension(_))
        })
        .collect();
    // Prefer an ordinary resource-group type, then any resource-group type, then any.
    let in_rg = |j: &usize| model.types[*j].scope == Scope::ResourceGroup;
    let guess = candidates
        .iter()
        .copied()
        .find(|j| in_rg(j) && model.types[*j].fixed_name.is_none())
        .or_else(|| candidates.iter().copied().find(in_rg))
        .or(candidates.first().copied());
    if let [Seg::Param(p)] = prefix
        && let Some(j) = guess
    {
        let mut e = Entry::new("extends", Node::str(model.types[j].name.clone()));
        e.comment(cx.todo(
            place,
            &format!(
                "{{{p}}} is any resource; a type of this file is a guess, or give a resource id"
            ),
        ));
        return e;
    }
    let id: String = prefix
        .iter()
        .map(|s| match s {
            Seg::Lit(l) => format!("/{l}"),
            Seg::Param(p) if p.eq_ignore_ascii_case("subscriptionId") => {
                format!("/{}", super::ctx::PLACEHOLDER_SUBSCRIPTION)
            }
            Seg::Param(p) => format!("/TODO-{p}"),
        })
        .collect();
    let id = if id.is_empty() { "/".to_string() } else { id };
    let mut e = Entry::new("extends", Node::str(id));
    e.comment(cx.todo(
        place,
        &format!("the resource this extends ({joined}); fill in an existing resource id"),
    ));
    e
}

/// The action entry for a POST `{resource}/{name}`.
pub(crate) fn action_node(
    cx: &mut Ctx,
    i: usize,
    name: &str,
    op: &Op,
    place: &str,
) -> Result<Item, InitError> {
    let l = lro::classify(op);
    let mut m = Node::map();
    m.push("name", Node::str(name));
    let mut item_todos = Vec::new();
    match l.pattern {
        Some(p) => {
            let e = m.push("lro", Node::str(p.word()));
            if let Some(t) = &l.todo {
                e.comment(cx.todo(&format!("{place}.lro"), t));
            }
            if let Some(f) = &l.final_state_via
                && p != Pattern::Sync
            {
                m.push("final_state_via", Node::str(f.clone()));
            }
        }
        None => {
            let e = m.push("long_running", Node::bool(true));
            if let Some(t) = &l.todo {
                e.comment(cx.todo(&format!("{place}.long_running"), t));
            }
        }
    }
    if op.body_name.is_some() {
        let (node, comment) = body(cx, i, op, false, &format!("{place}.body"))?;
        let e = m.push("body", node);
        if let Some(c) = comment {
            e.comment(c);
        }
    }
    match l.result_status.as_slice() {
        [] => item_todos.push(cx.todo(
            &format!("{place}.result"),
            "the spec states only 202; the status of the final answer is not stated",
        )),
        codes => {
            let status = match codes {
                [one] => Node::Scalar(json!(one)),
                many => Node::Seq(
                    many.iter()
                        .map(|c| Item::new(Node::Scalar(json!(c))))
                        .collect(),
                ),
            };
            let mut r = Node::map();
            r.push("status", status);
            m.push("result", r);
        }
    }
    let mut item = Item::new(m);
    item.above = item_todos;
    Ok(item)
}

pub(crate) fn set_pointer(body: &mut Value, pointer: &str, v: Value) {
    if let Some(slot) = body.pointer_mut(pointer) {
        *slot = v;
    }
}
