//! Tests of `task`: a failing and a passing case per rule (the catalogue walk runs
//! `CASES`).

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
