//! The resource model of the ARM surface as URLs show it: resource types ([`Kind`]), where a
//! resource lives ([`Scope`]), one resource ([`ResRef`]) or collection ([`CollRef`]), and every
//! route ([`Route`]). `parse` turns a request path into a [`Route`], matching fixed segments
//! case-insensitively; ids, types and store keys are derived here.
//!
//! Store keys are lowercased ids (names keep their case under the case-sensitivity fault
//! knobs, see [`Fold`]); a key `a` contains `b` when `b` starts with `a/`.

mod parse;

pub use parse::{is_singleton_name, parse, percent_decode};

use crate::{FABRIKAM_NAMESPACE, NAMESPACE};

/// The resource types of the RP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `{rg}/providers/Microsoft.Contoso/widgets/{w}`: tracked, asynchronous.
    Widget,
    /// `{widget}/gadgets/{g}`: nested proxy, asynchronous.
    Gadget,
    /// `{gadget}/sprockets/{s}`: nested proxy, asynchronous.
    Sprocket,
    /// `{rg}/providers/Microsoft.Contoso/links/{l}`: tracked, depends on a widget.
    Link,
    /// `{widget}/configurations/default`: singleton nested proxy, synchronous.
    Configuration,
    /// `/subscriptions/{s}/providers/Microsoft.Contoso/subscriptionWidgets/{n}`: tracked, async.
    SubscriptionWidget,
    /// `/subscriptions/{s}/providers/Microsoft.Contoso/locations/{l}/regionalWidgets/{n}`:
    /// location-based proxy, synchronous.
    RegionalWidget,
    /// `/providers/Microsoft.Contoso/tenantWidgets/{n}`: tenant-level proxy, synchronous.
    TenantWidget,
    /// `{widget}/providers/Microsoft.Contoso/annotations/{n}`: extension proxy, synchronous.
    Annotation,
    /// `{rg}/providers/Microsoft.Fabrikam/gizmos/{n}`: tracked, synchronous, other namespace.
    Gizmo,
}

/// The only name a singleton ([`Kind::Configuration`]) has.
pub const SINGLETON_NAME: &str = "default";

impl Kind {
    /// The collection segment as the canonical id spells it (`widgets`, `regionalWidgets`…).
    pub fn segment(self) -> &'static str {
        match self {
            Kind::Widget => "widgets",
            Kind::Gadget => "gadgets",
            Kind::Sprocket => "sprockets",
            Kind::Link => "links",
            Kind::Configuration => "configurations",
            Kind::SubscriptionWidget => "subscriptionWidgets",
            Kind::RegionalWidget => "regionalWidgets",
            Kind::TenantWidget => "tenantWidgets",
            Kind::Annotation => "annotations",
            Kind::Gizmo => "gizmos",
        }
    }

    /// Tracked types have `location` and `tags`; the others are proxy types.
    pub fn tracked(self) -> bool {
        matches!(
            self,
            Kind::Widget | Kind::Link | Kind::SubscriptionWidget | Kind::Gizmo
        )
    }

    /// Nested types live under a parent resource of this RP.
    pub fn nested(self) -> bool {
        matches!(self, Kind::Gadget | Kind::Sprocket | Kind::Configuration)
    }

    /// Writes of these types start asynchronous operations; the others answer at once.
    pub fn asynchronous(self) -> bool {
        matches!(
            self,
            Kind::Widget | Kind::Gadget | Kind::Sprocket | Kind::Link | Kind::SubscriptionWidget
        )
    }

    /// The provider namespace serving the type.
    pub fn namespace(self) -> &'static str {
        match self {
            Kind::Gizmo => FABRIKAM_NAMESPACE,
            _ => NAMESPACE,
        }
    }

    /// The child types nested under this one.
    pub fn children(self) -> &'static [Kind] {
        match self {
            Kind::Widget => &[Kind::Gadget, Kind::Configuration],
            Kind::Gadget => &[Kind::Sprocket],
            _ => &[],
        }
    }

    /// The methods a single resource of the type answers, for 405 and `Allow`.
    pub fn allowed(self) -> &'static str {
        match self {
            // A singleton cannot be deleted (it exists as long as its parent).
            Kind::Configuration => "GET, HEAD, PUT, PATCH",
            _ => "GET, HEAD, PUT, PATCH, DELETE",
        }
    }
}

/// How names are folded into store keys: lowercase, unless a fault knob says otherwise.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Fold {
    /// `case-sensitive-ids`: every resource name keeps its case.
    pub names: bool,
    /// `nested-case-sensitive`: names of nested types keep their case.
    pub nested: bool,
}

