//! Tests of `task`: a check an earlier failure made impossible is not judged, naming it.

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

#[test]
fn a_later_write_judged_first_still_sees_the_id_an_earlier_answer_handed_out() {
    // A parallel run: the write at #3 got the id first, but its test is still following its
    // task when the write at #7 (same id) is judged. The id was noted as #3's answer arrived.
    let t = target();
    let api = t.tasks.as_ref().unwrap();
    let reg = Registry::default();
    reg.task_id_handed("t-1", 3);
    let later = with_seq(
        exchange("POST", "http://h/v1/s", 202, &[], json!({"taskId": "t-1"})),
        7,
    );
    let mut l = Ledger::default();
    judge(
        &mut l,
        &reg,
        api,
        &record(TaskWrite::Create, vec![], End::TimedOut),
        &[later],
    );
    let tl = l.tallies();
    assert_eq!(get(&tl, "TASK-01").outcome, Outcome::Failed);
    assert!(
        get(&tl, "TASK-01")
            .failures
            .iter()
            .any(|f| f.seen.contains("exchange #3")),
        "{:?}",
        get(&tl, "TASK-01")
    );
    assert_eq!(get(&tl, "TASK-06").outcome, Outcome::NotJudged);
}
