//! Pictures for report.html, as inline SVG (no script, nothing from the network): each test's
//! exchanges on a timeline — the requests its steps sent, every poll with its status and the
//! wait before it (the Retry-After the previous answer asked for), a new Location handed out,
//! the final reads — with the rules that failed pinned on the exchange that showed them; and a
//! bar per rule family (passed / failed / warned / not judged / not applicable). A reader sees
//! at a glance where an RP stalled, flipped or answered early. Hover shows the details (SVG
//! `<title>`).

use std::fmt::Write as _;

use super::ScenarioResult;
use super::conformance::Conformance;
use crate::http::{Exchange, Role};

const WIDTH: f64 = 760.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 16.0;
const LANE: f64 = 26.0;
const TOP: f64 = 22.0;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The lane an exchange is drawn in.
fn lane(role: Role) -> (usize, &'static str) {
    match role {
        Role::Step | Role::Setup | Role::NextPage => (0, "requests"),
        Role::OperationStatus | Role::LocationPoll | Role::MonitorPoll | Role::TaskPoll => {
            (1, "polls")
        }
        Role::ResourcePoll => (2, "resource"),
        Role::Cleanup => (3, "cleanup"),
    }
}

/// The colour class of an answer.
fn class(x: &Exchange) -> &'static str {
    match x.status() {
        None => "tl-none",
        Some(s) if s >= 400 => "tl-err",
        Some(202) => "tl-wait",
        Some(_) => "tl-ok",
    }
}

fn millis(at: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(at)
        .ok()
        .map(|t| t.timestamp_millis())
}

/// The test's exchanges as an SVG timeline; None when fewer than two can be placed in time.
pub fn test_svg(r: &ScenarioResult) -> Option<String> {
    let placed: Vec<(&Exchange, i64)> = r
        .exchanges
        .iter()
        .filter_map(|x| millis(&x.started_at).map(|t| (x, t)))
        .collect();
    if placed.len() < 2 {
        return None;
    }
    let t0 = placed.iter().map(|(_, t)| *t).min()?;
    let t1 = placed
        .iter()
        .map(|(x, t)| t + x.elapsed_ms as i64)
        .max()?
        .max(t0 + 1);
    let span = (t1 - t0) as f64;
    let scale = (WIDTH - LEFT - RIGHT) / span;
    let xpos = |t: i64| LEFT + (t - t0) as f64 * scale;
    let lanes_used: Vec<usize> = {
        let mut v: Vec<usize> = placed.iter().map(|(x, _)| lane(x.role).0).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let row = |l: usize| lanes_used.iter().position(|u| *u == l).unwrap_or(0) as f64;
    let height = TOP + LANE * lanes_used.len() as f64 + 24.0;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"timeline\" role=\"img\" aria-label=\"timeline of {} exchanges over {:.1} s\" viewBox=\"0 0 {WIDTH} {height}\" width=\"{WIDTH}\" height=\"{height}\">",
        placed.len(),
        span / 1000.0
    );
    for l in &lanes_used {
        let name = match l {
            0 => "requests",
            1 => "polls",
            2 => "resource",
            _ => "cleanup",
        };
        let y = TOP + LANE * row(*l);
        let _ = write!(
            s,
            "<text class=\"tl-lane\" x=\"4\" y=\"{:.1}\">{name}</text><line class=\"tl-grid\" x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"/>",
            y + 14.0,
            WIDTH - RIGHT,
            y + LANE / 2.0,
            y + LANE / 2.0
        );
    }
    // The rules that failed on each exchange, to pin them there.
    let failed_on = |seq: u64| -> Vec<String> {
        let mut v: Vec<String> = r
            .verdicts
            .iter()
            .filter(|v| v.failed_outcome())
            .filter(|v| {
                v.failures
                    .iter()
                    .any(|f| f.exchange == Some(seq) || f.last_exchange == Some(seq))
            })
            .map(|v| v.rule.clone())
            .collect();
        v.dedup();
        v
    };
    let mut last_poll_end: Option<i64> = None;
    for (x, t) in &placed {
        let (l, _) = lane(x.role);
        let y = TOP + LANE * row(l);
        let x0 = xpos(*t);
        let w = (x.elapsed_ms as f64 * scale).max(3.0);
        let mut tip = super::render::exchange_line(x);
        let _ = write!(tip, " · {} ms", x.elapsed_ms);
        if l == 1 {
            if let Some(prev) = last_poll_end {
                let _ = write!(
                    tip,
                    " · waited {:.1} s before it",
                    (t - prev) as f64 / 1000.0
                );
            }
            last_poll_end = Some(t + x.elapsed_ms as i64);
        }
        if let Some(ra) = x.response.as_ref().and_then(|r| r.header("retry-after")) {
            let _ = write!(tip, " · answered Retry-After: {ra}");
        }
        let _ = write!(
            s,
            "<rect class=\"{}\" x=\"{x0:.1}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"{:.1}\" rx=\"2\"><title>{}</title></rect>",
            class(x),
            y + 5.0,
            LANE - 10.0,
            esc(&tip)
        );
        // A new Location handed out by a poll: a small mark above it.
        if l == 1
            && let Some(loc) = x.response.as_ref().and_then(|r| r.header("location"))
            && crate::lro::path_key(loc) != crate::lro::path_key(&x.url)
        {
            let _ = write!(
                s,
                "<circle class=\"tl-loc\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\"><title>new Location: {}</title></circle>",
                x0 + w / 2.0,
                y + 3.0,
                esc(&crate::http::cut(loc, 200))
            );
        }
        let rules = failed_on(x.seq);
        if !rules.is_empty() {
            let cx = x0 + w / 2.0;
            let _ = write!(
                s,
                "<path class=\"tl-fail\" d=\"M{:.1} {:.1} l5 -8 h-10 z\"><title>failed here: {}</title></path><text class=\"tl-rule\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
                cx,
                y + 4.0,
                esc(&rules.join(", ")),
                cx + 6.0,
                y - 1.0,
                esc(&rules.join(" "))
            );
        }
    }
    let axis_y = TOP + LANE * lanes_used.len() as f64 + 14.0;
    for k in 0..=4 {
        let t = t0 + ((t1 - t0) as f64 * k as f64 / 4.0) as i64;
        let _ = write!(
            s,
            "<text class=\"tl-axis\" x=\"{:.1}\" y=\"{axis_y:.1}\">{:.1} s</text>",
            xpos(t) - 8.0,
            (t - t0) as f64 / 1000.0
        );
    }
    s.push_str("</svg>");
    Some(s)
}

