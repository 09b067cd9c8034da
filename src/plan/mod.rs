//! What a run will cost before anything is sent (`rpconform plan`, and the figures a run's
//! reports set against what it then sent): tests, resources created per type, requests, the
//! longest chain of waits, the expected duration at the run's concurrency and rate limits, and
//! resource-minutes per type (priced where the target gives a price). `cover` is
//! `--coverage min`, the cheapest selection that judges what the full one judges.

mod cover;
mod estimate;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use cover::{Coverage, StandIn, minimal};
pub use estimate::{TestCost, Timing, estimate, known_before, skipped_before};

use crate::http::Limits;
use crate::scenario::Instance;
use crate::target::Target;

/// One type's share of the plan.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TypePlan {
    /// Tests that run against the type.
    pub tests: u64,
    /// Resources of the type created (PUTs of creates, parents and dependencies included).
    pub resources: u64,
    /// Resource-minutes: each resource lives about as long as its test, then its cleanup.
    pub resource_minutes: f64,
    /// `resource_minutes` × the type's `cost.price_per_hour`, when it gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price: Option<f64>,
}

/// The plan of a run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Plan {
    /// Tests that will run (not-applicable ones are not counted).
    pub tests: u64,
    pub puts: u64,
    pub requests: u64,
    /// Writes among the requests (what ARM's write budget counts).
    pub writes: u64,
    pub resources_by_type: BTreeMap<String, TypePlan>,
    /// The longest chain of mandatory waits in one test, scaled.
    pub longest_chain_seconds: f64,
    /// The longest test's name.
    pub longest_test: String,
    /// Seconds the rate limits alone need to send the requests and the writes.
    pub rate_limit_seconds: f64,
    /// The expected wall time: the tests at the run's concurrency, bounded below by the rate
    /// limits, plus the final cleanup's longest DELETE.
    pub estimated_seconds: f64,
    /// Tests at once (`--test-threads`; none: all at once).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<usize>,
    /// Sum of the priced types' prices.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price: Option<f64>,
    /// What the plan assumed of the RP's timing.
    pub assumed: Assumed,
    /// Each test's share, costliest first.
    pub by_test: Vec<TestPlan>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TestPlan {
    pub test: String,
    pub puts: u64,
    pub requests: u64,
    pub wait_seconds: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Assumed {
    pub operation_seconds: f64,
    pub retry_after_seconds: f64,
    pub time_scale: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_rps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_write_rps: Option<f64>,
}

/// Plans these tests against this target.
pub fn plan(
    tests: &[Instance],
    target: &Target,
    t: &Timing,
    limits: &Limits,
    concurrency: Option<usize>,
    include_ignored: bool,
) -> Plan {
    let mut p = Plan {
        concurrency,
        assumed: Assumed {
            operation_seconds: t.operation_seconds,
            retry_after_seconds: t.retry_after_seconds,
            time_scale: t.time_scale,
            max_rps: limits.max_rps,
            max_write_rps: limits.max_write_rps,
        },
        ..Plan::default()
    };
    let mut waits = Vec::new();
    for inst in tests.iter().filter(|i| {
        i.not_applicable.is_none() && (include_ignored || i.scenario().ignore.is_none())
    }) {
        let c = estimate(inst, target, t);
        if !c.not_applicable {
            p.tests += 1;
        }
        p.puts += c.puts;
        p.requests += c.requests;
        p.writes += c.writes;
        if c.wait_seconds > p.longest_chain_seconds || p.longest_test.is_empty() {
            p.longest_chain_seconds = c.wait_seconds;
            p.longest_test = inst.name.clone();
        }
        if let Some(ty) = &inst.type_name {
            p.resources_by_type.entry(ty.clone()).or_default().tests += 1;
        }
        // A resource lives through its test, then its DELETE.
        let life = (c.wait_seconds + t.operation_seconds * t.time_scale) / 60.0;
        for (ty, n) in &c.by_type {
            let e = p.resources_by_type.entry(ty.clone()).or_default();
            e.resources += n;
            e.resource_minutes += *n as f64 * life;
        }
        waits.push(c.wait_seconds);
        p.by_test.push(TestPlan {
            test: inst.name.clone(),
            puts: c.puts,
            requests: c.requests,
            wait_seconds: c.wait_seconds,
        });
    }
    p.by_test
        .sort_by_key(|t| std::cmp::Reverse((t.puts, t.requests)));
    for (name, tp) in p.resources_by_type.iter_mut() {
        tp.price = target
            .type_named(name)
            .and_then(|ty| ty.cost.price_per_hour)
            .map(|h| h * tp.resource_minutes / 60.0);
    }
    let priced: Vec<f64> = p
        .resources_by_type
        .values()
        .filter_map(|t| t.price)
        .collect();
    p.price = (!priced.is_empty()).then(|| priced.iter().sum());
    p.rate_limit_seconds = [
        limits.max_rps.map(|r| p.requests as f64 / r),
        limits.max_write_rps.map(|r| p.writes as f64 / r),
    ]
    .into_iter()
    .flatten()
    .fold(0.0, f64::max);
    // Tests in waves of `concurrency`, longest first: the longest test, or the sum of the
    // waits spread over the slots, whichever is longer.
    let total: f64 = waits.iter().sum();
    let waves = match concurrency {
        Some(n) if n > 0 => (total / n as f64).max(p.longest_chain_seconds),
        _ => p.longest_chain_seconds,
    };
    let cleanup = t.operation_seconds * t.time_scale;
    p.estimated_seconds = waves.max(p.rate_limit_seconds) + cleanup;
    p
}

impl Plan {
    /// The plan for a person: a few lines and a table per type.
    pub fn text(&self) -> String {
        let mut s = format!(
            "{} tests; {} PUTs ({} resource(s) created and deleted), {} requests ({} writes)\n",
            self.tests,
            self.puts,
            self.resources_by_type
                .values()
                .map(|t| t.resources)
                .sum::<u64>(),
            self.requests,
            self.writes
        );
        s += &format!(
            "longest chain of waits: {} ({})\n",
            secs(self.longest_chain_seconds),
            self.longest_test
        );
        if self.rate_limit_seconds > 0.0 {
            s += &format!(
                "rate limits alone: {} ({} requests/s, {} writes/s)\n",
                secs(self.rate_limit_seconds),
                self.assumed
                    .max_rps
                    .map(|r| r.to_string())
                    .unwrap_or("any".into()),
                self.assumed
                    .max_write_rps
                    .map(|r| r.to_string())
                    .unwrap_or("any".into())
            );
        }
        s += &format!(
            "estimated duration: {} ({}; assuming operations of {} s polled every {} s{})\n\n",
            secs(self.estimated_seconds),
            match self.concurrency {
                Some(n) => format!("{n} tests at once"),
                None => "every test at once".into(),
            },
            self.assumed.operation_seconds,
            self.assumed.retry_after_seconds,
            if self.assumed.time_scale != 1.0 {
                format!(", time scale {}", self.assumed.time_scale)
            } else {
                String::new()
            }
        );
        s += "type                           tests  resources  resource-minutes  price\n";
        for (name, t) in &self.resources_by_type {
            s += &format!(
                "{:<30} {:>5}  {:>9}  {:>16.1}  {}\n",
                name,
                t.tests,
                t.resources,
                t.resource_minutes,
                t.price.map(|p| format!("{p:.2}")).unwrap_or("-".into())
            );
        }
        if let Some(p) = self.price {
            s += &format!("total price: {p:.2}\n");
        }
        s
    }
}

fn secs(s: f64) -> String {
    if s >= 120.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{s:.1} s")
    }
}

#[cfg(test)]
mod tests;
