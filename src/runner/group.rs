//! Independent creates of one test run at once, so their waits overlap: the steps, the
//! forked state each runs in, and how their records are merged back in step order.

use std::collections::HashMap;

use super::exec::{Exec, INTERRUPTED, StepOut};
use crate::http::Role;
use crate::scenario::{Action, Step};

impl<'a> Exec<'a> {
    /// How many steps from the first one form a group of creates (`create` or `fresh`, of
    /// types whose names the run picks) whose waits may overlap; 1 or 0 when there is none.
    pub(super) fn create_group(&self, steps: &[&Step]) -> usize {
        steps
            .iter()
            .take_while(|step| match &step.action {
                Action::Create(spec) | Action::Fresh(spec) => self
                    .resolve_type(&spec.type_ref)
                    .is_ok_and(|t| t.names.is_none()),
                _ => false,
            })
            .count()
    }

    /// Run a group of creates in waves (see [`waves`]): the steps of a wave at once, then
    /// their expectations and bindings in step order. The error names the index of the step
    /// that failed first.
    pub(super) async fn run_group(&mut self, group: &[&Step]) -> Result<(), (usize, String)> {
        for wave in waves(group) {
            if self.ctx.cancel.is_cancelled() {
                return Err((wave[0], INTERRUPTED.to_string()));
            }
            if let [k] = wave[..] {
                self.run_step(group[k]).await.map_err(|e| (k, e))?;
            } else {
                let steps: Vec<(usize, &Step)> = wave.iter().map(|&k| (k, group[k])).collect();
                self.run_wave(&steps).await?;
            }
        }
        Ok(())
    }

