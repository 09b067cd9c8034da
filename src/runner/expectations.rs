//! A step's expectations judged: the gates that decide whether one is judged at all
//! (`when_status`, `when_running_at`), then each verdict into the test's ledger under every
//! rule it cites. What a check means lives in `rules::expect`; races in `rules::ops`.

use super::exec::{Exec, StepOut, StepResult};
use crate::http::Exchange;
use crate::rules::expect::{Miss, Subject, cause_of_miss, evaluate};
use crate::scenario::{Expectation, Step};
use serde_json::Value;

impl Exec<'_> {
    /// Evaluate a step's expectations (or keep them for later inside a `during` block).
    pub(super) fn expectations(&mut self, step: &Step, out: &StepOut) -> StepResult<()> {
        if step.expect.is_empty() {
            return Ok(());
        }
        if let Some(d) = self.deferring.as_mut() {
            d.push((step.expect.clone(), out.clone()));
            return Ok(());
        }
        self.evaluate_all(&step.expect, out)
    }

    pub(super) fn evaluate_all(&mut self, expect: &[Expectation], out: &StepOut) -> StepResult<()> {
        let subject = Subject {
            exchange: out.exchange.map(|i| &self.exchanges[i]),
            items: out.items.as_deref(),
            outcome: out.outcome.as_deref(),
        };
        let mut broken = None;
        for e in expect {
            if let Some(when) = &e.when_status {
                let st = subject.exchange.and_then(|x| x.status());
                if !st.is_some_and(|s| when.contains(&s)) {
                    continue;
                }
            }
            if let Some(name) = &e.when_running_at {
                match self.ended_before(name, subject.exchange) {
                    Ok(None) => {}
                    Ok(Some(why)) => {
                        for rule in self.rules_of(e) {
                            self.judge.ledger.not_judged(rule, why.clone());
                        }
                        continue;
                    }
                    Err(msg) => {
                        broken = Some(format!("{}: cannot evaluate the expectation: {msg}", e.pos));
                        continue;
                    }
                }
            }
            let res = evaluate(&e.check, &subject, &self.scope);
            if let Err(Miss::Broken(msg)) = &res {
                broken = Some(format!("{}: cannot evaluate the expectation: {msg}", e.pos));
                continue;
            }
            let seq = subject.exchange.map(|x| x.seq);
            let rules = self.rules_of(e);
            // A miss an earlier failure decided is that failure's, named: not judged here.
            if res.is_err() {
                // What the test did up to the end of this step.
                let end = out.made.end.max(out.initial.map_or(0, |i| i + 1));
                let from: Vec<&Exchange> = self.exchanges.iter().take(end).collect();
                if let Some((cause, why)) =
                    cause_of_miss(&e.check, &subject, &from, &self.judge.ledger, &rules)
                {
                    for rule in rules {
                        self.judge.ledger.blocked(rule, &cause, why);
                    }
                    continue;
                }
            }
            for rule in rules {
                match &res {
                    Ok(()) => self.judge.ledger.pass(rule),
                    Err(Miss::Failed(exp, seen)) => {
                        self.judge
                            .ledger
                            .fail(rule, exp.clone(), seen.clone(), seq, Some(&e.pos))
                    }
                    Err(Miss::Broken(_)) => {}
                }
            }
        }
        match broken {
            Some(b) => Err(b),
            None => Ok(()),
        }
    }

    /// `when_running_at`: why the operation read in `op_read` may have ended before the named
    /// step's request arrived (then its expectation is not judged); the judgement is OPS's.
    fn ended_before(&self, name: &str, op_read: Option<&Exchange>) -> StepResult<Option<String>> {
        let out = self
            .outs
            .get(name)
            .ok_or_else(|| format!("step `{name}` did not run"))?;
        let Some(sent) = out.initial.or(out.exchange).map(|i| &self.exchanges[i]) else {
            return Ok(None);
        };
        let (Some(op_read), Some(resp)) = (op_read, sent.response.as_ref()) else {
            return Ok(None);
        };
        let status_reads: Vec<&Exchange> = match resp.header("azure-asyncoperation") {
            Some(op) => {
                let key = crate::lro::path_key(&self.absolute(op));
                self.exchanges
                    .iter()
                    .filter(|x| x.seq > sent.seq && crate::lro::path_key(&x.url) == key)
                    .collect()
            }
            None => Vec::new(),
        };
        let op_key = crate::lro::path_key(&op_read.url);
        let later: Vec<&Exchange> = self
            .exchanges
            .iter()
            .filter(|x| x.seq > sent.seq && crate::lro::path_key(&x.url) == op_key)
            .collect();
        Ok(crate::rules::ops::ended_before(
            op_read,
            &later,
            sent,
            &status_reads,
        ))
    }

    /// The rules an expectation cites (a table row may name its rule).
    pub(super) fn rules_of(&self, e: &Expectation) -> Vec<&'static str> {
        match (&e.row_rule, &self.inst.row) {
            (Some(field), Some(row)) => row
                .values
                .get(field)
                .and_then(Value::as_str)
                .and_then(crate::rules::lookup)
                .map(|r| vec![r.id])
                .unwrap_or_default(),
            _ => e.rules.clone(),
        }
    }
}
