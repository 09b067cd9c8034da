//! The resource types of a set of specs, found from their PUT paths, with the operations that
//! act on each: PUT, PATCH, DELETE and GET on the instance path, POST actions under it, and a
//! `.../skus` GET. Operations that belong to no type (provider-level actions, collection
//! lists aside) are kept as `uncovered` so the generated file can say so.

use super::ops::{Method, Op, Spec};
use super::paths::{self, ArmPath, Name, Scope, Seg};
use std::collections::HashMap;

/// One resource type.
#[derive(Debug)]
pub(crate) struct TypeModel {
    /// Identity (scope shape, namespace, type segments), see [`ArmPath::type_key`].
    pub id: String,
    /// The key in the target file.
    pub name: String,
    pub segment: String,
    pub namespace: String,
    pub scope: Scope,
    /// Something about the scope the format cannot say.
    pub scope_note: Option<String>,
    pub parent: Option<usize>,
    /// A fixed word in place of the name (`.../configurations/default`).
    pub fixed_name: Option<String>,
    /// The path parameter naming instances.
    pub name_param: Option<String>,
    pub put: Option<Op>,
    pub patch: Option<Op>,
    pub delete: Option<Op>,
    pub get: Option<Op>,
    pub actions: Vec<(String, Op)>,
    pub skus: bool,
}

impl TypeModel {
    /// The spec the type was found in (its PUT's, else its GET's).
    pub fn spec(&self) -> Option<usize> {
        self.put
            .as_ref()
            .or(self.get.as_ref())
            .or(self.patch.as_ref())
            .map(|o| o.spec)
    }
}

#[derive(Debug, Default)]
pub(crate) struct Model {
    pub types: Vec<TypeModel>,
    /// `METHOD path: why` for operations no type covers.
    pub uncovered: Vec<String>,
}

impl Model {
    fn find(&self, id: &str) -> Option<usize> {
        self.types.iter().position(|t| t.id == id)
    }

    /// The type an id-like (namespace, segments) names, if it is one of ours.
    pub fn by_segments(&self, namespace: &str, segs: &[String]) -> Option<usize> {
        self.types.iter().position(|t| {
            t.namespace.eq_ignore_ascii_case(namespace) && {
                let mine = self.segments_of(t);
                mine.len() == segs.len()
                    && mine
                        .iter()
                        .zip(segs)
                        .all(|(a, b)| a.eq_ignore_ascii_case(b))
            }
        })
    }

    fn segments_of(&self, t: &TypeModel) -> Vec<String> {
        let mut v = vec![t.segment.clone()];
        let mut cur = t.parent;
        while let Some(p) = cur {
            v.push(self.types[p].segment.clone());
            cur = self.types[p].parent;
        }
        v.reverse();
        v
    }

    /// Is `a` an ancestor of `b`?
    pub fn is_ancestor(&self, a: usize, b: usize) -> bool {
        let mut cur = self.types[b].parent;
        while let Some(p) = cur {
            if p == a {
                return true;
            }
            cur = self.types[p].parent;
        }
        false
    }

    /// Types in output order: each top-level type followed by its descendants.
    pub fn order(&self) -> Vec<usize> {
        let mut out = Vec::new();
        fn visit(m: &Model, i: usize, out: &mut Vec<usize>) {
            out.push(i);
            for (j, t) in m.types.iter().enumerate() {
                if t.parent == Some(i) {
                    visit(m, j, out);
                }
            }
        }
        for (i, t) in self.types.iter().enumerate() {
            if t.parent.is_none() {
                visit(self, i, &mut out);
            }
        }
        out
    }
}

