//! Records of what a front end did beyond single operations, for the rules that judge them:
//! a data-plane operation followed through its status monitor, a write on a task API followed
//! through its task and resource, and a resource-group style sweep of deletes.

use serde::Serialize;

use super::flow::{End, Flow};

/// A status-monitor operation: its flow (the monitor polls, the re-read after the end, the
/// final-state read) as the follower saw it.
#[derive(Debug, Clone, Serialize)]
pub struct MonitorRecord {
    pub flow: Flow,
}

/// Which write a task record follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TaskWrite {
    Create,
    Update,
    Delete,
}

/// A write on a task API, its task and the resource it made or changed.
#[derive(Debug, Clone, Serialize)]
pub struct TaskRecord {
    pub write: TaskWrite,
    /// The write's exchange.
    pub initial: usize,
    pub task_id: Option<String>,
    /// The task collection read right after the write, and the task read that followed it.
    pub listing: Option<(usize, usize)>,
    /// Reads of the task, in order (including re-reads after its end).
    pub task_reads: Vec<usize>,
    pub task_end: End,
    /// Reads of the resource after the task completed (including re-reads after it settled).
    pub resource_reads: Vec<usize>,
    pub resource_end: End,
}

/// A sweep: deletes in shuffled passes until no progress, then a read of each resource.
#[derive(Debug, Clone, Serialize)]
pub struct SweepRecord {
    pub deletes: Vec<usize>,
    /// Each swept URL and the read of it after the last pass.
    pub finals: Vec<(String, usize)>,
    pub passes: u32,
}
