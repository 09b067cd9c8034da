//! Secret scrubbing at the HTTP boundary: nothing that leaves `http/` (exchanges, transcripts,
//! reports, console lines) carries a credential.
//!
//! Secrets are removed
//! - by header name: the value of Authorization, Cookie and the headers the target marks secret
//!   is masked whole ([`Redactor::header`]);
//! - by value: every token and secret header value registered at run time
//!   ([`Redactor::register`]), wherever it appears (a hostile target may echo it in a body, a
//!   header value, a header *name*, a URL) and in every form a target can reflect it back:
//!   raw, with its letters' case changed, percent-encoded (any subset of characters, upper or
//!   lower hex), JSON-escaped (`\uXXXX` for any subset of characters, `\/`), HTML/XML
//!   character references, hexadecimal, base64 (standard and URL-safe, padded or not, on
//!   its own or inside a longer encoded text such as `base64("Bearer " + token)` or a Basic
//!   credential; wrapped in lines as `base64`, MIME and PEM write it; encoded twice) and
//!   base32;
//! - by shape: JWT-like strings, and the userinfo (`user:password@`) of any URL.
//!
//! # How it is found
//!
//! Registering a secret precomputes its variants once (raw; the claims and signature of a
//! JWT; hex; base64 of the value at each of the three byte alignments it can have inside a
//! longer encoded text, keeping only the characters that depend on the value alone) and
//! compiles all variants of all secrets into one Aho-Corasick automaton with ASCII
//! case-insensitivity. Variants whose case matters (base64) are checked exactly after the
//! automaton reports them. Scrubbing a text is then one pass of the automaton over it (plus a
//! JWT regex with a literal prefix and a scan for `://`), whatever the number of secrets.
//!
//! Encodings whose subset of escaped characters is the target's choice (percent-encoding, JSON
//! and HTML escapes) cannot be precomputed. For those, a text that holds `%`, `\` or `&` is
//! also decoded into a *view* (up to eight rounds, for nested encodings; NUL characters, raw or
//! escaped, dropped, so a token echoed as UTF-16 is found) that records, for
//! every decoded byte, the span of the original text it came from. The view is searched like
//! the original; a hit in the view is mapped back through those spans and the mask is applied
//! to the original text, so the escaped form (`\u0065\u0079…`, `%2E`) is what gets replaced
//! and the rest of the text is left exactly as it was.
//!
//! # Short secrets
//!
//! A secret shorter than [`SHORT_SECRET`] bytes (a 4-character API key, say) is still
//! registered, but masking every occurrence of `ab` in ordinary text would wreck reports. A
//! short secret (and the base64 of one) is masked only where it stands as a whole value: the
//! whole text (a header value, a parsed JSON string), a whole quoted string (`"ab"`, `'ab'`,
//! so a JSON string value in a raw body), a whole query or form value (`=ab` followed by `&`,
//! `#`, `;`, a quote, whitespace or the end), or the credential after `Bearer ` / `Basic `. The
//! same checks run on the decoded view, so `%61b` and `\u0061b` count too.

use std::sync::{Arc, OnceLock, RwLock};

use aho_corasick::{AhoCorasick, MatchKind};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use regex::bytes::Regex;

use super::redact_view::{View, is_escape_start};

pub const MASK: &str = "[REDACTED]";

/// Secrets shorter than this many bytes are masked only as whole values (see the module docs).
pub const SHORT_SECRET: usize = 6;

/// Base64 fragments shorter than this are not searched for inside longer text: a handful of
/// base64 characters occurs by chance in ordinary text.
const MIN_BASE64_CORE: usize = 16;

/// Text decoded into a view at once (see [`Redactor::find`]).
const VIEW_WINDOW: usize = 256 * 1024;
/// How far before its window a view starts decoding, to be in step with the text.
const VIEW_LEAD: usize = 256;
/// Most bytes an escaped form takes per byte of the value (`\u0041` is six, a surrogate
/// pair twelve for four).
const ESCAPE_GROWTH: usize = 12;

/// How one automaton pattern must be confirmed once the automaton (ASCII case-insensitive)
/// reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Check {
    /// A base64 form: the bytes must match exactly (case is meaning in base64), and the
    /// mask covers the whole run of base64 characters around it (the encoded text holds a
    /// secret; its edges would otherwise still decode to the secret's first or last bytes).
    base64: bool,
    /// Only as a whole value (short secrets).
    whole: bool,
}

/// The compiled form of every registered secret.
#[derive(Debug, Default)]
struct Matcher {
    values: Vec<String>,
    /// Length of the longest value, in bytes.
    longest: usize,
    patterns: Vec<Vec<u8>>,
    checks: Vec<Check>,
    automaton: Option<AhoCorasick>,
}