impl Fold {
    fn name(self, name: &str, nested: bool) -> String {
        if self.names || (nested && self.nested) {
            name.to_string()
        } else {
            name.to_ascii_lowercase()
        }
    }
}

/// `/subscriptions/{sub}/resourceGroups/{rg}` as the request spelled it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupRef {
    pub sub: String,
    pub rg: String,
}

impl GroupRef {
    pub fn id(&self) -> String {
        format!("/subscriptions/{}/resourceGroups/{}", self.sub, self.rg)
    }

    /// Store key: ARM matches subscription and group names case-insensitively.
    pub fn key(&self) -> String {
        self.id().to_ascii_lowercase()
    }
}

/// Where a top-level resource lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// In a resource group.
    Group(GroupRef),
    /// Directly in a subscription.
    Subscription(String),
    /// Under a subscription's location: `/subscriptions/{sub}/providers/{ns}/locations/{l}`.
    Location { sub: String, location: String },
    /// At the tenant: `/providers/{ns}`.
    Tenant,
    /// On another resource (extension types): `{resource id}/providers/{ns}`.
    Extension(Box<ResRef>),
}

impl Scope {
    /// Everything before the first type segment, ending in `/providers/{ns}` (plus
    /// `/locations/{l}` for the location scope), as the request spelled it.
    fn prefix_id(&self, ns: &str) -> String {
        match self {
            Scope::Group(g) => format!("{}/providers/{ns}", g.id()),
            Scope::Subscription(s) => format!("/subscriptions/{s}/providers/{ns}"),
            Scope::Location { sub, location } => {
                format!("/subscriptions/{sub}/providers/{ns}/locations/{location}")
            }
            Scope::Tenant => format!("/providers/{ns}"),
            Scope::Extension(r) => format!("{}/providers/{ns}", r.id()),
        }
    }

    /// The key form of [`Scope::prefix_id`].
    fn prefix_key(&self, ns: &str, fold: Fold) -> String {
        match self {
            Scope::Extension(r) => format!("{}/providers/{}", r.key(fold), ns.to_ascii_lowercase()),
            _ => self.prefix_id(ns).to_ascii_lowercase(),
        }
    }

    /// The resource group the scope is in, if any.
    pub fn group(&self) -> Option<&GroupRef> {
        match self {
            Scope::Group(g) => Some(g),
            Scope::Extension(r) => r.scope.group(),
            _ => None,
        }
    }

    /// The subscription the scope is in, if any.
    pub fn sub(&self) -> Option<&str> {
        match self {
            Scope::Group(g) => Some(&g.sub),
            Scope::Subscription(s) | Scope::Location { sub: s, .. } => Some(s),
            Scope::Tenant => None,
            Scope::Extension(r) => r.scope.sub(),
        }
    }
}

/// One resource: its scope and the chain of (type, name) from the top-level resource down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResRef {
    pub scope: Scope,
    pub chain: Vec<(Kind, String)>,
}

impl ResRef {
    pub fn kind(&self) -> Kind {
        self.chain.last().map_or(Kind::Widget, |c| c.0)
    }

    pub fn name(&self) -> &str {
        self.chain.last().map_or("", |c| c.1.as_str())
    }

    fn namespace(&self) -> &'static str {
        self.chain.first().map_or(NAMESPACE, |c| c.0.namespace())
    }

    /// The resource id with canonical fixed segments and names as the request spelled them.
    pub fn id(&self) -> String {
        let mut s = self.scope.prefix_id(self.namespace());
        for (k, n) in &self.chain {
            s.push('/');
            s.push_str(k.segment());
            s.push('/');
            s.push_str(n);
        }
        s
    }

    /// `Microsoft.Contoso/widgets/gadgets`, `Microsoft.Contoso/locations/regionalWidgets`,
    /// `Microsoft.Contoso/annotations` (an extension type names only itself).
    pub fn type_name(&self) -> String {
        let mut s = self.namespace().to_string();
        if matches!(self.scope, Scope::Location { .. }) {
            s.push_str("/locations");
        }
        for (k, _) in &self.chain {
            s.push('/');
            s.push_str(k.segment());
        }
        s
    }

    /// Store key: lowercased, names folded by `fold`.
    pub fn key(&self, fold: Fold) -> String {
        let mut s = self.scope.prefix_key(self.namespace(), fold);
        for (k, n) in &self.chain {
            s.push('/');
            s.push_str(&k.segment().to_ascii_lowercase());
            s.push('/');
            s.push_str(&fold.name(n, k.nested()));
        }
        s
    }

    /// The parent resource, for nested types.
    pub fn parent(&self) -> Option<ResRef> {
        (self.chain.len() > 1).then(|| ResRef {
            scope: self.scope.clone(),
            chain: self.chain[..self.chain.len() - 1].to_vec(),
        })
    }

    /// The top-level resource of the chain (itself when top-level).
    pub fn root(&self) -> ResRef {
        ResRef {
            scope: self.scope.clone(),
            chain: self.chain.iter().take(1).cloned().collect(),
        }
    }

    /// The resource group, if the resource is in one.
    pub fn group(&self) -> Option<&GroupRef> {
        self.scope.group()
    }

    /// The subscription, if the resource is in one.
    pub fn sub(&self) -> Option<&str> {
        self.scope.sub()
    }
}

