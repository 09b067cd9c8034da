//! JUnit XML through quick-junit: a testsuite per suite file, a testcase per test. A broken
//! rule is a `<failure>` whose message starts with the rule IDs; "could not check" is an
//! `<error>`; not applicable is `<skipped>` with the reason. Run settings are properties.

use std::collections::BTreeMap;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use super::render::{failure_text, message};
use super::{RunInfo, ScenarioResult, Status};

pub fn junit_xml(info: &RunInfo, results: &[ScenarioResult]) -> String {
    let mut report = Report::new("rpconform");
    report.set_time(Duration::from_millis(info.duration_ms));
    let mut suites: BTreeMap<&str, TestSuite> = BTreeMap::new();
    for r in results {
        let suite = suites.entry(r.suite.as_str()).or_insert_with(|| {
            let mut s = TestSuite::new(r.suite.clone());
            s.add_property(("target", info.target.as_str()));
            s.add_property(("base_url", info.base_url.as_str()));
            s.add_property(("time_scale", info.time_scale.to_string().as_str()));
            s.add_property(("accelerated", info.accelerated.to_string().as_str()));
            s.add_property(("strict", info.strict.to_string().as_str()));
            s.add_property(("filters", info.filters.join(" ").as_str()));
            s.add_property((
                "partition",
                info.partition.clone().unwrap_or_default().as_str(),
            ));
            s.add_property(("rpconform_version", info.rpconform_version.as_str()));
            if info.interrupted {
                s.add_property(("interrupted", "true"));
            }
            s.add_property(("suite_file", r.suite_file.as_str()));
            s
        });
        let status = match &r.status {
            Status::Passed | Status::Warned => TestCaseStatus::success(),
            Status::Failed => {
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                st.set_message(message(r));
                st.set_type("contract");
                st.set_description(failure_text(r, true));
                st
            }
            Status::Error(_) => {
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Error);
                st.set_message(message(r));
                st.set_type("runner");
                st.set_description(failure_text(r, true));
                st
            }
            Status::Skipped(reason) => {
                let mut st = TestCaseStatus::skipped();
                st.set_message(reason.clone());
                st
            }
            Status::Interrupted(at) => {
                let mut st = TestCaseStatus::skipped();
                st.set_message(format!("interrupted: {at}"));
                st.set_type("interrupted");
                st
            }
        };
        let mut tc = TestCase::new(r.name.clone(), status);
        tc.set_classname(format!("rpconform.{}", r.suite));
        tc.set_time(Duration::from_millis(r.duration_ms));
        let rules: Vec<&str> = r.verdicts.iter().map(|v| v.rule.as_str()).collect();
        if !rules.is_empty() {
            tc.add_property(("rules", rules.join(",").as_str()));
        }
        let exempt: Vec<String> = r
            .verdicts
            .iter()
            .filter_map(|v| {
                v.exempt_reason
                    .as_ref()
                    .map(|why| format!("{} ({why})", v.rule))
            })
            .collect();
        if !exempt.is_empty() {
            tc.add_property(("exempt", exempt.join("; ").as_str()));
        }
        if r.status == Status::Warned {
            let warned: Vec<&str> = r
                .verdicts
                .iter()
                .filter(|v| v.failed_outcome())
                .map(|v| v.rule.as_str())
                .collect();
            tc.add_property(("warnings", warned.join(",").as_str()));
            tc.set_system_out(failure_text(r, false));
        }
        suite.add_test_case(tc);
    }
    report.add_test_suites(suites.into_values());
    report
        .to_string()
        .unwrap_or_else(|e| format!("<!-- cannot serialize JUnit: {e} -->"))
}