impl Matcher {
    fn build(values: Vec<String>) -> Matcher {
        let mut patterns: Vec<Vec<u8>> = Vec::new();
        let mut checks: Vec<Check> = Vec::new();
        for v in &values {
            for (p, c) in variants(v) {
                if !patterns
                    .iter()
                    .zip(&checks)
                    .any(|(q, d)| *q == p && *d == c)
                {
                    patterns.push(p);
                    checks.push(c);
                }
            }
        }
        let automaton = if patterns.is_empty() {
            None
        } else {
            AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::Standard)
                .build(&patterns)
                .ok()
        };
        Matcher {
            longest: values.iter().map(String::len).max().unwrap_or(0),
            values,
            patterns,
            checks,
            automaton,
        }
    }
}

/// The variants of one secret to search for, each with how a hit is confirmed.
fn variants(v: &str) -> Vec<(Vec<u8>, Check)> {
    let b = v.as_bytes();
    let long = b.len() >= SHORT_SECRET;
    let loose = Check {
        base64: false,
        whole: !long,
    };
    let mut out = vec![(b.to_vec(), loose)];
    if long {
        // A JWT's claims and signature segments are secret on their own too: a target may
        // echo one segment, which the JWT shape alone no longer matches.
        if jwt().is_match(b) {
            for seg in v.split('.').skip(1).filter(|p| p.len() >= 16) {
                out.push((seg.as_bytes().to_vec(), loose));
            }
        }
        let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
        out.push((hex.into_bytes(), loose));
    }
    // Base64 inside a longer encoded text ([`base64_cores`]).
    let exact = Check {
        base64: true,
        whole: false,
    };
    for core in base64_cores(b) {
        out.push((core, exact));
    }
    if long {
        // Encoded twice: the base64 of the value's base64 (`base64(base64(token))`).
        for once in [STANDARD.encode(b), URL_SAFE_NO_PAD.encode(b)] {
            for core in base64_cores(once.as_bytes()) {
                out.push((core, exact));
            }
        }
        // Base32 (RFC 4648; its letters have one case, so the case-insensitive search is
        // exact): the value at each of the five byte offsets of a 5-byte group.
        for shift in 0..5 {
            let mut input = vec![0u8; shift];
            input.extend_from_slice(b);
            let enc = data_encoding::BASE32_NOPAD.encode(&input);
            let first = if shift == 0 { 0 } else { 1 };
            let end = input.len() / 5;
            if end > first && 8 * (end - first) >= MIN_BASE64_CORE {
                out.push((enc.as_bytes()[8 * first..8 * end].to_vec(), loose));
            }
        }
    }
    // Base64 of the value alone, as a whole value (covers short secrets and values whose
    // cores above are too short to search for).
    let whole_exact = Check {
        base64: true,
        whole: true,
    };
    for engine in [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD] {
        out.push((engine.encode(b).into_bytes(), whole_exact));
    }
    out
}

/// The parts of `b`'s base64 (standard and URL-safe) that stay the same wherever `b` stands in
/// a longer encoded text: `b` starts at byte offset 0, 1 or 2 of a 3-byte group, and the groups
/// made only of its bytes encode the same whatever surrounds them.
fn base64_cores(b: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for engine in [STANDARD_NO_PAD, URL_SAFE_NO_PAD] {
        for shift in 0..3 {
            let mut input = vec![0u8; shift];
            input.extend_from_slice(b);
            let enc = engine.encode(&input);
            let first = if shift == 0 { 0 } else { 1 };
            let end = input.len() / 3;
            if end > first && 4 * (end - first) >= MIN_BASE64_CORE {
                out.push(enc.as_bytes()[4 * first..4 * end].to_vec());
            }
        }
    }
    out
}

fn jwt() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*").expect("valid regex")
    })
}

/// Scrubs secrets from text. Shared by the HTTP client, the token source and whoever prints.
#[derive(Debug)]
pub struct Redactor {
    names: Vec<String>,
    matcher: RwLock<Arc<Matcher>>,
}

impl Default for Redactor {
    fn default() -> Self {
        Redactor::new(&[])
    }
}

