//! The record of one followed operation, as every front end produces it: the live runner as it
//! polls, replay from a recording, the proxy from passing traffic. Flow rules read this record
//! (and the exchanges it points into) once the operation has ended; they never drive anything.

use serde::Serialize;

use crate::http::Exchange;

use crate::http::Surface;
use crate::lro::{Channel, FinalStateVia, Outcome, State};
use crate::target::OpPattern;

/// A read made after the operation ended, and what for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AfterRead {
    /// Where a client reads the result (final-state-via, or the resource after a PUT/PATCH).
    Final,
    /// The driving channel read again (a terminal status never changes).
    Status,
    /// The initial answer's Location read after another channel said the operation ended.
    Location,
    /// The resource read once the operation ended (its settled state).
    Resource,
}

/// One read of a flow, in the order it was made.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Event {
    /// A read of the channel that drives the operation, with what it showed.
    Poll {
        ex: usize,
        channel: Channel,
        state: State,
    },
    /// A read of another URL while the operation ran (the resource itself, its relatives).
    Watch { ex: usize },
    /// A read of a second channel while the first drove (Location while Azure-AsyncOperation ran).
    Side {
        ex: usize,
        channel: Channel,
        state: State,
    },
    /// A read after the end.
    After { ex: usize, what: AfterRead },
}

impl Event {
    pub fn ex(&self) -> usize {
        match self {
            Event::Poll { ex, .. }
            | Event::Watch { ex }
            | Event::Side { ex, .. }
            | Event::After { ex, .. } => *ex,
        }
    }
}

/// How following ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "end", content = "detail", rename_all = "kebab-case")]
pub enum End {
    /// The operation reached a terminal state.
    Finished(Outcome),
    /// The deadline passed while the operation still showed running.
    TimedOut,
    /// Cancelled by the run (Ctrl-C, SIGTERM): nothing to judge about the end.
    Interrupted,
    /// It could not be followed: no link where one was needed, a URL that will not be sent,
    /// answers that never said anything readable.
    Unfollowable(String),
    /// The record stops before the operation ended (a recording, a proxy stopped mid-way).
    Unseen,
}

/// One operation, from its initial request to the last read about it.
#[derive(Debug, Clone, Serialize)]
pub struct Flow {
    pub surface: Surface,
    pub method: String,
    /// The initial request's URL (as sent).
    pub request_url: String,
    /// The resource the operation acts on (absolute, no query): the URL of a PUT, PATCH or
    /// DELETE, the parent of a POST action.
    pub resource: Option<String>,
    /// Index of the initial exchange.
    pub initial: usize,
    /// What the initial answer showed, as a client reads it.
    pub initial_state: State,
    /// The channel that drove the polling (None: nothing was polled).
    pub channel: Option<Channel>,
    /// What the target declares for this operation, when it declares something.
    pub declared: Option<OpPattern>,
    pub final_state_via: Option<FinalStateVia>,
    pub events: Vec<Event>,
    pub end: End,
    pub deadline_secs: u64,
    pub elapsed_ms: u64,
    /// Index of the exchange a client takes as the operation's result.
    pub result: Option<usize>,
}

impl Flow {
    /// The polls of the driving channel, in order.
    pub fn polls(&self) -> impl Iterator<Item = (usize, &State)> {
        self.events.iter().filter_map(|e| match e {
            Event::Poll { ex, state, .. } => Some((*ex, state)),
            _ => None,
        })
    }

    /// The reads made after the end for this purpose.
    pub fn after(&self, what: AfterRead) -> impl Iterator<Item = usize> + '_ {
        self.events.iter().filter_map(move |e| match e {
            Event::After { ex, what: w } if *w == what => Some(*ex),
            _ => None,
        })
    }

    /// Watch reads made while the operation was shown running both before and after them
    /// (by a poll of its driving channel): reads that certainly saw the operation in progress.
    /// The second list holds the watch reads that cannot be placed so.
    pub fn watches_during(&self) -> (Vec<usize>, Vec<usize>) {
        let mut during = Vec::new();
        let mut unsure = Vec::new();
        let mut pending = Vec::new();
        // The operation had started when its initial answer came: a read before the first
        // poll is bracketed by that answer and the poll.
        let mut running_before = true;
        for e in &self.events {
            match e {
                Event::Poll { state, .. } => {
                    if state.is_running() && running_before {
                        during.append(&mut pending);
                    } else {
                        unsure.append(&mut pending);
                    }
                    running_before = state.is_running();
                }
                Event::Watch { ex } => pending.push(*ex),
                _ => {}
            }
        }
        unsure.append(&mut pending);
        (during, unsure)
    }

    pub fn finished(&self) -> Option<Outcome> {
        match self.end {
            End::Finished(o) => Some(o),
            _ => None,
        }
    }

    /// Did a read after the initial answer show the operation still running? (Evidence that it
    /// had not finished when the initial answer was sent.)
    pub fn seen_running(&self) -> bool {
        self.polls().any(|(_, s)| s.is_running())
    }
}

