//! ISO 8601 date-times, as operation resources carry them (001: "DateLiteral per ISO8601").
//! Broader than RFC 3339: any number of fractional digits (real RPs send 7), a comma as decimal
//! mark, an offset written `Z`, `+hh:mm`, `+hhmm` or `+hh`, or no offset (read as UTC), the
//! basic format without separators, and a space instead of `T` (RFC 3339's allowance).

use chrono::{DateTime, FixedOffset, NaiveDate, TimeZone};

/// The instant a date-time names, when the value is one.
pub fn parse(s: &str) -> Option<DateTime<FixedOffset>> {
    let s = s.trim();
    let (date, rest) = split_date(s)?;
    let rest = rest
        .strip_prefix(['T', 't', ' '])
        .filter(|r| !r.is_empty())?;
    let (time, zone) = split_zone(rest)?;
    let (h, mi, sec, nanos) = parse_time(time)?;
    let offset = parse_zone(zone)?;
    let naive_date = NaiveDate::from_ymd_opt(date.0, date.1, date.2)?;
    // 24:00 is the end of the day; 60 seconds is a leap second.
    let (naive_date, h) = if h == 24 && mi == 0 && sec == 0 && nanos == 0 {
        (naive_date.succ_opt()?, 0)
    } else {
        (naive_date, h)
    };
    let leap = sec == 60;
    let t = naive_date.and_hms_nano_opt(h, mi, if leap { 59 } else { sec }, nanos)?;
    offset.from_local_datetime(&t).single()
}

fn digits(s: &str, n: usize) -> Option<u32> {
    (s.len() >= n && s.as_bytes()[..n].iter().all(u8::is_ascii_digit))
        .then(|| s[..n].parse().ok())
        .flatten()
}

fn split_date(s: &str) -> Option<((i32, u32, u32), &str)> {
    let y = digits(s, 4)? as i32;
    let r = &s[4..];
    if let Some(r) = r.strip_prefix('-') {
        let m = digits(r, 2)?;
        let r = r[2..].strip_prefix('-')?;
        let d = digits(r, 2)?;
        Some(((y, m, d), &r[2..]))
    } else {
        let m = digits(r, 2)?;
        let d = digits(&r[2..], 2)?;
        Some(((y, m, d), &r[4..]))
    }
}

fn split_zone(s: &str) -> Option<(&str, &str)> {
    match s.find(['Z', 'z', '+', '-']) {
        Some(i) => Some((&s[..i], &s[i..])),
        None => Some((s, "")),
    }
}

fn parse_time(t: &str) -> Option<(u32, u32, u32, u32)> {
    let (main, frac) = match t.find(['.', ',']) {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    let parts: Vec<&str> = if main.contains(':') {
        main.split(':').collect()
    } else {
        main.as_bytes()
            .chunks(2)
            .map(|c| std::str::from_utf8(c).unwrap_or(""))
            .collect()
    };
    if !(2..=3).contains(&parts.len()) || parts.iter().any(|p| p.len() != 2) {
        return None;
    }
    let h = digits(parts[0], 2)?;
    let mi = digits(parts[1], 2)?;
    let sec = match parts.get(2) {
        Some(p) => digits(p, 2)?,
        None => 0,
    };
    let nanos = match frac {
        None => 0,
        Some(f) if !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()) && parts.len() == 3 => {
            let mut padded: String = f.chars().take(9).collect();
            while padded.len() < 9 {
                padded.push('0');
            }
            padded.parse().ok()?
        }
        Some(_) => return None,
    };
    (h <= 24 && mi <= 59 && sec <= 60).then_some((h, mi, sec, nanos))
}

fn parse_zone(z: &str) -> Option<FixedOffset> {
    if z.is_empty() || z.eq_ignore_ascii_case("z") {
        return FixedOffset::east_opt(0);
    }
    let sign = if z.starts_with('-') { -1 } else { 1 };
    let r = &z[1..];
    let (h, m) = match r.len() {
        2 => (digits(r, 2)?, 0),
        4 => (digits(r, 2)?, digits(&r[2..], 2)?),
        5 if r.as_bytes()[2] == b':' => (digits(r, 2)?, digits(&r[3..], 2)?),
        _ => return None,
    };
    (h <= 23 && m <= 59)
        .then(|| FixedOffset::east_opt(sign * (h as i32 * 3600 + m as i32 * 60)))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn accepts_what_real_rps_send_and_iso_allows() {
        for ok in [
            "2024-05-01T10:00:00Z",
            "2024-05-01T10:00:00.1234567+00:00",
            "2017-06-06T20:04:02.1234567Z",
            "2024-05-01T10:00:00,5+02",
            "2024-05-01T10:00:00.123",
            "2024-05-01T10:00Z",
            "20240501T100000Z",
            "2024-05-01t10:00:00z",
            "2024-05-01 10:00:00Z",
            "2024-05-01T10:00:00-0530",
            "2024-12-31T24:00:00Z",
            "2016-12-31T23:59:60Z",
        ] {
            assert!(parse(ok).is_some(), "{ok}");
        }
        for bad in [
            "05/01/2024 10:00:00 AM",
            "2024-05-01",
            "2024-13-01T10:00:00Z",
            "2024-02-30T10:00:00Z",
            "2024-05-01T25:00:00Z",
            "2024-05-01T10:00:00.Z",
            "2024-05-01T10:00:00+5",
            "yesterday",
            "",
        ] {
            assert!(parse(bad).is_none(), "{bad}");
        }
        assert_eq!(
            parse("2024-05-01T12:00:00+02:00"),
            parse("2024-05-01T10:00:00.0000000Z")
        );
    }
}