impl Redactor {
    pub fn new(secret_headers: &[String]) -> Self {
        let mut names: Vec<String> = [
            "authorization",
            "proxy-authorization",
            "cookie",
            "set-cookie",
            "x-ms-authorization-auxiliary",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        names.extend(secret_headers.iter().map(|s| s.to_ascii_lowercase()));
        Redactor {
            names,
            matcher: RwLock::new(Arc::new(Matcher::default())),
        }
    }

    /// Remember a secret value (a token, a secret header value, a password). Every value is
    /// kept, short ones too (they are masked only as whole values). Registering a value
    /// already known costs a lookup; a new one recompiles the automaton (microseconds).
    pub fn register(&self, value: &str) {
        let v = value.trim();
        if v.is_empty() {
            return;
        }
        if self.current().values.iter().any(|x| x == v) {
            return;
        }
        let mut m = self.matcher.write().unwrap_or_else(|e| e.into_inner());
        if m.values.iter().any(|x| x == v) {
            return;
        }
        let mut values = m.values.clone();
        values.push(v.to_string());
        *m = Arc::new(Matcher::build(values));
    }

    /// Remember the value of header `name`: with an auth scheme (`Basic xyz`), the
    /// credential after it too.
    pub fn register_header_value(&self, value: &str) {
        self.register(value);
        if let Some((scheme, cred)) = value.trim().split_once(' ')
            && is_scheme(scheme)
        {
            self.register(cred);
        }
    }

    /// Remember the userinfo of a URL (`https://user:password@host/`): the password, the
    /// user name and `user:password` (the text a Basic credential encodes), all decoded.
    pub fn register_userinfo(&self, url: &url::Url) {
        let dec = |s: &str| {
            url::form_urlencoded::parse(format!("x={}", s.replace('+', "%2B")).as_bytes())
                .next()
                .map(|(_, v)| v.into_owned())
                .unwrap_or_default()
        };
        let user = dec(url.username());
        let pass = url.password().map(dec);
        for v in [Some(user.clone()), pass.clone()].into_iter().flatten() {
            self.register(&v);
        }
        if let Some(p) = pass {
            // And the Basic credential as sent: base64 of `user:password`.
            let pair = format!("{user}:{p}");
            self.register(&STANDARD.encode(&pair));
            self.register(&pair);
        }
    }

    pub fn is_secret_header(&self, name: &str) -> bool {
        let n = name.to_ascii_lowercase();
        self.names.contains(&n)
    }

    fn current(&self) -> Arc<Matcher> {
        self.matcher
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Scrub a free text (body, URL, header value or name, error message).
    pub fn text(&self, s: &str) -> String {
        let ranges = self.find(s.as_bytes());
        if ranges.is_empty() {
            return s.to_string();
        }
        let mut out = String::with_capacity(s.len());
        let mut at = 0;
        for (a, b) in ranges {
            // Mapped spans are widened to character boundaries.
            let mut a = a.max(at);
            while !s.is_char_boundary(a) {
                a -= 1;
            }
            let mut b = b.min(s.len());
            while !s.is_char_boundary(b) {
                b += 1;
            }
            if a < at {
                a = at;
            }
            if b <= a {
                continue;
            }
            out.push_str(&s[at..a]);
            out.push_str(MASK);
            at = b;
        }
        out.push_str(&s[at..]);
        out
    }

    /// The byte spans of `s` that [`Redactor::text`] would mask (sorted, merged, on
    /// character boundaries), for a caller that masks them its own way.
    pub fn spans(&self, s: &str) -> Vec<(usize, usize)> {
        let mut out: Vec<(usize, usize)> = Vec::new();
        for (a, b) in self.find(s.as_bytes()) {
            let mut a = a.min(s.len());
            while !s.is_char_boundary(a) {
                a -= 1;
            }
            let mut b = b.min(s.len());
            while !s.is_char_boundary(b) {
                b += 1;
            }
            match out.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ if b > a => out.push((a, b)),
                _ => {}
            }
        }
        out
    }

    /// Does `s` hold anything [`Redactor::text`] would mask?
    pub fn has_secret(&self, s: &str) -> bool {
        !self.find(s.as_bytes()).is_empty()
    }

    /// Scrub one header value: masked whole when the name is secret (keeping an auth scheme
    /// word: `Bearer [REDACTED]`), else scrubbed like any text.
    pub fn header(&self, name: &str, value: &str) -> String {
        if self.is_secret_header(name) {
            if let Some((scheme, _)) = value.trim_start().split_once(' ')
                && is_scheme(scheme)
            {
                return format!("{scheme} {MASK}");
            }
            return MASK.to_string();
        }
        self.text(value)
    }

    /// Scrub a header as it is recorded: the name too (a target may put a secret in it).
    pub fn header_pair(&self, name: &str, value: &str) -> (String, String) {
        (self.text(name), self.header(name, value))
    }

    /// Sorted, merged byte spans of `h` to mask.
    fn find(&self, h: &[u8]) -> Vec<(usize, usize)> {
        let m = self.current();
        let mut ranges = Vec::new();
        scan(&m, h, &mut |a, b| ranges.push((a, b)));
        if h.iter().any(is_escape_start) {
            // The decoded view costs nine bytes per byte of text: build it a window at a time
            // (a 16 MiB body would otherwise take 150 MB). Windows overlap by more than the
            // longest escaped form of a registered value, so no such form is cut in two, and
            // each starts a little early, so its decoding is in step with the text's.
            let reach = ESCAPE_GROWTH * m.longest + VIEW_LEAD;
            let window = (4 * reach).max(VIEW_WINDOW);
            let mut start = 0;
            while start < h.len() {
                let lo = start.saturating_sub(VIEW_LEAD);
                let hi = (start + window + reach).min(h.len());
                if let Some(view) = View::decode(&h[lo..hi]) {
                    scan(&m, &view.bytes, &mut |a, b| {
                        let (x, y) = view.span(a, b);
                        ranges.push((x + lo, y + lo));
                    });
                }
                start += window;
            }
        }
        merge(ranges)
    }
}

/// An HTTP auth scheme word (`Bearer`, `Basic`...).
fn is_scheme(s: &str) -> bool {
    !s.is_empty() && s.len() <= 16 && s.bytes().all(|b| b.is_ascii_alphabetic())
}

/// Report every span of `h` to mask: registered secrets, JWT shapes, URL userinfo.
fn scan(m: &Matcher, h: &[u8], hit: &mut dyn FnMut(usize, usize)) {
    if m.automaton.is_none() {
        // The automaton could not be built (never seen: it would take millions of
        // patterns): fall back to a plain search for each value, case-insensitively.
        for v in m.values.iter().map(String::as_bytes) {
            for (i, w) in h.windows(v.len()).enumerate() {
                if w.eq_ignore_ascii_case(v)
                    && (v.len() >= SHORT_SECRET || whole_at(h, i, i + v.len()))
                {
                    hit(i, i + v.len());
                }
            }
        }
    }
    if let Some(ac) = &m.automaton {
        for found in ac.find_overlapping_iter(h) {
            let (a, b) = (found.start(), found.end());
            let check = m.checks[found.pattern().as_usize()];
            if check.base64 && h[a..b] != m.patterns[found.pattern().as_usize()][..] {
                continue;
            }
            if check.whole && !whole_at(h, a, b) {
                continue;
            }
            if check.base64 {
                let (a, b) = base64_word(h, a, b);
                hit(a, b);
            } else {
                hit(a, b);
            }
        }
    }
    for found in jwt().find_iter(h) {
        hit(found.start(), found.end());
    }
    userinfo(h, hit);
}

/// `h[a..b]` widened to the run of base64 characters (either alphabet, with padding) around
/// it.
fn base64_word(h: &[u8], mut a: usize, mut b: usize) -> (usize, usize) {
    let is_b64 = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'-' | b'_');
    while a > 0 && is_b64(h[a - 1]) {
        a -= 1;
    }
    while b < h.len() && is_b64(h[b]) {
        b += 1;
    }
    while b < h.len() && h[b] == b'=' {
        b += 1;
    }
    (a, b)
}

