//! The reference RP's own tests: one test binary, each file of `tests/` a module of it (one
//! link of the crate instead of one per file).

#[path = "api.rs"]
mod api;
mod common;
#[path = "dataplane.rs"]
mod dataplane;
#[path = "faults.rs"]
mod faults;
#[path = "front_door_faults.rs"]
mod front_door_faults;
#[path = "gate.rs"]
mod gate;
#[path = "lifecycle.rs"]
mod lifecycle;
#[path = "narrow_faults.rs"]
mod narrow_faults;
#[path = "shapes.rs"]
mod shapes;
#[path = "tasks.rs"]
mod tasks;
#[path = "variants.rs"]
mod variants;
#[path = "variants_ops.rs"]
mod variants_ops;