/// A collection: its scope, its parent (for nested types) and the item type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollRef {
    pub scope: Scope,
    pub parent: Option<ResRef>,
    pub kind: Kind,
}

impl CollRef {
    /// The key prefix shared by every item: `{parent key or scope key}/{segment}/`.
    pub fn key_prefix(&self, fold: Fold) -> String {
        let base = match &self.parent {
            Some(p) => p.key(fold),
            None => self.scope.prefix_key(self.kind.namespace(), fold),
        };
        format!("{base}/{}/", self.kind.segment().to_ascii_lowercase())
    }
}

/// Which operation endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpEndpoint {
    /// The operation resource (Azure-AsyncOperation).
    Status,
    /// The operation result (Location).
    Result,
}

/// How an operation URL is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpShape {
    /// `.../locations/{l}/operationStatuses/{id}`
    Statuses,
    /// `.../locations/{l}/asyncoperations/{id}`
    AsyncOperations,
    /// `.../locations/{l}/operationResults/{id}`
    Results,
    /// `.../locations/{l}/operations/{id}` (a Location when `?monitor=true`)
    Operations,
    /// `{original request path}/operationresults/{id}`
    UnderRequest,
}

/// An operation URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpRoute {
    pub endpoint: OpEndpoint,
    pub shape: OpShape,
    /// The operation id (without a `.{n}` Location generation).
    pub op: String,
    /// The Location generation (`{id}.{n}`), 0 when none.
    pub generation: u64,
    pub sub: String,
    /// The location segment of the subscription-level shapes.
    pub location: Option<String>,
    /// The original request path of [`OpShape::UnderRequest`] URLs.
    pub origin: Option<String>,
}

/// Everything the ARM surface serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    Group(GroupRef),
    Resource(ResRef),
    Collection(CollRef),
    /// `POST {widget}/restart`.
    Restart(ResRef),
    Skus(ResRef),
    Operation(OpRoute),
    /// `/subscriptions/{sub}/providers/{ns}/{type}` of a type that lives in resource groups:
    /// every one of the subscription's, across its groups.
    Across {
        sub: String,
        kind: Kind,
    },
    /// `/providers/{ns}/operations`: the operations API of a namespace.
    ProviderOperations(&'static str),
    /// `PUT /subscriptions/{sub}`: a subscription lifecycle notification.
    Subscription(String),
    /// `POST {group}/moveResources`.
    Move(GroupRef),
}

impl Route {
    /// The methods the route answers, for 405 and `Allow`.
    pub fn allowed(&self) -> &'static str {
        match self {
            Route::Group(_) => "GET, HEAD, PUT, DELETE",
            Route::Resource(r) => r.kind().allowed(),
            Route::Restart(_) => "POST",
            Route::Collection(_)
            | Route::Skus(_)
            | Route::Operation(_)
            | Route::Across { .. }
            | Route::ProviderOperations(_) => "GET, HEAD",
            Route::Subscription(_) => "PUT",
            Route::Move(_) => "POST",
        }
    }

    /// The namespace whose api-versions the route takes (`None`: resource groups).
    pub fn namespace(&self) -> Option<&'static str> {
        match self {
            Route::Group(_) | Route::Subscription(_) | Route::Move(_) => None,
            Route::Resource(r) | Route::Restart(r) | Route::Skus(r) => Some(r.kind().namespace()),
            Route::Collection(c) => Some(c.kind.namespace()),
            Route::Across { kind, .. } => Some(kind.namespace()),
            Route::ProviderOperations(ns) => Some(ns),
            Route::Operation(_) => Some(NAMESPACE),
        }
    }

    /// Whether the route is one of the location-based type (`regionalWidgets`).
    pub fn location_based(&self) -> bool {
        match self {
            Route::Resource(r) => r.kind() == Kind::RegionalWidget,
            Route::Collection(c) => c.kind == Kind::RegionalWidget,
            _ => false,
        }
    }
}
