//! URLs parsed once per thread, not once per reader: one exchange's URL is read by the client
//! (routing, the front door, the guard), by the poller and by the judges, a dozen times or more,
//! and `url`'s parser (host normalisation, percent-encoding) was a quarter of a run's CPU.
//! Parsing is a pure function of the text, so a recent result is the same result.

use std::cell::RefCell;
use std::collections::HashMap;

/// Parses kept per thread before the cache starts afresh: every URL the tests running at once
/// read (a run has up to a few dozen tests in flight, each with its resource, operation and
/// parent URLs) fits many times over.
const KEPT: usize = 512;

/// Longer texts are parsed each time and never kept: a hostile target's megabyte-long link must
/// not be held once per thread.
const LONGEST_KEPT: usize = 2048;

type Parsed = Result<url::Url, url::ParseError>;

thread_local! {
    static RECENT: RefCell<HashMap<Box<str>, Parsed>> = RefCell::new(HashMap::new());
}

/// `url::Url::parse(text)`, from this thread's recent parses when `text` was parsed lately.
pub fn parse_url(text: &str) -> Parsed {
    RECENT.with_borrow_mut(|recent| {
        if let Some(parsed) = recent.get(text) {
            return parsed.clone();
        }
        let parsed = url::Url::parse(text);
        if text.len() > LONGEST_KEPT {
            return parsed;
        }
        if recent.len() >= KEPT {
            recent.clear();
        }
        recent.insert(Box::from(text), parsed.clone());
        parsed
    })
}

#[cfg(test)]
mod tests {
    use super::parse_url;

    #[test]
    fn a_recent_parse_is_the_parse() {
        let texts: Vec<String> = (0..(super::KEPT + 40))
            .map(|i| {
                format!(
                    "http://127.0.0.1:{}/subscriptions/s/x?api-version={i}",
                    1000 + i
                )
            })
            .chain([
                "not a url".to_string(),
                "http://[::1/".to_string(),
                "/relative".to_string(),
                format!("http://h/{}", "a".repeat(super::LONGEST_KEPT)),
            ])
            .collect();
        // Twice round, more texts than are kept: hits and a fresh start both give what the parser
        // gives.
        for _ in 0..2 {
            for t in &texts {
                assert_eq!(parse_url(t), url::Url::parse(t), "{t}");
                assert_eq!(parse_url(t), url::Url::parse(t), "{t}");
            }
        }
    }
}