/// One stacked bar per rule family: passed, failed, warned, not judged, not applicable.
pub fn families_svg(conf: &Conformance) -> String {
    let rows = conf.families.len().max(1) as f64;
    let bar_h = 14.0;
    let gap = 6.0;
    let height = rows * (bar_h + gap) + 8.0;
    let max = conf
        .families
        .iter()
        .map(|f| f.rules)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let scale = (WIDTH - LEFT - 140.0) / max;
    let mut s = format!(
        "<svg class=\"families-bar\" role=\"img\" aria-label=\"rules per family by verdict\" viewBox=\"0 0 {WIDTH} {height}\" width=\"{WIDTH}\" height=\"{height}\">"
    );
    for (i, f) in conf.families.iter().enumerate() {
        let y = 4.0 + i as f64 * (bar_h + gap);
        let _ = write!(
            s,
            "<text class=\"tl-lane\" x=\"4\" y=\"{:.1}\">{}</text>",
            y + bar_h - 3.0,
            esc(&f.family)
        );
        let mut x = LEFT;
        for (n, class, what) in [
            (f.failed, "fb-failed", "failed"),
            (f.warned, "fb-warned", "warned"),
            (f.passed, "fb-passed", "passed"),
            (f.not_judged, "fb-nj", "not judged"),
            (f.not_applicable, "fb-na", "not applicable"),
        ] {
            if n == 0 {
                continue;
            }
            let w = n as f64 * scale;
            let _ = write!(
                s,
                "<rect class=\"{class}\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{bar_h}\"><title>{}: {n} {what}</title></rect>",
                esc(&f.family)
            );
            x += w;
        }
        let _ = write!(
            s,
            "<text class=\"tl-axis\" x=\"{:.1}\" y=\"{:.1}\">{} passed · {} failed · {} not judged</text>",
            x + 6.0,
            y + bar_h - 3.0,
            f.passed,
            f.failed + f.warned,
            f.not_judged
        );
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::{faulty_run, info};

    #[test]
    fn a_flow_is_drawn_with_its_failures_pinned_where_they_were_judged() {
        let mut r = faulty_run().remove(1);
        for (i, x) in r.exchanges.iter_mut().enumerate() {
            x.started_at = format!("2026-01-01T00:00:0{}.000Z", i * 2);
            x.elapsed_ms = 120;
        }
        let svg = test_svg(&r).expect("two exchanges in time");
        assert!(svg.starts_with("<svg class=\"timeline\""), "{svg}");
        assert_eq!(svg.matches("<rect").count(), r.exchanges.len());
        // ETAG-07 failed on exchange #12: a pin with the rule there.
        assert!(
            svg.contains("failed here: LOC-02, ETAG-07, HDR-02"),
            "{svg}"
        );
        assert!(!svg.contains("<script"), "no script");
        // Fewer than two exchanges in time: no picture.
        r.exchanges.truncate(1);
        assert!(test_svg(&r).is_none());
    }

    #[test]
    fn every_family_gets_a_bar() {
        let conf = crate::report::conformance(&info(), &faulty_run());
        let svg = families_svg(&conf);
        assert_eq!(
            svg.matches("<text class=\"tl-lane\"").count(),
            conf.families.len()
        );
        assert!(svg.contains("fb-failed"), "{svg}");
    }
}
