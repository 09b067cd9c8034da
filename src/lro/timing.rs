//! How long a client waits before the next poll: the server's `Retry-After` (integer seconds,
//! or an HTTP-date), or the millisecond forms azure-core reads first (`retry-after-ms`,
//! `x-ms-retry-after-ms`).

use std::time::{Duration, SystemTime};

use crate::http::{Response, parse_http_date};

/// Seconds of a `Retry-After` value in the integer form, the only form the ARM contract allows.
pub fn retry_after_secs(v: &str) -> Option<u64> {
    let v = v.trim();
    (!v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
        .then(|| v.parse::<u64>().ok())
        .flatten()
}

/// Longest wait a response may ask for, as read: waits are scaled and added to clock
/// readings, so an absurd value (`retry-after-ms: 1e300`, `Retry-After: 2^64-1`) must not
/// overflow them. The follower and the throttle budget bound them much further.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(365 * 86_400);

/// The wait a response asks for, as the Azure SDK reads it; `None` when it asks for none.
/// An HTTP-date is measured against the response's `Date` (or now). At most
/// [`MAX_RETRY_AFTER`].
pub fn retry_after(resp: &Response) -> Option<Duration> {
    for h in ["retry-after-ms", "x-ms-retry-after-ms"] {
        if let Some(ms) = resp.header(h).and_then(|v| v.trim().parse::<f64>().ok())
            && ms.is_finite()
            && ms >= 0.0
        {
            let secs = (ms / 1000.0).min(MAX_RETRY_AFTER.as_secs_f64());
            return Some(Duration::from_secs_f64(secs));
        }
    }
    let v = resp.header("retry-after")?;
    if let Some(s) = retry_after_secs(v) {
        return Some(Duration::from_secs(s).min(MAX_RETRY_AFTER));
    }
    let when = parse_http_date(v)?;
    let now = resp
        .header("date")
        .and_then(parse_http_date)
        .unwrap_or_else(SystemTime::now);
    // Whole seconds, none when the date has passed.
    let secs = when.duration_since(now).map_or(0, |d| d.as_secs());
    Some(Duration::from_secs(secs).min(MAX_RETRY_AFTER))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resp(headers: &[(&str, &str)]) -> Response {
        Response {
            status: 202,
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            body: String::new(),
            body_bytes: 0,
            json: None,
            json_error: None,
            set_cookies: Vec::new(),
            sent: None,
        }
    }

    #[test]
    fn reads_every_form_the_sdk_reads() {
        assert_eq!(
            retry_after(&resp(&[("Retry-After", "10")])),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            retry_after(&resp(&[("retry-after-ms", "250"), ("Retry-After", "10")])),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            retry_after(&resp(&[
                ("Date", "Wed, 21 Oct 2015 07:28:00 GMT"),
                ("Retry-After", "Wed, 21 Oct 2015 07:28:30 GMT")
            ])),
            Some(Duration::from_secs(30))
        );
        // A recipient reads the obsolete forms of an HTTP-date too.
        for (date, at) in [
            (
                "Wednesday, 21-Oct-15 07:28:00 GMT",
                "Wed Oct 21 07:28:45 2015",
            ),
            (
                "Wed Oct 21 07:28:00 2015",
                "Wednesday, 21-Oct-15 07:28:45 GMT",
            ),
        ] {
            assert_eq!(
                retry_after(&resp(&[("Date", date), ("Retry-After", at)])),
                Some(Duration::from_secs(45)),
                "{date} / {at}"
            );
        }
        // A date already past asks for no wait; an unreadable one for none at all.
        assert_eq!(
            retry_after(&resp(&[
                ("Date", "Wed, 21 Oct 2015 07:28:00 GMT"),
                ("Retry-After", "Wed, 21 Oct 2015 07:27:00 GMT")
            ])),
            Some(Duration::ZERO)
        );
        assert_eq!(
            retry_after(&resp(&[("Retry-After", "2015-10-21T07:28:00Z")])),
            None
        );
        assert_eq!(retry_after(&resp(&[("Retry-After", "-1")])), None);
        // Absurd values are read as the longest wait, never an overflow.
        for (h, v) in [
            ("Retry-After", "18446744073709551615"),
            ("retry-after-ms", "1e300"),
            ("x-ms-retry-after-ms", "18446744073709551615000"),
        ] {
            let d = retry_after(&resp(&[(h, v)])).unwrap();
            assert_eq!(d, MAX_RETRY_AFTER, "{h}: {v}");
            let _ = d.mul_f64(100.0);
        }
        assert_eq!(retry_after(&resp(&[])), None);
        assert_eq!(retry_after_secs(" 7 "), Some(7));
        assert_eq!(retry_after_secs("1.5"), None);
    }
}
