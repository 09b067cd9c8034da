//! `rpconform init`: a first target file (format v2) from the OpenAPI specs of an ARM
//! resource provider — OpenAPI 2.0 in the azure-rest-api-specs style
//! (`resource-manager/<RP>/stable|preview/<version>/<file>.json` with `x-ms-examples`) or
//! OpenAPI 3 as TypeSpec emits it, JSON or YAML.
//!
//! The pipeline: [`spec`] loads documents and follows `$ref`s (with a built-in stand-in for
//! ARM's common types when that file is absent); [`ops`] reads each operation into one shape
//! for both OpenAPI versions; [`model`] finds the resource types from the PUT paths ([`paths`]
//! parses scope, namespace, nesting and fixed names) and attaches PATCH / DELETE / GET,
//! POST actions and SKU lists; [`lro`] reads each operation's long-running pattern;
//! [`bodies`] takes bodies from the examples or builds them from schemas and reads the schema
//! facts (tracked, etag, provisioningState); [`build`] lays out the target document with a
//! `# TODO: ...` comment wherever the spec did not decide ([`build_type`] does one type,
//! [`ctx`] carries what they share); [`emit`] writes it, [`quote`] its scalars.
//!
//! YAML is written by [`emit`], a small emitter, not serde_yaml: the file's value is in its
//! comments (TODOs at the exact key or body field they are about), which serde_yaml cannot
//! write, and splicing comments into its output at "known keys" breaks on the keys every type
//! repeats. The emitter quotes conservatively and its output is tested to read back through
//! serde_yaml and marked-yaml (the target parser's reader) unchanged.

mod bodies;
mod build;
mod build_type;
mod ctx;
mod dup_keys;
mod emit;
mod lro;
mod model;
mod ops;
mod paths;
mod quote;
pub(crate) mod spec;

use std::path::PathBuf;

/// Choices the specs cannot make.
#[derive(Debug, Clone)]
pub struct InitOptions {
    /// `location:` of the target (also what `${target.location}` in bodies becomes).
    pub location: String,
    /// Name of the resource group the run creates.
    pub resource_group: String,
    /// The subscription; `None` writes a placeholder GUID with a TODO.
    pub subscription: Option<String>,
    /// The folder the target file is written to: `openapi:` names the specs relative to it
    /// (`None`: as given).
    pub target_dir: Option<PathBuf>,
}

impl Default for InitOptions {
    fn default() -> Self {
        InitOptions {
            location: "eastus".into(),
            resource_group: "rpconform-ci".into(),
            subscription: None,
            target_dir: None,
        }
    }
}

/// A generated target file.
#[derive(Debug, Clone)]
pub struct InitOutput {
    /// The target file (YAML, format v2, with `# TODO:` comments).
    pub yaml: String,
    /// The type keys written, in file order.
    pub types: Vec<String>,
    /// Every TODO written, as `where: what` (`types.widgets.lro.put: ...`).
    pub todos: Vec<String>,
    /// Things worth knowing that are not in the file (built-in common types used...).
    pub warnings: Vec<String>,
}

/// Why no target file could be made.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error("no OpenAPI spec given")]
    NoSpecs,
    #[error("cannot read {}{}: {source}", path.display(), referenced_from.as_ref().map(|f| format!(" (referenced from {f})")).unwrap_or_default())]
    Io {
        path: PathBuf,
        referenced_from: Option<String>,
        source: std::io::Error,
    },
    #[error("{}: {}", position(path, *line, *column), strip_position(message))]
    Parse {
        path: PathBuf,
        /// 1-based; 0 when unknown.
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{at}: cannot resolve $ref `{reference}`: {reason}")]
    Ref {
        /// `file#/json/pointer` of the object holding the ref.
        at: String,
        reference: String,
        reason: String,
    },
    #[error("{}: not an OpenAPI document: {reason}", path.display())]
    NotOpenApi { path: PathBuf, reason: String },
    #[error("no ARM resource type found in {}: no PUT on a path like /subscriptions/{{subscriptionId}}/resourceGroups/{{resourceGroupName}}/providers/<Namespace>/<type>/{{name}}", files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", "))]
    NoResourceTypes { files: Vec<PathBuf> },
}

fn position(path: &std::path::Path, line: usize, column: usize) -> String {
    match (line, column) {
        (0, _) => path.display().to_string(),
        (l, 0) => format!("{}:{l}", path.display()),
        (l, c) => format!("{}:{l}:{c}", path.display()),
    }
}

/// serde's messages end in ` at line L column C`, which the error already says up front.
fn strip_position(message: &str) -> &str {
    match message.rfind(" at line ") {
        Some(i) => &message[..i],
        None => message,
    }
}

/// Write a target file from the OpenAPI specs of one RP (several files of one api-version,
/// or of several namespaces). Missing example files become TODOs; unreadable or malformed
/// specs, unresolvable refs and specs without any ARM resource type are errors.
pub fn target_from_openapi(specs: &[PathBuf], opts: &InitOptions) -> Result<InitOutput, InitError> {
    if specs.is_empty() {
        return Err(InitError::NoSpecs);
    }
    let store = spec::Store::default();
    let mut read = Vec::new();
    for (i, path) in specs.iter().enumerate() {
        read.push(ops::read_spec(&store, path, i)?);
    }
    let model = model::build(&read);
    if model.types.iter().all(|t| t.put.is_none()) {
        return Err(InitError::NoResourceTypes {
            files: specs.to_vec(),
        });
    }
    let doc = build::target(&store, &read, &model, specs, opts)?;
    let warnings = store.warnings.borrow().clone();
    Ok(InitOutput {
        yaml: emit::write_document(&doc.header, &doc.root),
        types: model
            .order()
            .into_iter()
            .map(|i| model.types[i].name.clone())
            .collect(),
        todos: doc.todos,
        warnings,
    })
}