/// Why an operation offers nothing to the rules that read it while it runs: it ended, and no
/// read after its answer showed it running — its answer said it had ended, or the first read
/// of its channel already did: too fast to be seen running. `None` when a read showed it
/// running, a read could not be read (an error says nothing of the state), or it did not end
/// (timed out, could not be followed): then what such a rule misses is not judged.
pub(crate) fn never_running(flow: &Flow, exs: &[Exchange]) -> Option<String> {
    let outcome = flow.finished()?;
    let shown = |s: &crate::lro::State| !matches!(s, crate::lro::State::Done(..));
    let read_running = flow.events.iter().any(|e| match e {
        Event::Poll { state, .. } | Event::Side { state, .. } => shown(state),
        _ => false,
    });
    if read_running {
        return None;
    }
    let answered = exs
        .get(flow.initial)
        .and_then(Exchange::status)
        .map_or("no answer".to_string(), |s| s.to_string());
    Some(match flow.channel {
        None => format!(
            "the {} completed in its answer ({answered}): nothing ran after it",
            flow.method
        ),
        Some(_) => format!(
            "the {}'s operation was never seen running: answered {answered}, the first read of it already said it had ended {outcome} (too fast to be seen running)",
            flow.method
        ),
    })
}

/// The watch reads of the operation's own resource, split into those made while the
/// operation certainly ran and the others.
pub(crate) fn resource_watches(flow: &Flow, exs: &[Exchange]) -> (Vec<usize>, Vec<usize>) {
    let Some(res) = flow.resource.as_deref().map(crate::lro::path_key) else {
        return (Vec::new(), Vec::new());
    };
    let mine = |i: &usize| crate::lro::path_key(&exs[*i].url) == res;
    let (during, unsure) = flow.watches_during();
    (
        during.into_iter().filter(mine).collect(),
        unsure.into_iter().filter(mine).collect(),
    )
}

/// Judge the reads of the resource made while its operation ran: a read that shows what the
/// rule wants passes wherever it was made; one that does not fails only when polls on both
/// sides showed the operation running (a fast RP is never blamed for a race). With watch reads
/// but none placed inside the operation, the rule is not judged (timing), with the duration.
pub(crate) fn judge_during(
    j: &mut super::Judge<'_>,
    flow: &Flow,
    exs: &[Exchange],
    rule: &'static str,
    expected: &str,
    ok: impl Fn(&Exchange) -> bool,
) {
    let (during, unsure) = resource_watches(flow, exs);
    // Polls that never showed a terminal status (OPRES-03) place nothing inside the operation.
    let never_ended = j
        .ledger
        .cause_among(flow.polls().map(|(i, _)| exs[i].seq), &["OPRES-03"]);
    let mut judged = false;
    for i in during.iter().chain(&unsure) {
        let x = &exs[*i];
        if ok(x) {
            j.ledger.pass(rule);
            judged = true;
        } else if let (true, Some(c)) = (during.contains(i), &never_ended) {
            j.ledger.blocked(
                rule,
                c,
                "its status never showed a terminal value, so no read can be placed while it ran",
            );
        } else if during.contains(i) {
            let seen = match &x.response {
                Some(r) => format!(
                    "{} with provisioningState {}",
                    r.status,
                    super::words::text(crate::lro::provisioning_state(r.json.as_ref()))
                ),
                None => format!("no answer ({})", x.error.clone().unwrap_or_default()),
            };
            j.ledger.fail(rule, expected, seen, Some(x.seq), None);
            judged = true;
        }
    }
    if judged {
        return;
    }
    let watched = !(during.is_empty() && unsure.is_empty());
    if let Some(why) = never_running(flow, exs) {
        j.ledger.not_applicable(rule, why);
    } else if watched {
        j.ledger.not_judged(
            rule,
            format!(
                "timing: the operation ended within {} ms, before a read of the resource could be placed inside it",
                flow.elapsed_ms
            ),
        );
    }
}