    /// A copy of this test's state for one step that runs beside others; its findings,
    /// exchanges and records are merged back by [`Exec::join`].
    fn fork(&self) -> Exec<'a> {
        Exec {
            ctx: self.ctx,
            inst: self.inst,
            ty: self.ty,
            mon: self.mon,
            scope: self.scope.clone(),
            judge: self.judge.fork(),
            exchanges: Vec::new(),
            polls: Vec::new(),
            outs: HashMap::new(),
            notes: Vec::new(),
            started: HashMap::new(),
            step_name: None,
            correlation: self.correlation.clone(),
            step_label: String::new(),
            deferring: None,
            not_applicable: None,
            held: Vec::new(),
            interrupted: None,
            judge_later: false,
        }
    }

    /// Merge a forked step back: its exchanges (the step's result re-indexed), findings,
    /// records and the variable it bound.
    fn join(&mut self, sub: Exec<'a>, bind: &str, out: &mut StepOut) {
        let off = self.exchanges.len();
        out.exchange = out.exchange.map(|i| i + off);
        out.initial = out.initial.map(|i| i + off);
        out.made = off..off + sub.exchanges.len();
        self.exchanges.extend(sub.exchanges);
        self.polls.extend(sub.polls);
        self.notes.extend(sub.notes);
        self.judge.absorb(sub.judge);
        self.held.extend(sub.held);
        if self.not_applicable.is_none() {
            self.not_applicable = sub.not_applicable;
        }
        if let Some(v) = sub.scope.get(bind) {
            self.scope.insert(bind.to_string(), v.clone());
        }
    }

    /// Run independent creates at once; then their expectations and bindings in order.
    async fn run_wave(&mut self, wave: &[(usize, &Step)]) -> Result<(), (usize, String)> {
        let active: Vec<(usize, &Step)> = wave
            .iter()
            .copied()
            .filter(|(_, s)| self.condition_holds(s))
            .collect();
        let mut subs: Vec<Exec<'a>> = active.iter().map(|_| self.fork()).collect();
        let runs = subs
            .iter_mut()
            .zip(&active)
            .map(|(sub, (_, step))| async move {
                sub.enter(step);
                match &step.action {
                    Action::Create(spec) => sub.create(spec, true, Role::Step).await,
                    Action::Fresh(spec) => sub.create(spec, false, Role::Step).await,
                    _ => Err("internal: only creates run in a group".to_string()),
                }
            });
        let outs = join_all(runs.collect()).await;
        if self.ctx.cancel.is_cancelled() {
            // Cut short: keep what was sent (for the record), not what it would judge.
            for (sub, _) in subs.into_iter().zip(outs) {
                self.exchanges.extend(sub.exchanges);
                self.polls.extend(sub.polls);
                self.notes.extend(sub.notes);
            }
            return Err((wave[0].0, INTERRUPTED.to_string()));
        }
        let mut first_err = None;
        for ((sub, (k, step)), out) in subs.into_iter().zip(active).zip(outs) {
            let bind = match &step.action {
                Action::Create(s) | Action::Fresh(s) => s.bind.clone(),
                _ => String::new(),
            };
            match out {
                Ok(mut out) => {
                    self.join(sub, &bind, &mut out);
                    if first_err.is_some() {
                        continue;
                    }
                    self.enter(step);
                    self.judge.ledger.set_exempt(Vec::new());
                    if let Err(e) = self.finish(step, out) {
                        first_err = Some((k, e));
                    }
                }
                Err(e) => {
                    let mut none = StepOut::default();
                    self.join(sub, &bind, &mut none);
                    if first_err.is_none() {
                        first_err = Some((k, e));
                    }
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Drive several futures to completion at once, on this task; their outputs in order.
async fn join_all<F: std::future::Future>(futs: Vec<F>) -> Vec<F::Output> {
    let mut futs: Vec<std::pin::Pin<Box<F>>> = futs.into_iter().map(Box::pin).collect();
    let mut outs: Vec<Option<F::Output>> = futs.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (f, o) in futs.iter_mut().zip(outs.iter_mut()) {
            if o.is_none() {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => *o = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    outs.into_iter().flatten().collect()
}

/// The variables a create reads (its condition, parent, dependency and body).
fn reads(step: &Step) -> Vec<&str> {
    let mut roots: Vec<&str> = Vec::new();
    if let Some(c) = &step.condition {
        roots.extend(
            c.templates
                .iter()
                .flat_map(|t| t.vars().map(|v| v.root.as_str())),
        );
    }
    if let Action::Create(spec) | Action::Fresh(spec) = &step.action {
        for t in spec.parent.iter().chain(&spec.dependency) {
            roots.extend(t.vars().map(|v| v.root.as_str()));
        }
        if let Some(b) = &spec.body {
            roots.extend(b.vars().into_iter().map(|v| v.root.as_str()));
        }
    }
    roots
}

/// The variables a step binds (the resource, its name, its captures).
fn binds(step: &Step) -> Vec<&str> {
    let mut out: Vec<&str> = step.capture.iter().map(|c| c.var.as_str()).collect();
    out.extend(step.name.as_deref());
    if let Action::Create(spec) | Action::Fresh(spec) = &step.action {
        out.push(&spec.bind);
    }
    out
}

/// The waves a group of creates runs in, each a list of step indexes in order: a step runs
/// after every earlier step whose variables it reads, and a step that names its parent after
/// every earlier one that names a parent (siblings under one parent may be refused while
/// another is written). A create that makes its own ancestors waits for nothing else.
fn waves(group: &[&Step]) -> Vec<Vec<usize>> {
    let mut wave_of: Vec<usize> = Vec::with_capacity(group.len());
    let mut after_parented = 0;
    for (k, step) in group.iter().enumerate() {
        let read = reads(step);
        let mut w = (0..k)
            .filter(|&j| binds(group[j]).iter().any(|b| read.contains(b)))
            .map(|j| wave_of[j] + 1)
            .max()
            .unwrap_or(0);
        let parented =
            matches!(&step.action, Action::Create(s) | Action::Fresh(s) if s.parent.is_some());
        if parented {
            w = w.max(after_parented);
            after_parented = w + 1;
        }
        wave_of.push(w);
    }
    let n = wave_of.iter().max().map_or(0, |m| m + 1);
    (0..n)
        .map(|w| (0..group.len()).filter(|&k| wave_of[k] == w).collect())
        .filter(|v: &Vec<usize>| !v.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::waves;
    use crate::scenario::{LoadOptions, parse_suite};

    fn group_waves(steps: &str) -> Vec<Vec<usize>> {
        let text = format!(
            "suite: g\nscenarios:\n  - name: s\n    for_each_type: [child]\n    steps:\n{steps}"
        );
        let opts = LoadOptions {
            schema_dir: Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas"),
        };
        let suite = parse_suite(Path::new("g.yaml"), &text, &opts).expect("a valid suite");
        let steps: Vec<&crate::scenario::Step> = suite.scenarios[0].steps.iter().collect();
        waves(&steps)
    }

    #[test]
    fn a_create_waits_only_for_what_it_reads() {
        // c2 names c1's parent; `other` makes its own ancestors and starts with c1.
        let w = group_waves(
            "      - create: {as: c1}\n      - create: {as: c2, parent: \"${c1.parent}\"}\n      - create: {as: other}\n",
        );
        assert_eq!(w, vec![vec![0, 2], vec![1]]);
    }

    #[test]
    fn creates_that_name_a_parent_never_share_a_wave() {
        let w = group_waves(
            "      - create: {as: p, type: parent}\n      - create: {as: a, parent: \"${p}\"}\n      - create: {as: b, parent: \"${p}\"}\n      - create: {as: q, type: parent}\n",
        );
        assert_eq!(w, vec![vec![0, 3], vec![1], vec![2]]);
    }

    #[test]
    fn a_condition_or_body_that_reads_an_earlier_create_orders_it() {
        let w = group_waves(
            "      - create: {as: a}\n      - if: \"${a.name}\"\n        create: {as: b}\n      - create: {as: c, body: {name: \"${b.name}\"}}\n",
        );
        assert_eq!(w, vec![vec![0], vec![1], vec![2]]);
    }
}
