//! `sweep`: delete resources in a seeded shuffled order, revisiting refused ones until a pass
//! makes no progress, as ARM's resource-group delete does; then read each one. The record goes
//! to the rule engine (RGDEL-03).

use serde_json::Value;

use super::exec::{Exec, StepOut, StepResult};
use super::follow::FollowSpec;
use crate::http::Role;
use crate::rules::SweepRecord;
use crate::scenario::{ApiVersion, SweepSpec};

/// Passes at most, whatever progress they make.
const MAX_PASSES: u32 = 20;

impl Exec<'_> {
    fn swept_urls(&self, s: &SweepSpec) -> StepResult<Vec<String>> {
        let mut out = Vec::new();
        for t in &s.resources {
            let v = t.render_value(&self.scope)?;
            let url = match &v {
                Value::Object(o) => o.get("url").and_then(Value::as_str).map(str::to_string),
                Value::String(x) => Some(x.clone()),
                _ => None,
            }
            .ok_or("sweep resources are resources from create, or URLs")?;
            out.push(self.absolute(&url));
        }
        Ok(out)
    }

    pub(super) async fn sweep(&mut self, s: &SweepSpec) -> StepResult<StepOut> {
        let urls = self.swept_urls(s)?;
        let mut remaining = urls.clone();
        let mut rng = super::ids::Seeded::new(s.seed);
        let mut rec = SweepRecord {
            deletes: Vec::new(),
            finals: Vec::new(),
            passes: 0,
        };
        while !remaining.is_empty() && rec.passes < MAX_PASSES {
            rec.passes += 1;
            rng.shuffle(&mut remaining);
            let before = remaining.len();
            let mut next = Vec::new();
            for url in std::mem::take(&mut remaining) {
                let idx = self
                    .send(
                        "DELETE",
                        &url,
                        Vec::new(),
                        None,
                        Role::Step,
                        &ApiVersion::Default,
                        None,
                    )
                    .await?;
                rec.deletes.push(idx);
                match self.exchanges[idx].status() {
                    Some(202) => {
                        let spec = FollowSpec::of(
                            "DELETE",
                            Some(url.clone()),
                            self.ctx.target.type_for(&url).map(|t| t.lro.delete),
                            self.ctx.target.deadline,
                        );
                        if self.follow(idx, spec).await.outcome != "Succeeded" {
                            next.push(url);
                        }
                    }
                    Some(200..=299) => {}
                    Some(_) => next.push(url),
                    None => return Err(format!("no response to DELETE {url}")),
                }
            }
            let progress = next.len() < before;
            remaining = next;
            if !progress {
                break;
            }
        }
        for url in urls {
            let idx = self.get(&url, Role::Step).await?;
            rec.finals.push((url, idx));
        }
        let left = rec
            .finals
            .iter()
            .any(|(_, i)| self.exchanges[*i].status() != Some(404));
        self.judge.sweep(&rec, &self.exchanges);
        Ok(StepOut {
            outcome: Some(if left { "Failed" } else { "Succeeded" }.into()),
            ..Default::default()
        })
    }
}
