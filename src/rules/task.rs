//! TASK: task-based APIs (seed 004), judged on the record of one write: its answer, the task's
//! reads and the resource's reads after the task completed.

use serde_json::Value;

use super::flow::End;
use super::{Ledger, Registry, TaskRecord, TaskWrite};
use crate::http::{Exchange, cut};
use crate::target::TaskApi;

/// TASK rules are judged only where a test's action states them (the selection reads it).
pub(super) const SHOWS: (super::Shows, &[(&str, super::Shows)]) = (super::Shows::Stated, &[]);

fn nonempty(v: Option<&Value>) -> bool {
    v.and_then(Value::as_str)
        .is_some_and(|s| !s.trim().is_empty())
}

fn body(x: &Exchange) -> Value {
    x.response
        .as_ref()
        .and_then(|r| r.json.clone())
        .unwrap_or(Value::Null)
}

pub(super) fn judge(
    l: &mut Ledger,
    reg: &Registry,
    api: &TaskApi,
    rec: &TaskRecord,
    exs: &[Exchange],
) {
    let w = &exs[rec.initial];
    match &rec.task_id {
        None => {
            l.fail(
                "TASK-01",
                format!("a body with a non-empty `{}`", api.task_id_field),
                format!(
                    "{} {}",
                    w.status().unwrap_or(0),
                    cut(
                        &w.response
                            .as_ref()
                            .map(|r| r.body.clone())
                            .unwrap_or_default(),
                        160
                    )
                ),
                Some(w.seq),
                None,
            );
            return;
        }
        Some(id) => {
            let reused = reg.task_id_used(id, w.seq);
            // The first write that got an id another write got too holds no fresh id either.
            let shared = reg.task_id_shared(id, w.seq);
            l.check(
                "TASK-01",
                reused.is_none() && shared.is_none(),
                Some(w.seq),
                || {
                    (
                        "a taskId no other write received".into(),
                        match reused {
                            Some(first) => {
                                format!("`{id}` was already returned by exchange #{first}")
                            }
                            None => format!(
                                "`{id}` was returned to exchange #{} too",
                                shared.unwrap_or(0)
                            ),
                        },
                    )
                },
            );
            // A task id handed out before names another write's task: its reads, and the
            // resource reads that wait on it, say nothing about this write.
            if let Some(c) = l.cause_among([w.seq], &["TASK-01"]) {
                for rule in [
                    "TASK-02", "TASK-03", "TASK-04", "TASK-06", "TASK-07", "TASK-08",
                ] {
                    l.blocked(
                        rule,
                        &c,
                        "the taskId was handed out before, so the task read under it may be another write's",
                    );
                }
                return;
            }
        }
    }
    let id = rec.task_id.clone().unwrap_or_default();
    if let Some((li, ti)) = rec.listing {
        let status = body(&exs[ti])
            .get(&api.status_field)
            .and_then(Value::as_str)
            .map(str::to_string);
        let running = status
            .as_deref()
            .is_some_and(|s| s == api.task_states[0] || s == api.task_states[1]);
        if running {
            let listed = exs[li]
                .response
                .as_ref()
                .is_some_and(|r| r.body.contains(&id));
            l.check("TASK-04", listed, Some(exs[li].seq), || {
                (
                    "the task list to include the running task".into(),
                    format!("{id} not listed"),
                )
            });
        }
    }
    task_reads(l, api, rec, exs);
    resource_reads(l, api, rec, exs);
}

