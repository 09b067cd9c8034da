//! The status monitors of the data-plane surface: how each [`Monitor`] names an operation's
//! phase and where it puts the result and the error, and the monitor body itself.
//!
//! | monitor | statuses | result field | error field |
//! |---|---|---|---|
//! | `operations` | NotStarted, Running, Succeeded, Failed, Canceled | `result` | `error` |
//! | `exports` | Running, Completed, Faulted, Aborted | `result` | `error` |
//! | `analyses` | Running, Succeeded, Failed, Canceled | `success` | `failure` |
//! | `restarts`, `rebuilds` | Running, Succeeded, Failed, Canceled | `result` | `error` |

use std::time::Instant;

use serde_json::{Map, Value, json};

use super::route::Monitor;
use super::store::{Op, Phase};
use crate::faults::Fault;
use crate::settings::Settings;

/// The phase as a reader sees it at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    NotStarted,
    Running,
    Succeeded,
    Failed,
    Canceled,
}

impl Shown {
    /// What `op` shows at `now` (after [`super::store::Store::advance`]).
    pub fn of(op: &Op, now: Instant) -> Shown {
        match op.phase {
            Phase::Running if op.not_started(now) => Shown::NotStarted,
            Phase::Running => Shown::Running,
            Phase::Succeeded => Shown::Succeeded,
            Phase::Failed => Shown::Failed,
            Phase::Canceled => Shown::Canceled,
        }
    }

    pub fn terminal(self) -> bool {
        matches!(self, Shown::Succeeded | Shown::Failed | Shown::Canceled)
    }
}

/// The status value `monitor` reports for `shown`.
pub fn status_name(monitor: Monitor, shown: Shown, settings: &Settings) -> &'static str {
    let custom = monitor == Monitor::Exports;
    match shown {
        Shown::NotStarted => "NotStarted",
        Shown::Running => "Running",
        Shown::Succeeded if custom && !settings.has(Fault::MonDefaultNamesOnCustom) => "Completed",
        Shown::Succeeded => "Succeeded",
        Shown::Failed if custom => "Faulted",
        Shown::Failed => "Failed",
        Shown::Canceled if custom => "Aborted",
        Shown::Canceled => "Canceled",
    }
}

/// The field holding the result of a successful operation.
pub fn result_field(monitor: Monitor) -> &'static str {
    match monitor {
        Monitor::Analyses => "success",
        _ => "result",
    }
}

/// The field holding the error of a failed (or canceled) operation.
pub fn error_field(monitor: Monitor) -> &'static str {
    match monitor {
        Monitor::Analyses => "failure",
        _ => "error",
    }
}

/// The monitor body of `op` at `now`: `{"id", "status", <result>?, <error>?}`.
pub fn body(op: &Op, now: Instant, settings: &Settings) -> Value {
    let mut shown = Shown::of(op, now);
    // `mon-terminal-flips`: a succeeded operation reads Failed on its second terminal read (the
    // one a client makes to confirm the end), then Succeeded again.
    let flipped = shown == Shown::Succeeded
        && op.terminal_reads == 2
        && settings.has(Fault::MonTerminalFlips);
    if flipped {
        shown = Shown::Failed;
    }
    let mut m = Map::new();
    m.insert("id".into(), json!(op.id));
    m.insert(
        "status".into(),
        json!(status_name(op.monitor, shown, settings)),
    );
    let show_result = shown == Shown::Succeeded
        || (!shown.terminal() && settings.has(Fault::MonResultWhileRunning));
    if show_result && let Some(r) = &op.result {
        m.insert(result_field(op.monitor).into(), r.clone());
    }
    let show_error = match shown {
        Shown::Failed if flipped => {
            m.insert(
                error_field(op.monitor).into(),
                json!({"code": "Flipped", "message": "the operation is now reported failed"}),
            );
            false
        }
        Shown::Failed => !settings.has(Fault::MonFailedWithoutError),
        Shown::Canceled => true,
        _ => false,
    };
    if show_error && let Some(e) = &op.error {
        m.insert(
            error_field(op.monitor).into(),
            json!({"code": e.code, "message": e.message}),
        );
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_per_monitor() {
        let s = Settings::default();
        assert_eq!(
            status_name(Monitor::Exports, Shown::Succeeded, &s),
            "Completed"
        );
        assert_eq!(status_name(Monitor::Exports, Shown::Failed, &s), "Faulted");
        assert_eq!(
            status_name(Monitor::Exports, Shown::Canceled, &s),
            "Aborted"
        );
        assert_eq!(
            status_name(Monitor::Analyses, Shown::Succeeded, &s),
            "Succeeded"
        );
        let f = s.with_fault(Fault::MonDefaultNamesOnCustom);
        assert_eq!(
            status_name(Monitor::Exports, Shown::Succeeded, &f),
            "Succeeded"
        );
        assert_eq!(result_field(Monitor::Analyses), "success");
        assert_eq!(error_field(Monitor::Analyses), "failure");
        assert_eq!(error_field(Monitor::Rebuilds), "error");
    }
}
