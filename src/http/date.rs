//! HTTP dates (RFC 9110 §5.6.7), read with `httpdate`: leniently, as a recipient reads a
//! `Date` or a `Retry-After` to compute a wait or a clock's skew, and strictly, as a sender
//! must write one (HDR-05 judges the RP as a sender).

use std::time::SystemTime;

/// An HTTP-date as a recipient must accept it: the IMF-fixdate (`Sun, 06 Nov 1994 08:49:37
/// GMT`), or one of the obsolete forms, RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and
/// asctime (`Sun Nov  6 08:49:37 1994`). Whole seconds; `None` for anything else.
pub fn parse_http_date(v: &str) -> Option<SystemTime> {
    httpdate::parse_http_date(v.trim()).ok()
}

/// Is `v` an IMF-fixdate, the one form a sender MUST generate? The obsolete forms parse too,
/// so the date must also be written back exactly as it came (fixed width, GMT, the weekday of
/// the date).
pub fn is_imf_fixdate(v: &str) -> bool {
    let v = v.trim();
    parse_http_date(v).is_some_and(|t| httpdate::fmt_http_date(t) == v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    /// 1994-11-06T08:49:37Z, RFC 9110's example.
    fn example() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(784_111_777)
    }

    #[test]
    fn a_recipient_reads_all_three_forms() {
        for v in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
            "  Sun, 06 Nov 1994 08:49:37 GMT ",
        ] {
            assert_eq!(parse_http_date(v), Some(example()), "{v}");
        }
        for v in [
            "",
            "1994-11-06T08:49:37Z",
            "Sun, 06 Nov 1994 08:49:37 +0000",
            "Mon, 06 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 25:49:37 GMT",
            "120",
        ] {
            assert_eq!(parse_http_date(v), None, "{v}");
        }
    }

    #[test]
    fn a_sender_must_write_the_imf_fixdate() {
        assert!(is_imf_fixdate("Sun, 06 Nov 1994 08:49:37 GMT"));
        assert!(is_imf_fixdate("Thu, 26 Nov 2026 18:00:00 GMT"));
        for v in [
            // The obsolete forms a recipient still reads.
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
            // What RFC 5322 allows and IMF-fixdate does not.
            "Sun, 6 Nov 1994 08:49:37 GMT",
            "06 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 +0000",
            "Sun, 06 Nov 1994 08:49:37 UT",
            "sun, 06 nov 1994 08:49:37 gmt",
            // A weekday that is not the date's.
            "Mon, 06 Nov 1994 08:49:37 GMT",
            "2026-11-26T18:00:00Z",
        ] {
            assert!(!is_imf_fixdate(v), "{v}");
        }
    }
}