/// TASK-02 and TASK-03 over the task's reads.
fn task_reads(l: &mut Ledger, api: &TaskApi, rec: &TaskRecord, exs: &[Exchange]) {
    let mut highest = 0usize;
    let mut terminal_seen = false;
    for &i in &rec.task_reads {
        let x = &exs[i];
        let seq = Some(x.seq);
        let b = body(x);
        let st = x
            .response
            .as_ref()
            .filter(|r| r.status == 200)
            .and_then(|_| b.get(&api.status_field))
            .and_then(Value::as_str);
        let Some(idx) = st.and_then(|s| api.task_states.iter().position(|x| x == s)) else {
            l.fail(
                "TASK-02",
                format!("200 with a status among {}", api.task_states.join(", ")),
                format!("{} {}", x.status().unwrap_or(0), super::words::text(st)),
                seq,
                None,
            );
            continue;
        };
        let back = idx < highest || (highest >= 2 && idx != highest);
        l.check("TASK-02", !back, seq, || {
            (
                format!("no move back from {}", api.task_states[highest]),
                format!("status {}", api.task_states[idx]),
            )
        });
        highest = highest.max(idx);
        if idx >= 2 && !terminal_seen {
            terminal_seen = true;
            if idx == 2 {
                let create = rec.write == TaskWrite::Create;
                let ok = b.get("response").is_some_and(Value::is_object)
                    && (!create
                        || b.pointer(&api.resource_id_pointer)
                            .is_some_and(|v| !v.is_null()));
                l.check("TASK-03", ok, seq, || {
                    (
                        format!(
                            "a `response` object{}",
                            if create {
                                format!(" with {}", api.resource_id_pointer)
                            } else {
                                String::new()
                            }
                        ),
                        cut(&b.to_string(), 200),
                    )
                });
            } else {
                l.check(
                    "TASK-03",
                    nonempty(b.pointer(&api.task_error_pointer)),
                    seq,
                    || {
                        (
                            format!("a non-empty cause at {}", api.task_error_pointer),
                            cut(&b.to_string(), 200),
                        )
                    },
                );
            }
        }
    }
    if rec.task_end == End::TimedOut {
        l.fail(
            "TASK-02",
            "processing-completed or processing-error within the deadline",
            format!(
                "still {} after {} reads",
                api.task_states[highest],
                rec.task_reads.len()
            ),
            rec.task_reads.last().map(|i| exs[*i].seq),
            None,
        );
    }
}

/// TASK-05..08 over the resource's reads after its task completed.
fn resource_reads(l: &mut Ledger, api: &TaskApi, rec: &TaskRecord, exs: &[Exchange]) {
    let [pending, active, deleting, error] = &api.resource_states;
    let mut left_pending = false;
    let mut settled = false;
    for &i in &rec.resource_reads {
        let x = &exs[i];
        let seq = Some(x.seq);
        let code = x.status().unwrap_or(0);
        let b = body(x);
        let sync = (code == 200 || code == 404) && b.get(&api.task_id_field).is_none();
        l.check("TASK-05", sync, seq, || {
            (
                "200 or 404 with the data itself, never 202 or a taskId".into(),
                format!("{code} {}", cut(&b.to_string(), 160)),
            )
        });
        if !sync {
            continue;
        }
        let st = b
            .get(&api.resource_status_field)
            .and_then(Value::as_str)
            .unwrap_or("");
        if rec.write == TaskWrite::Delete {
            if code == 404 {
                l.pass("TASK-08");
            } else {
                l.check("TASK-08", st == deleting, seq, || {
                    (
                        format!("{deleting}, or 404, after the DELETE task completed"),
                        Value::from(st).to_string(),
                    )
                });
            }
            continue;
        }
        let known = [pending, active, deleting, error].iter().any(|s| *s == st);
        l.check("TASK-06", code == 200 && known, seq, || {
            (
                format!("200 with a status among {pending}, {active}, {deleting}, {error}"),
                format!("{code} {}", Value::from(st)),
            )
        });
        if st == pending {
            l.check("TASK-06", !left_pending, seq, || {
                (
                    format!("no return to {pending} once the resource left it"),
                    st.to_string(),
                )
            });
        } else {
            left_pending = true;
        }
        if settled && st != active && st != error {
            l.fail(
                "TASK-06",
                format!("the resource to stay {active} or {error} once it got there"),
                format!("{st} on a later read"),
                seq,
                None,
            );
        }
        if st == active || st == error {
            settled = true;
        }
        if st == error {
            l.check(
                "TASK-07",
                nonempty(b.pointer(&api.resource_error_pointer)),
                seq,
                || {
                    (
                        format!("error details at {}", api.resource_error_pointer),
                        cut(&b.to_string(), 200),
                    )
                },
            );
        }
    }
    if rec.resource_end == End::TimedOut {
        let (rule, want) = if rec.write == TaskWrite::Delete {
            ("TASK-08", "404 within the deadline")
        } else {
            ("TASK-06", "active or error within the deadline")
        };
        // Reads answered with a task instead of the resource (TASK-05) show no state to wait for.
        let reads = rec.resource_reads.iter().map(|i| exs[*i].seq);
        if let Some(c) = l.cause_among(reads, &["TASK-05"]) {
            l.blocked(
                rule,
                &c,
                "the resource's reads were answered with a task, not its state",
            );
            return;
        }
        l.fail(
            rule,
            want,
            format!("not reached after {} reads", rec.resource_reads.len()),
            rec.resource_reads.last().map(|i| exs[*i].seq),
            None,
        );
    }
}

#[cfg(test)]
#[path = "task_tests.rs"]
pub(crate) mod tests;

#[cfg(test)]
#[path = "task_causal_tests.rs"]
mod causal_tests;
