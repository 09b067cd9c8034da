//! Test support: exchanges built by hand for the family modules' unit tests.

use serde_json::Value;

use crate::http::{Exchange, Response, Role, Surface};

/// One answered exchange: `method url` answered `status` with these headers and JSON body.
pub(crate) fn exchange(
    method: &str,
    url: &str,
    status: u16,
    headers: &[(&str, &str)],
    body: Value,
) -> Exchange {
    // A null body is no body at all.
    let text = if body.is_null() {
        String::new()
    } else {
        body.to_string()
    };
    Exchange {
        seq: 1,
        throttled: Vec::new(),
        throttled_times: 0,
        retried: Vec::new(),
        front_door: None,
        role: Role::Step,
        surface: Surface::Arm,
        method: method.into(),
        url: url.into(),
        request_headers: Vec::new(),
        request_body: None,
        response: Some(Response {
            status,
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            body: text.clone(),
            body_bytes: text.len(),
            json: Some(body),
            json_error: None,
            set_cookies: Vec::new(),
            sent: None,
        }),
        error: None,
        started_at: String::new(),
        elapsed_ms: 0,
        foreign: false,
    }
}

/// The embedded reference RP's target, at `http://h`: what the rules read of a target when a
/// unit test judges hand-built exchanges.
pub(crate) fn target() -> crate::target::Target {
    let yaml =
        crate::target::embedded_target_yaml_for("http://h", &rpconform_refrp::Settings::default());
    crate::target::parse_target(std::path::Path::new("test-target.yaml"), &yaml, "test")
        .unwrap_or_else(|r| panic!("{}", r.render()))
}

/// Judge these exchanges as the engine judges every exchange (the ambient rules) and give
/// `rule`'s outcome, with its checks (passed, failed).
pub(crate) fn ambient(rule: &str, exs: &[Exchange]) -> (super::Outcome, u32, u32) {
    judged_as(rule, exs, false)
}

/// The exchanges judged one by one (as read from a recording when `recorded`): `rule`'s
/// outcome and counts.
fn judged_as(rule: &str, exs: &[Exchange], recorded: bool) -> (super::Outcome, u32, u32) {
    judged_on(&target(), rule, exs, recorded)
}

/// `rule`'s outcome and counts on these exchanges, judged one by one against `t`.
pub(crate) fn judged_on(
    t: &crate::target::Target,
    rule: &str,
    exs: &[Exchange],
    recorded: bool,
) -> (super::Outcome, u32, u32) {
    let registry = super::Registry::default();
    let mut j = super::Judge::new(t, &registry);
    j.stripped.recorded = recorded;
    for ex in exs {
        j.exchange(ex);
    }
    j.ledger
        .tallies()
        .into_iter()
        .find(|x| x.rule == rule)
        .map(|x| (x.outcome, x.passed, x.failed))
        .unwrap_or((super::Outcome::NotJudged, 0, 0))
}

/// An exchange with these request headers.
pub(crate) fn with_request_headers(mut ex: Exchange, headers: &[(&str, &str)]) -> Exchange {
    ex.request_headers = headers
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    ex
}

/// These exchanges numbered 1, 2, 3... in order (the rules name exchanges by `seq`, and tell
/// one response from another by it).
pub(crate) fn numbered(mut exs: Vec<Exchange>) -> Vec<Exchange> {
    for (i, x) in exs.iter_mut().enumerate() {
        x.seq = i as u64 + 1;
    }
    exs
}

/// An exchange made in this role (an operation-resource read, a Location poll...).
pub(crate) fn with_role(mut ex: Exchange, role: Role) -> Exchange {
    ex.role = role;
    ex
}

/// An exchange on this surface (a data plane, a task API).
pub(crate) fn on_surface(mut ex: Exchange, surface: Surface) -> Exchange {
    ex.surface = surface;
    ex
}

