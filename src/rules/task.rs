//! TASK: task-based APIs (seed 004), judged on the record of one write: its answer, the task's
//! reads and the resource's reads after the task completed.

use serde_json::Value;

use super::flow::End;
use super::{Ledger, Registry, TaskRecord, TaskWrite};
use crate::http::{Exchange, cut};
use crate::target::TaskApi;

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
                format!("{} {st:?}", x.status().unwrap_or(0)),
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
                        format!("{st:?}"),
                    )
                });
            }
            continue;
        }
        let known = [pending, active, deleting, error].iter().any(|s| *s == st);
        l.check("TASK-06", code == 200 && known, seq, || {
            (
                format!("200 with a status among {pending}, {active}, {deleting}, {error}"),
                format!("{code} {st:?}"),
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
pub(crate) mod tests {
    use crate::http::{Exchange, Surface};
    use crate::rules::flow::End;
    use crate::rules::testing::{
        Case, exchange, failing, judged, numbered, on_surface, passing, run_cases,
    };
    use crate::rules::{Outcome, TaskRecord, TaskWrite};
    use serde_json::{Value, json};

    const SUBS: &str = "http://h/v1/subscriptions";
    const SUB: &str = "http://h/v1/subscriptions/7";
    const TASK: &str = "http://h/v1/tasks/t1";

    fn tx(method: &str, url: &str, status: u16, body: Value) -> Exchange {
        on_surface(exchange(method, url, status, &[], body), Surface::Task)
    }

    fn task(status: &str) -> Exchange {
        let mut b = json!({"taskId": "t1", "status": status});
        if status == "processing-completed" {
            b["response"] = json!({"resourceId": 7});
        }
        if status == "processing-error" {
            b["response"] = json!({"error": {"description": "no capacity"}});
        }
        tx("GET", TASK, 200, b)
    }

    fn resource(status: &str) -> Exchange {
        let mut b = json!({"id": 7, "status": status});
        if status == "error" {
            b["error"] = json!({"description": "provisioning failed"});
        }
        tx("GET", SUB, 200, b)
    }

    /// A write (`write`, answered `answer`), its task reads and the resource reads after it.
    struct Rec {
        write: TaskWrite,
        answer: Exchange,
        listing: Option<(Exchange, Exchange)>,
        tasks: Vec<Exchange>,
        task_end: End,
        resources: Vec<Exchange>,
        resource_end: End,
    }

    impl Rec {
        fn create(tasks: Vec<Exchange>, resources: Vec<Exchange>) -> Rec {
            Rec {
                write: TaskWrite::Create,
                answer: tx(
                    "POST",
                    SUBS,
                    202,
                    json!({"taskId": "t1", "status": "received"}),
                ),
                listing: None,
                tasks,
                task_end: End::Finished(crate::lro::Outcome::Succeeded),
                resources,
                resource_end: End::Finished(crate::lro::Outcome::Succeeded),
            }
        }

        fn judge(self, rule: &str) -> Outcome {
            let mut exs = vec![self.answer];
            let listing = self.listing.map(|(l, t)| {
                exs.push(l);
                exs.push(t);
                (exs.len() - 2, exs.len() - 1)
            });
            let first = exs.len();
            exs.extend(self.tasks);
            let task_reads: Vec<usize> = (first..exs.len()).collect();
            let first = exs.len();
            exs.extend(self.resources);
            let resource_reads: Vec<usize> = (first..exs.len()).collect();
            let exs = numbered(exs);
            let rec = TaskRecord {
                write: self.write,
                initial: 0,
                task_id: exs[0]
                    .response
                    .as_ref()
                    .and_then(|r| r.json.as_ref())
                    .and_then(|b| b.get("taskId"))
                    .and_then(Value::as_str)
                    .map(str::to_string),
                listing,
                task_reads,
                task_end: self.task_end,
                resource_reads,
                resource_end: self.resource_end,
            };
            judged(rule, |j| j.task(&rec, &exs))
        }
    }

    fn completed() -> Vec<Exchange> {
        vec![
            task("received"),
            task("processing-in-progress"),
            task("processing-completed"),
        ]
    }

    /// Two creates whose answers carry these task ids.
    fn two_writes(second: &str) -> Outcome {
        let first = Rec::create(completed(), vec![resource("active")]);
        let mut again = Rec::create(completed(), vec![resource("active")]);
        again.answer = tx(
            "POST",
            SUBS,
            202,
            json!({"taskId": second, "status": "received"}),
        );
        // One judge (one registry) for both writes, as in a run.
        judged("TASK-01", |j| {
            for (n, r) in [first, again].into_iter().enumerate() {
                let mut exs = numbered(vec![r.answer]);
                exs[0].seq += n as u64 * 10;
                let id = exs[0]
                    .response
                    .as_ref()
                    .and_then(|r| r.json.as_ref())
                    .and_then(|b| b.get("taskId"))
                    .and_then(Value::as_str)
                    .map(str::to_string);
                let rec = TaskRecord {
                    write: TaskWrite::Create,
                    initial: 0,
                    task_id: id,
                    listing: None,
                    task_reads: Vec::new(),
                    task_end: End::Unseen,
                    resource_reads: Vec::new(),
                    resource_end: End::Unseen,
                };
                j.task(&rec, &exs);
            }
        })
    }

    fn listed(body: Value) -> Outcome {
        let mut r = Rec::create(completed(), vec![resource("active")]);
        r.listing = Some((
            tx("GET", "http://h/v1/tasks", 200, body),
            task("processing-in-progress"),
        ));
        r.judge("TASK-04")
    }

    fn deleted(read: Exchange) -> Outcome {
        let mut r = Rec::create(completed(), vec![read]);
        r.write = TaskWrite::Delete;
        r.answer = tx(
            "DELETE",
            SUB,
            202,
            json!({"taskId": "t1", "status": "received"}),
        );
        r.tasks = vec![task("processing-completed")];
        r.judge("TASK-08")
    }

    /// TASK-01..08, each shown failing and passing.
    pub(crate) const CASES: &[Case] = &[
        failing("TASK-01", "a write answered without taskId", || {
            let mut r = Rec::create(completed(), vec![resource("active")]);
            r.answer = tx("POST", SUBS, 202, json!({"status": "received"}));
            r.judge("TASK-01")
        }),
        failing("TASK-01", "two writes answered one taskId", || {
            two_writes("t1")
        }),
        passing("TASK-01", "two writes, two taskIds", || two_writes("t2")),
        failing(
            "TASK-02",
            "a task back from in-progress to received",
            || {
                let tasks = vec![
                    task("processing-in-progress"),
                    task("received"),
                    task("processing-completed"),
                ];
                Rec::create(tasks, vec![resource("active")]).judge("TASK-02")
            },
        ),
        failing("TASK-02", "a task status outside the four", || {
            Rec::create(vec![task("queued")], Vec::new()).judge("TASK-02")
        }),
        failing("TASK-02", "a task not ended by the deadline", || {
            let mut r = Rec::create(vec![task("received")], Vec::new());
            r.task_end = End::TimedOut;
            r.judge("TASK-02")
        }),
        passing("TASK-02", "received, in progress, completed", || {
            Rec::create(completed(), vec![resource("active")]).judge("TASK-02")
        }),
        failing("TASK-03", "a completed create without resourceId", || {
            let done = tx(
                "GET",
                TASK,
                200,
                json!({"taskId": "t1", "status": "processing-completed", "response": {}}),
            );
            Rec::create(vec![done], Vec::new()).judge("TASK-03")
        }),
        failing("TASK-03", "a processing error without its cause", || {
            let err = tx(
                "GET",
                TASK,
                200,
                json!({"taskId": "t1", "status": "processing-error", "response": {"error": {}}}),
            );
            Rec::create(vec![err], Vec::new()).judge("TASK-03")
        }),
        passing("TASK-03", "a completed create with resourceId", || {
            Rec::create(completed(), vec![resource("active")]).judge("TASK-03")
        }),
        passing("TASK-03", "a processing error with its cause", || {
            Rec::create(vec![task("processing-error")], Vec::new()).judge("TASK-03")
        }),
        failing("TASK-04", "a running task missing from the list", || {
            listed(json!([{"taskId": "t0"}]))
        }),
        passing("TASK-04", "a running task listed", || {
            listed(json!([{"taskId": "t1"}]))
        }),
        failing(
            "TASK-05",
            "a resource read answered 202 with a taskId",
            || {
                let read = tx(
                    "GET",
                    SUB,
                    202,
                    json!({"taskId": "t9", "status": "received"}),
                );
                Rec::create(completed(), vec![read]).judge("TASK-05")
            },
        ),
        passing("TASK-05", "a resource read answered with the data", || {
            Rec::create(completed(), vec![resource("active")]).judge("TASK-05")
        }),
        failing("TASK-06", "a resource status outside the four", || {
            Rec::create(completed(), vec![resource("ready")]).judge("TASK-06")
        }),
        failing("TASK-06", "a resource back to pending", || {
            Rec::create(completed(), vec![resource("active"), resource("pending")]).judge("TASK-06")
        }),
        failing(
            "TASK-06",
            "a resource still pending at the deadline",
            || {
                let mut r = Rec::create(completed(), vec![resource("pending")]);
                r.resource_end = End::TimedOut;
                r.judge("TASK-06")
            },
        ),
        passing("TASK-06", "pending, then active, and it stays", || {
            Rec::create(
                completed(),
                vec![resource("pending"), resource("active"), resource("active")],
            )
            .judge("TASK-06")
        }),
        failing("TASK-07", "a resource in error without details", || {
            let read = tx("GET", SUB, 200, json!({"id": 7, "status": "error"}));
            Rec::create(completed(), vec![read]).judge("TASK-07")
        }),
        passing("TASK-07", "a resource in error with details", || {
            Rec::create(completed(), vec![resource("error")]).judge("TASK-07")
        }),
        failing("TASK-08", "a deleted resource still active", || {
            deleted(resource("active"))
        }),
        passing("TASK-08", "a deleted resource gone", || {
            deleted(tx("GET", SUB, 404, Value::Null))
        }),
        passing("TASK-08", "a deleted resource deleting", || {
            deleted(resource("deleting"))
        }),
    ];

    #[test]
    fn task_cases_show_what_they_say() {
        run_cases(CASES);
    }
}

#[cfg(test)]
mod causal_tests {
    use super::*;
    use crate::rules::testing::{exchange, target, with_seq};
    use crate::rules::{Outcome, RuleTally};
    use serde_json::json;

    fn record(write: TaskWrite, reads: Vec<usize>, end: End) -> TaskRecord {
        TaskRecord {
            write,
            initial: 0,
            task_id: Some("t-1".into()),
            listing: None,
            task_reads: Vec::new(),
            task_end: End::Unseen,
            resource_reads: reads,
            resource_end: end,
        }
    }

    fn get<'a>(t: &'a [RuleTally], rule: &str) -> &'a RuleTally {
        t.iter()
            .find(|x| x.rule == rule)
            .unwrap_or_else(|| panic!("{rule}"))
    }

    #[test]
    fn a_resource_answered_with_tasks_leaves_its_deadline_to_task_05() {
        let t = target();
        let api = t
            .tasks
            .as_ref()
            .expect("the embedded target declares a task API");
        let write = with_seq(
            exchange(
                "DELETE",
                "http://h/v1/s/1",
                202,
                &[],
                json!({"taskId": "t-1"}),
            ),
            1,
        );
        let task_read = |seq| {
            with_seq(
                exchange("GET", "http://h/v1/s/1", 202, &[], json!({"taskId": "t-2"})),
                seq,
            )
        };
        let exs = vec![write, task_read(2), task_read(3)];
        let mut l = Ledger::default();
        judge(
            &mut l,
            &Registry::default(),
            api,
            &record(TaskWrite::Delete, vec![1, 2], End::TimedOut),
            &exs,
        );
        let t8 = get(&l.tallies(), "TASK-08").clone();
        assert_eq!(get(&l.tallies(), "TASK-05").outcome, Outcome::Failed);
        assert_eq!(t8.outcome, Outcome::NotJudged);
        assert!(
            t8.not_judged
                .unwrap()
                .starts_with("TASK-05 failed at exchange #2")
        );
        // Reads that show the resource and a deadline passed: TASK-08 fails.
        let gone_late = with_seq(
            exchange(
                "GET",
                "http://h/v1/s/1",
                200,
                &[],
                json!({"status": "deleting"}),
            ),
            5,
        );
        let exs = vec![exs[0].clone(), gone_late];
        let mut l = Ledger::default();
        judge(
            &mut l,
            &Registry::default(),
            api,
            &record(TaskWrite::Delete, vec![1], End::TimedOut),
            &exs,
        );
        assert_eq!(get(&l.tallies(), "TASK-08").outcome, Outcome::Failed);
    }

    #[test]
    fn a_task_id_another_write_got_leaves_the_task_unjudged_naming_task_01() {
        let t = target();
        let api = t.tasks.as_ref().unwrap();
        let reg = Registry::default();
        let first = with_seq(
            exchange("POST", "http://h/v1/s", 202, &[], json!({"taskId": "t-1"})),
            1,
        );
        let second = with_seq(
            exchange("POST", "http://h/v1/s", 202, &[], json!({"taskId": "t-1"})),
            9,
        );
        let mut a = Ledger::default();
        judge(
            &mut a,
            &reg,
            api,
            &record(TaskWrite::Create, vec![], End::TimedOut),
            std::slice::from_ref(&first),
        );
        // Alone so far: a fresh id, and the resource's deadline is judged.
        assert_eq!(get(&a.tallies(), "TASK-01").outcome, Outcome::Passed);
        assert_eq!(get(&a.tallies(), "TASK-06").outcome, Outcome::Failed);
        let mut b = Ledger::default();
        judge(
            &mut b,
            &reg,
            api,
            &record(TaskWrite::Create, vec![], End::TimedOut),
            &[second],
        );
        assert_eq!(get(&b.tallies(), "TASK-01").outcome, Outcome::Failed);
        let tb = b.tallies();
        let t6 = get(&tb, "TASK-06");
        assert_eq!(t6.outcome, Outcome::NotJudged);
        assert!(
            t6.not_judged
                .as_deref()
                .unwrap()
                .starts_with("TASK-01 failed at exchange #9")
        );
        // The first holder, judged again now that the id is known shared, is no longer fresh.
        let mut c = Ledger::default();
        judge(
            &mut c,
            &reg,
            api,
            &record(TaskWrite::Create, vec![], End::TimedOut),
            &[first],
        );
        assert_eq!(get(&c.tallies(), "TASK-01").outcome, Outcome::Failed);
    }
}