/// Is `h[a..b]` a whole value (see the module docs)?
fn whole_at(h: &[u8], a: usize, b: usize) -> bool {
    let after = h.get(b).copied();
    let ends_value = |c: Option<u8>| {
        matches!(
            c,
            None | Some(b'&' | b'#' | b';' | b'"' | b'\'' | b'<' | b' ' | b'\t' | b'\r' | b'\n')
        )
    };
    if a == 0 {
        return after.is_none() || after.is_some_and(|c| c.is_ascii_whitespace());
    }
    match h[a - 1] {
        b'"' => after == Some(b'"'),
        b'\'' => after == Some(b'\''),
        b'=' => ends_value(after),
        b' ' => {
            let before = &h[..a - 1];
            let word = before
                .iter()
                .rposition(|c| !c.is_ascii_alphabetic())
                .map_or(before, |i| &before[i + 1..]);
            (word.eq_ignore_ascii_case(b"bearer") || word.eq_ignore_ascii_case(b"basic"))
                && (after.is_none() || ends_value(after))
        }
        _ => false,
    }
}

/// The userinfo of every `scheme://userinfo@host` in `h`.
fn userinfo(h: &[u8], hit: &mut dyn FnMut(usize, usize)) {
    static SEP: OnceLock<Regex> = OnceLock::new();
    let sep = SEP.get_or_init(|| Regex::new("://").expect("valid regex"));
    for found in sep.find_iter(h) {
        let i = found.start();
        let start = found.end();
        let scheme_ok = i > 0 && h[i - 1].is_ascii_alphanumeric();
        let mut j = start;
        while j < h.len()
            && !matches!(
                h[j],
                b'/' | b'?' | b'#' | b'@' | b'"' | b'\'' | b'<' | b'>' | b'\\' | b'`'
            )
            && !h[j].is_ascii_whitespace()
        {
            j += 1;
        }
        if scheme_ok && j < h.len() && h[j] == b'@' && j > start {
            hit(start, j);
        }
    }
}

/// Sort and merge overlapping or touching spans.
fn merge(mut r: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    if r.len() < 2 {
        return r;
    }
    r.sort_unstable();
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(r.len());
    for (a, b) in r {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

#[cfg(test)]
#[path = "redact_tests.rs"]
mod tests;