/// `rule`'s outcome once `f` has fed a judge of the embedded target (the way a front end
/// feeds it: exchanges, flows, records).
pub(crate) fn judged(rule: &str, f: impl FnOnce(&mut super::Judge<'_>)) -> super::Outcome {
    let t = target();
    let registry = super::Registry::default();
    let mut j = super::Judge::new(&t, &registry);
    f(&mut j);
    outcome(&j.ledger, rule)
}

/// `rule`'s outcome in a ledger (not judged when nothing was recorded for it).
pub(crate) fn outcome(ledger: &super::Ledger, rule: &str) -> super::Outcome {
    ledger
        .tallies()
        .into_iter()
        .find(|x| x.rule == rule)
        .map_or(super::Outcome::NotJudged, |x| x.outcome)
}

/// A followed operation as the follower records it: `exs[0]` is the initial exchange, the
/// events index into `exs`. The resource is the initial URL without its query.
pub(crate) fn flow(
    exs: &[Exchange],
    channel: Option<crate::lro::Channel>,
    events: Vec<super::flow::Event>,
    end: super::flow::End,
) -> super::flow::Flow {
    let init = &exs[0];
    let resource = init.url.split('?').next().map(str::to_string);
    let initial_state = init
        .response
        .as_ref()
        .map(|r| crate::lro::Strategy::arm(&init.method, &init.url, r).initial(r))
        .unwrap_or(crate::lro::State::Unreadable("no answer".into()));
    super::flow::Flow {
        surface: init.surface,
        method: init.method.clone(),
        request_url: init.url.clone(),
        resource,
        initial: 0,
        initial_state,
        channel,
        declared: None,
        final_state_via: None,
        events,
        end,
        deadline_secs: 30,
        elapsed_ms: 1000,
        result: None,
    }
}

/// `rule`'s outcome once a judge has seen these exchanges (numbered in order) as they came,
/// then the operation they belong to, built by `flow_of` from them.
pub(crate) fn flow_outcome(
    rule: &str,
    exs: Vec<Exchange>,
    flow_of: impl FnOnce(&[Exchange]) -> super::flow::Flow,
) -> super::Outcome {
    let exs = numbered(exs);
    let f = flow_of(&exs);
    judged(rule, |j| {
        for x in &exs {
            j.exchange(x);
        }
        j.flow(&f, &exs);
    })
}

/// A poll of the driving channel that showed this state.
pub(crate) fn poll(ex: usize, channel: crate::lro::Channel, running: bool) -> super::flow::Event {
    use crate::lro::{Outcome, State};
    let state = if running {
        State::Running(Some("InProgress".into()))
    } else {
        State::Done(Outcome::Succeeded, "Succeeded".into())
    };
    super::flow::Event::Poll { ex, channel, state }
}

/// A case of one rule, run by the catalogue walk (`rules::cases`) and by its family's tests:
/// `run` builds what the rule judges, judges it and gives the rule's outcome, which must be
/// `shows`.
pub(crate) struct Case {
    pub rule: &'static str,
    pub shows: super::Outcome,
    pub what: &'static str,
    pub run: fn() -> super::Outcome,
}

/// A failing case: `run` must show `rule` failed.
pub(crate) const fn failing(
    rule: &'static str,
    what: &'static str,
    run: fn() -> super::Outcome,
) -> Case {
    Case {
        rule,
        shows: super::Outcome::Failed,
        what,
        run,
    }
}

/// A passing case: `run` must show `rule` passed.
pub(crate) const fn passing(
    rule: &'static str,
    what: &'static str,
    run: fn() -> super::Outcome,
) -> Case {
    Case {
        rule,
        shows: super::Outcome::Passed,
        what,
        run,
    }
}

/// Run cases; every one that does not show what it says is listed in the panic.
pub(crate) fn run_cases<'c>(cases: impl IntoIterator<Item = &'c Case>) {
    let cases: Vec<&Case> = cases.into_iter().collect();
    assert!(!cases.is_empty(), "no cases");
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|c| {
            let got = (c.run)();
            (got != c.shows)
                .then(|| format!("{} ({}): {:?}, not {:?}", c.rule, c.what, got, c.shows))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The suite `suites/<file>` as the loader reads and checks it.
pub(crate) fn suite(file: &str) -> crate::scenario::Suite {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = root.join("suites").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    let opts = crate::scenario::LoadOptions {
        schema_dir: root.join("schemas"),
    };
    crate::scenario::parse_suite(&path, &text, &opts).unwrap_or_else(|d| {
        panic!(
            "{file}: {}",
            d.iter()
                .map(|d| d.render(Some(&text)))
                .collect::<Vec<_>>()
                .join("\n")
        )
    })
}

/// Every step of these steps in order, the steps inside `during` blocks included.
fn flat(steps: &[crate::scenario::Step]) -> Vec<&crate::scenario::Step> {
    let mut out = Vec::new();
    for s in steps {
        out.push(s);
        if let crate::scenario::Action::During(d) = &s.action {
            out.extend(flat(&d.steps));
        }
    }
    out
}

/// Where a suite states a rule: the suite file, the scenario and the step whose expectations
/// cite it: its name, or `#n`, the n-th step of the scenario (1 for the first) citing the rule.
pub(crate) type At = (&'static str, &'static str, &'static str);

/// `rule`'s outcome when the expectations the suite states for it at `at` (every one of that
/// step citing the rule; a table's `rule: ${row.…}` cites the rule the scope's row names) are
/// judged as the runner judges them (`when_status` gates them) on what the step produced,
/// with the scope's variables (`{"row": {...}, "before": {...}}`). A `when_running_at`
/// gate is taken as open (`rules::ops::ended_before` decides it; its own tests show how).
/// Panics when the step states nothing about the rule: the case no longer shows what the
/// suite says.
pub(crate) fn stated(
    rule: &str,
    at: At,
    scope: Value,
    subject: &super::expect::Subject<'_>,
) -> super::Outcome {
    let (file, scenario, step) = at;
    let rule = super::lookup(rule)
        .unwrap_or_else(|| panic!("{rule} is not catalogued"))
        .id;
    let s = suite(file);
    let sc = s
        .scenarios
        .iter()
        .find(|x| x.name == scenario)
        .unwrap_or_else(|| panic!("{file}: no scenario {scenario}"));
    let scope: crate::template::Scope = match scope {
        Value::Object(m) => m.into_iter().collect(),
        Value::Null => Default::default(),
        other => panic!("a scope is an object, not {other}"),
    };
    let cites = |e: &crate::scenario::Expectation| match &e.row_rule {
        Some(field) => {
            scope
                .get("row")
                .and_then(|r| r.get(field))
                .and_then(Value::as_str)
                == Some(rule)
        }
        None => e.rules.contains(&rule),
    };
    let steps: Vec<_> = [&sc.setup, &sc.steps, &sc.teardown]
        .into_iter()
        .flat_map(|s| flat(s))
        .collect();
    let st = match step.strip_prefix('#') {
        Some(n) => {
            let n: usize = n.parse().expect("#n");
            steps
                .into_iter()
                .filter(|s| s.expect.iter().any(&cites))
                .nth(n - 1)
        }
        None => steps.into_iter().find(|s| s.name.as_deref() == Some(step)),
    }
    .unwrap_or_else(|| panic!("{file}: scenario {scenario} has no step {step} citing {rule}"));
    let mine: Vec<_> = st.expect.iter().filter(|e| cites(e)).collect();
    assert!(
        !mine.is_empty(),
        "{file}: step {step} of {scenario} states nothing about {rule}"
    );
    let mut ledger = super::Ledger::default();
    for e in mine {
        if let Some(when) = &e.when_status {
            let st = subject.exchange.and_then(Exchange::status);
            if !st.is_some_and(|s| when.contains(&s)) {
                continue;
            }
        }
        match super::expect::evaluate(&e.check, subject, &scope) {
            Ok(()) => ledger.pass(rule),
            Err(super::expect::Miss::Failed(exp, seen)) => {
                ledger.fail(rule, exp, seen, None, Some(&e.pos))
            }
            Err(super::expect::Miss::Broken(m)) => {
                panic!("{file}: {scenario}/{step}: cannot evaluate: {m}")
            }
        }
    }
    outcome(&ledger, rule)
}

/// What a step produced: one answer.
pub(crate) fn answered(ex: &Exchange) -> super::expect::Subject<'_> {
    super::expect::Subject {
        exchange: Some(ex),
        items: None,
        outcome: None,
    }
}

/// A widget (tracked, asynchronous, with ETags) of the embedded target, as requested.
pub(crate) const WIDGET: &str = "http://h/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/w?api-version=2024-05-01";
/// Its `id`.
pub(crate) const WIDGET_ID: &str =
    "/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/w";
/// The widgets' collection.
pub(crate) const WIDGETS: &str = "http://h/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets?api-version=2024-05-01";
/// A gadget (a proxy child of the widget).
pub(crate) const GADGET: &str = "http://h/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/w/gadgets/g?api-version=2024-05-01";
/// A Location an RP hands out for an operation on the widget.
pub(crate) const OP_RESULT: &str = "http://h/subscriptions/s/providers/Microsoft.Contoso/locations/eastus/operationResults/op1?api-version=2024-05-01";
/// The operation resource an Azure-AsyncOperation header names.
pub(crate) const OP_STATUS: &str = "http://h/subscriptions/s/providers/Microsoft.Contoso/locations/eastus/operationStatuses/op1?api-version=2024-05-01";

/// A conforming widget body in this provisioning state.
pub(crate) fn widget(state: &str) -> Value {
    serde_json::json!({
        "id": WIDGET_ID,
        "name": "w",
        "type": "Microsoft.Contoso/widgets",
        "location": "eastus",
        "tags": {"env": "test"},
        "properties": {"provisioningState": state, "size": 3}
    })
}

/// A conforming operation resource with this status (an error when it failed or was canceled).
pub(crate) fn op_status(status: &str) -> Value {
    let mut b = serde_json::json!({
        "id": "/subscriptions/s/providers/Microsoft.Contoso/locations/eastus/operationStatuses/op1",
        "name": "op1",
        "status": status,
        "startTime": "2026-01-01T10:00:00Z",
    });
    if matches!(status, "Failed" | "Canceled") {
        b["error"] = serde_json::json!({"code": "Boom", "message": "it failed"});
    }
    if matches!(status, "Succeeded" | "Failed" | "Canceled") {
        b["endTime"] = serde_json::json!("2026-01-01T10:00:05Z");
    }
    b
}

/// A read of the operation resource answered 200 with this body.
pub(crate) fn op_read(body: Value) -> Exchange {
    with_role(
        exchange("GET", OP_STATUS, 200, &[("x-ms-request-id", "r-op")], body),
        Role::OperationStatus,
    )
}

/// A standard status monitor (`Operation-Location`, `status`, Succeeded/Failed/Canceled,
/// `result`/`error`), as a target file would declare it.
pub(crate) fn monitor(
    link: crate::target::MonitorLink,
    via: crate::lro::FinalStateVia,
) -> crate::target::Monitor {
    crate::target::Monitor {
        name: "m".into(),
        request: crate::target::RequestDecl {
            method: "PUT".into(),
            url: "/w".into(),
            body: None,
        },
        failing_body: None,
        api_version: None,
        link,
        status_field: "status".into(),
        succeeded: vec!["Succeeded".into()],
        failed: vec!["Failed".into()],
        canceled: vec!["Canceled".into()],
        result_field: Some("result".into()),
        error_field: "error".into(),
        final_state_via: via,
        operation_id_header: None,
        prerequisite: None,
        cancel: None,
        poll_api_version_append: false,
    }
}

/// The same exchange with its own `seq` (flows and causes tell exchanges apart by it).
pub(crate) fn with_seq(mut x: Exchange, seq: u64) -> Exchange {
    x.seq = seq;
    x
}

/// A followed ARM operation started by `exs[0]` (`method url`), read through `channel`,
/// ended `end`.
pub(crate) fn arm_flow(
    method: &str,
    url: &str,
    channel: Option<crate::lro::Channel>,
    events: Vec<crate::rules::flow::Event>,
    end: crate::rules::flow::End,
) -> crate::rules::flow::Flow {
    crate::rules::flow::Flow {
        surface: Surface::Arm,
        method: method.into(),
        request_url: url.into(),
        resource: Some(url.split('?').next().unwrap_or(url).into()),
        initial: 0,
        initial_state: crate::lro::State::Running(None),
        channel,
        declared: None,
        final_state_via: None,
        events,
        end,
        deadline_secs: 10,
        elapsed_ms: 100,
        result: None,
    }
}

/// [`ambient`] for exchanges read from a recording (whose recorder may have written
/// placeholders): the outcome of `rule`.
pub(crate) fn recorded(rule: &str, exs: &[Exchange]) -> super::Outcome {
    judged_as(rule, exs, true).0
}

/// Why `rule` has no verdict once `f` has fed a judge of the embedded target (None when it
/// has one, or nothing was recorded for it).
pub(crate) fn reason(rule: &str, f: impl FnOnce(&mut super::Judge<'_>)) -> Option<String> {
    let t = target();
    let registry = super::Registry::default();
    let mut j = super::Judge::new(&t, &registry);
    f(&mut j);
    j.ledger
        .tallies()
        .into_iter()
        .find(|x| x.rule == rule)
        .and_then(|x| x.not_judged)
}

/// Builds the flow the exchanges of a case belong to.
pub(crate) type FlowOf = dyn Fn(&[Exchange]) -> super::flow::Flow;

/// Why `rule` has no verdict on these exchanges, judged one by one as they came (numbered),
/// then, with `flow_of`, the operation they belong to.
pub(crate) fn why_not(rule: &str, exs: Vec<Exchange>, flow_of: Option<&FlowOf>) -> Option<String> {
    let exs = numbered(exs);
    reason(rule, |j| {
        for x in &exs {
            j.exchange(x);
        }
        if let Some(f) = flow_of {
            j.flow(&f(&exs), &exs);
        }
    })
}