pub(crate) fn build(specs: &[Spec]) -> Model {
    let mut m = Model::default();
    // Types from PUT paths first, so other operations find them whatever the order.
    for op in specs.iter().flat_map(|s| &s.ops) {
        if op.method != Method::Put {
            continue;
        }
        let Some(p) = paths::parse(&op.path).filter(|p| !p.chain.is_empty()) else {
            m.uncovered
                .push(format!("{}: not a resource path", op.describe()));
            continue;
        };
        if !p.tail.is_empty() {
            m.uncovered
                .push(format!("{}: not a resource instance path", op.describe()));
            continue;
        }
        let idx = ensure(&mut m, &p, p.chain.len());
        let t = &mut m.types[idx];
        if t.put.is_some() {
            m.uncovered.push(format!(
                "{}: a second PUT path for the type `{}`",
                op.describe(),
                t.segment
            ));
        } else {
            t.put = Some(op.clone());
        }
    }
    for op in specs.iter().flat_map(|s| &s.ops) {
        if op.method == Method::Put {
            continue;
        }
        let Some(p) = paths::parse(&op.path) else {
            if op.method != Method::Get {
                m.uncovered
                    .push(format!("{}: not a resource path", op.describe()));
            }
            continue;
        };
        let owner = (!p.chain.is_empty())
            .then(|| m.find(&p.type_key(p.chain.len())))
            .flatten();
        match (p.tail.as_slice(), owner) {
            ([], Some(i)) => {
                let t = &mut m.types[i];
                let slot = match op.method {
                    Method::Get => &mut t.get,
                    Method::Patch => &mut t.patch,
                    Method::Delete => &mut t.delete,
                    _ => {
                        m.uncovered
                            .push(format!("{}: POST on a resource", op.describe()));
                        continue;
                    }
                };
                if slot.is_none() {
                    *slot = Some(op.clone());
                }
            }
            ([Seg::Lit(word)], Some(i)) => match op.method {
                Method::Post => m.types[i].actions.push((word.clone(), op.clone())),
                Method::Get if word.eq_ignore_ascii_case("skus") => m.types[i].skus = true,
                Method::Get => {}
                _ => m
                    .uncovered
                    .push(format!("{}: not a resource operation", op.describe())),
            },
            ([], None) if op.method != Method::Get && !p.chain.is_empty() => m
                .uncovered
                .push(format!("{}: the type has no PUT", op.describe())),
            ([Seg::Lit(_)], None) if op.method == Method::Post => {
                let why = if p.chain.is_empty() {
                    "a provider-level action"
                } else {
                    "an action on a type with no PUT"
                };
                m.uncovered.push(format!("{}: {why}", op.describe()))
            }
            _ if op.method != Method::Get => m
                .uncovered
                .push(format!("{}: not a resource operation", op.describe())),
            _ => {}
        }
    }
    name_types(&mut m);
    m
}

/// The type at `depth` of `p`'s chain, created with its ancestors when new.
fn ensure(m: &mut Model, p: &ArmPath, depth: usize) -> usize {
    let id = p.type_key(depth);
    if let Some(i) = m.find(&id) {
        return i;
    }
    let parent = (depth > 1).then(|| ensure(m, p, depth - 1));
    let (segment, name) = &p.chain[depth - 1];
    let (fixed_name, name_param) = match name {
        Name::Fixed(f) => (Some(f.clone()), None),
        Name::Param(n) => (None, Some(n.clone())),
    };
    m.types.push(TypeModel {
        id,
        name: String::new(),
        segment: segment.clone(),
        namespace: p.namespace.clone(),
        scope: p.scope.clone(),
        scope_note: p.note.clone(),
        parent,
        fixed_name,
        name_param,
        put: None,
        patch: None,
        delete: None,
        get: None,
        actions: Vec::new(),
        skus: false,
    });
    m.types.len() - 1
}

/// Keys for the target file: the segment, else `parent-segment`, else a numbered one.
fn name_types(m: &mut Model) {
    let mut taken: HashMap<String, usize> = HashMap::new();
    for i in m.order() {
        let t = &m.types[i];
        let mut name = t.segment.clone();
        if taken.contains_key(&name.to_ascii_lowercase()) {
            name = match (t.parent, &t.fixed_name) {
                (Some(p), _) => format!("{}-{}", m.types[p].name, t.segment),
                (None, Some(f)) => format!("{}-{f}", t.segment),
                (None, None) => format!("{}-{}", t.segment, t.scope.word()),
            };
        }
        let base = name.clone();
        let mut n = 2;
        while taken.contains_key(&name.to_ascii_lowercase()) {
            name = format!("{base}-{n}");
            n += 1;
        }
        taken.insert(name.to_ascii_lowercase(), i);
        m.types[i].name = name;
    }
}
