//! `during: step`: a block of steps run while another step's operation runs, judged only
//! when reads of that operation right before and right after the block both show it running
//! (and, read through the resource itself, no write in the block was taken).

use std::time::Instant;

use super::exec::{Exec, Follow, StepOut, StepResult};
use super::follow::{Jar, role_of};
use crate::lro::{Channel, State, Strategy};
use crate::scenario::DuringSpec;

impl Exec<'_> {
    /// `during: step`: run the block's reads between two reads of the operation the step
    /// started, and judge their expectations only if both reads showed it running.
    pub(super) async fn during(&mut self, d: &DuringSpec) -> StepResult<StepOut> {
        let Some(first) = self.outs.get(&d.follow).cloned() else {
            return Err(format!(
                "step `{}` did not run: nothing to read during",
                d.follow
            ));
        };
        let Some(init) = first.initial.or(first.exchange) else {
            return Err(format!("step `{}` sent nothing", d.follow));
        };
        let rules: Vec<&'static str> = d
            .steps
            .iter()
            .flat_map(|s| s.expect.iter().flat_map(|e| self.rules_of(e)))
            .collect();
        let Some(resp) = self.exchanges[init].response.clone() else {
            return Err(format!("step `{}` got no answer", d.follow));
        };
        let url = self.exchanges[init].url.clone();
        let surface = self.exchanges[init].surface;
        let mut strategy = match (first.follow, self.mon) {
            (Follow::Monitor, Some(m)) => {
                Strategy::monitor(m.link.channel(), &url, &resp, m.vocabulary())
            }
            _ => Strategy::arm(&first.method, &url, &resp),
        };
        let not_judged = |me: &mut Self, why: String| {
            for r in &rules {
                me.judge.ledger.not_judged(r, why.clone());
            }
        };
        // Nothing ran to read during (the answer, or the first read after it, said it had
        // ended): the block's rules have no subject here. One seen running and missed is
        // not judged.
        let not_applicable = |me: &mut Self, why: String| {
            for r in &rules {
                me.judge.ledger.not_applicable(r, why.clone());
            }
        };
        if let State::Done(..) = strategy.initial(&resp) {
            not_applicable(
                self,
                format!(
                    "the operation `{}` completed in its answer: nothing runs to read during",
                    d.follow
                ),
            );
            return Ok(StepOut::default());
        }
        let started = Instant::now();
        let jar = Jar::default();
        let channel = strategy.channel();
        let Some(before) = strategy.url().map(str::to_string) else {
            return Ok(StepOut::default());
        };
        let Some(i) = self
            .flow_read(&before, role_of(channel), surface, &jar)
            .await
        else {
            return Err(format!("cannot read {before}"));
        };
        // Did a read of its channel before this one (another step's) show it running?
        let seen_running = self.exchanges[init + 1..i]
            .iter()
            .any(|x| x.url == before && strategy.clone().read(x.response.as_ref()).is_running());
        match strategy.read(self.exchanges[i].response.as_ref()) {
            State::Running(_) => {}
            State::Done(..) if seen_running => {
                not_judged(
                    self,
                    format!(
                        "timing: the operation `{}` had ended before the reads during it could start",
                        d.follow
                    ),
                );
                return Ok(StepOut::default());
            }
            State::Done(..) => {
                not_applicable(
                    self,
                    format!(
                        "the operation `{}` was never seen running: the first read of it already said it had ended (too fast to be seen running)",
                        d.follow
                    ),
                );
                return Ok(StepOut::default());
            }
            State::Unreadable(why) => {
                not_judged(
                    self,
                    format!(
                        "the operation `{}` could not be read before the block ({why})",
                        d.follow
                    ),
                );
                return Ok(StepOut::default());
            }
        }
        self.deferring = Some(Vec::new());
        let mut failed = None;
        for s in &d.steps {
            if let Err(e) = Box::pin(self.run_step(s)).await {
                failed = Some(format!("{}: step `{}`: {e}", s.pos, s.label()));
                break;
            }
        }
        let deferred = self.deferring.take().unwrap_or_default();
        if let Some(e) = failed {
            return Err(e);
        }
        // Read through the resource itself, a running state after a write the target took may
        // be that write's own operation: the first one may have ended just before it arrived.
        if channel == Some(Channel::Resource) && self.write_taken_since(i, &before) {
            not_judged(
                self,
                format!(
                    "the operation `{}` is followed through the resource, and a write during it was taken: \
                     its state after that write may be the write's own operation",
                    d.follow
                ),
            );
            return Ok(StepOut::default());
        }
        let after = strategy.url().map(str::to_string).unwrap_or(before);
        let running_after = match self
            .flow_read(&after, role_of(channel), surface, &jar)
            .await
        {
            Some(j) => strategy
                .read(self.exchanges[j].response.as_ref())
                .is_running(),
            None => false,
        };
        if running_after {
            for (expect, out) in deferred {
                self.evaluate_all(&expect, &out)?;
            }
        } else {
            not_judged(
                self,
                format!(
                    "timing: the operation `{}` ended within {} ms, before the reads during it could be confirmed inside it",
                    d.follow,
                    started.elapsed().as_millis()
                ),
            );
        }
        Ok(StepOut::default())
    }
}
