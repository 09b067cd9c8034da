//! vcrpy cassettes: YAML streamed through yaml-rust2's event parser (which keeps positions and
//! the `!!binary` tag that serde_yaml drops), one interaction held at a time; or the same
//! structure serialised as JSON.

use std::cell::RefCell;
use std::io::BufRead;
use std::path::Path;
use std::rc::Rc;

use base64::Engine;
use serde::de;
use serde_json::Value;
use yaml_rust2::Event;
use yaml_rust2::parser::Parser;
use yaml_rust2::scanner::{Marker, TScalarStyle};

use super::body::RawBody;
use super::build::Builder;
use super::raw::{RawEntry, RawResponse};
use super::stream::over_cap;
use super::{Format, ReplayError};

/// Deepest nesting accepted inside one interaction (vcrpy's is 4).
const MAX_DEPTH: usize = 32;

/// A YAML (or JSON) node of one interaction, with its position (line 0: unknown).
#[derive(Debug)]
struct Node {
    v: Kind,
    line: usize,
    col: usize,
}

#[derive(Debug)]
enum Kind {
    Null,
    Str(String),
    Binary(String),
    Seq(Vec<Node>),
    Map(Vec<(String, Node)>),
}

type Fail = (usize, usize, String);

fn fail(n: &Node, msg: impl Into<String>) -> Fail {
    (n.line, n.col, msg.into())
}

impl Node {
    fn get(&self, key: &str) -> Option<&Node> {
        match &self.v {
            Kind::Map(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn field(&self, key: &str, what: &str) -> Result<&Node, Fail> {
        self.get(key)
            .ok_or_else(|| fail(self, format!("{what} has no `{key}`")))
    }

    fn string(&self, what: &str) -> Result<String, Fail> {
        match &self.v {
            Kind::Str(s) => Ok(s.clone()),
            _ => Err(fail(self, format!("expected a string for {what}"))),
        }
    }

    fn body(&self, cap: usize) -> Result<Option<RawBody>, Fail> {
        let too_big = |n: usize| n > cap;
        Ok(match &self.v {
            Kind::Null => None,
            Kind::Str(s) if over_cap(s).is_some() => over_cap(s).map(RawBody::OverCap),
            Kind::Str(s) if too_big(s.len()) => Some(RawBody::OverCap(s.len() as u64)),
            Kind::Str(s) if s.is_empty() => None,
            Kind::Str(s) => Some(RawBody::Text(s.clone())),
            Kind::Binary(b64) => {
                let compact: String = b64.chars().filter(|c| !c.is_ascii_whitespace()).collect();
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(compact.as_bytes())
                    .map_err(|e| fail(self, format!("`!!binary` body is not valid base64: {e}")))?;
                match bytes.len() {
                    0 => None,
                    n if too_big(n) => Some(RawBody::OverCap(n as u64)),
                    _ => Some(RawBody::Bytes(bytes)),
                }
            }
            _ => return Err(fail(self, "expected a string, `!!binary` or null body")),
        })
    }

    fn headers(&self, what: &str) -> Result<Vec<(String, String)>, Fail> {
        let mut out = Vec::new();
        match &self.v {
            Kind::Null => {}
            Kind::Map(m) => {
                for (k, v) in m {
                    match &v.v {
                        Kind::Seq(items) => {
                            for i in items {
                                out.push((k.clone(), i.string(&format!("header `{k}`"))?));
                            }
                        }
                        Kind::Null => out.push((k.clone(), String::new())),
                        _ => out.push((k.clone(), v.string(&format!("header `{k}`"))?)),
                    }
                }
            }
            _ => return Err(fail(self, format!("expected a mapping of {what}"))),
        }
        Ok(out)
    }
}

/// One interaction node to an entry.
fn interaction(n: &Node, cap: usize) -> Result<RawEntry, Fail> {
    let req = n.field("request", "an interaction")?;
    let resp = n.field("response", "an interaction")?;
    let method = req.field("method", "a request")?.string("`method`")?;
    let uri = req.field("uri", "a request")?.string("`uri`")?;
    let mut e = RawEntry::new(method, uri);
    e.request_headers = match req.get("headers") {
        Some(h) => h.headers("request headers")?,
        None => Vec::new(),
    };
    e.request_body = match req.get("body") {
        Some(b) => b.body(cap)?,
        None => None,
    };
    let status = resp.field("status", "a response")?;
    let code = status.field("code", "a response status")?;
    let code = match &code.v {
        Kind::Str(s) => s.trim().parse::<u16>().ok(),
        _ => None,
    }
    .filter(|c| (100..1000).contains(c))
    .ok_or_else(|| fail(code, "expected an HTTP status code (100-999)"))?;
    let body = match resp.get("body") {
        Some(b) => match b.get("string") {
            Some(s) => s.body(cap)?.unwrap_or(RawBody::Empty),
            None if matches!(b.v, Kind::Map(_)) => RawBody::Empty,
            None => b.body(cap)?.unwrap_or(RawBody::Empty),
        },
        None => RawBody::Empty,
    };
    e.response = Some(RawResponse {
        status: code,
        headers: match resp.get("headers") {
            Some(h) => h.headers("response headers")?,
            None => Vec::new(),
        },
        body,
        size: None,
    });
    Ok(e)
}

/// UTF-8 characters of a reader, for the YAML parser. An I/O error or invalid UTF-8 ends the
/// stream and is kept in `problem`, which the reader checks after each event.
struct Chars<R> {
    input: R,
    problem: Rc<RefCell<Option<String>>>,
}

impl<R: BufRead> Chars<R> {
    fn byte(&mut self) -> Option<u8> {
        let b = match self.input.fill_buf() {
            Ok([]) => return None,
            Ok(buf) => buf[0],
            Err(e) => {
                self.stop(format!("cannot read the recording: {e}"));
                return None;
            }
        };
        self.input.consume(1);
        Some(b)
    }

    fn stop(&mut self, why: String) {
        self.problem.borrow_mut().get_or_insert(why);
    }
}

impl<R: BufRead> Iterator for Chars<R> {
    type Item = char;
    fn next(&mut self) -> Option<char> {
        if self.problem.borrow().is_some() {
            return None;
        }
        let b0 = self.byte()?;
        let (len, init) = match b0 {
            0x00..=0x7F => return Some(b0 as char),
            0xC2..=0xDF => (1, u32::from(b0 & 0x1F)),
            0xE0..=0xEF => (2, u32::from(b0 & 0x0F)),
            0xF0..=0xF4 => (3, u32::from(b0 & 0x07)),
            _ => (0, 0),
        };
        let mut c = init;
        for _ in 0..len {
            match self.byte() {
                Some(b) if b & 0xC0 == 0x80 => c = (c << 6) | u32::from(b & 0x3F),
                _ => c = u32::MAX,
            }
        }
        match char::from_u32(c).filter(|_| len > 0) {
            Some(ch) => Some(ch),
            None => {
                self.stop("the file is not valid UTF-8".into());
                None
            }
        }
    }
}

struct Events<'p, R: BufRead> {
    path: &'p Path,
    parser: Parser<Chars<R>>,
    problem: Rc<RefCell<Option<String>>>,
}

impl<R: BufRead> Events<'_, R> {
    fn err(&self, m: Marker, msg: impl Into<String>) -> ReplayError {
        ReplayError::at(self.path, m.line(), m.col() + 1, msg)
    }

    fn next(&mut self) -> Result<(Event, Marker), ReplayError> {
        let r = self.parser.next_token();
        let problem = self.problem.borrow().clone();
        if let Some(p) = problem {
            // An unreadable file has no position; invalid UTF-8 is near where parsing stopped.
            if p.starts_with("cannot read") {
                return Err(ReplayError::at(self.path, 0, 0, p));
            }
            let m = match &r {
                Ok((_, m)) => *m,
                Err(e) => *e.marker(),
            };
            return Err(self.err(m, p));
        }
        r.map_err(|e| self.err(*e.marker(), format!("invalid YAML: {}", e.info())))
    }

    /// The node starting with `first`, read whole (nesting bounded).
    fn node(&mut self, first: (Event, Marker), depth: usize) -> Result<Node, ReplayError> {
        let (ev, m) = first;
        let mut start = m;
        if depth > MAX_DEPTH {
            return Err(self.err(
                m,
                format!("nesting deeper than {MAX_DEPTH} levels in one interaction"),
            ));
        }
        let v = match ev {
            Event::Scalar(s, style, _, tag) => {
                let binary = tag.as_ref().is_some_and(|t| t.suffix.ends_with("binary"));
                let null = style == TScalarStyle::Plain
                    && tag.is_none()
                    && matches!(s.as_str(), "" | "~" | "null" | "Null" | "NULL");
                if binary {
                    Kind::Binary(s)
                } else if null {
                    Kind::Null
                } else {
                    Kind::Str(s)
                }
            }
            Event::SequenceStart(..) => {
                let mut items = Vec::new();
                loop {
                    let next = self.next()?;
                    if next.0 == Event::SequenceEnd {
                        break;
                    }
                    items.push(self.node(next, depth + 1)?);
                }
                Kind::Seq(items)
            }
            Event::MappingStart(..) => {
                let mut entries = Vec::new();
                loop {
                    let (ev, km) = self.next()?;
                    let key = match ev {
                        Event::MappingEnd => break,
                        Event::Scalar(k, ..) => k,
                        _ => return Err(self.err(km, "expected a plain mapping key")),
                    };
                    // A block mapping's own mark is at its first `:`; its first key is
                    // where a reader looks.
                    if entries.is_empty() {
                        start = km;
                    }
                    let value = self.next()?;
                    entries.push((key, self.node(value, depth + 1)?));
                }
                Kind::Map(entries)
            }
            Event::Alias(_) => {
                return Err(self.err(m, "YAML aliases are not supported in recordings"));
            }
            other => return Err(self.err(m, format!("unexpected YAML event {other:?}"))),
        };
        Ok(Node {
            v,
            line: start.line(),
            col: start.col() + 1,
        })
    }

    /// Skip the node starting with `first`.
    fn skip(&mut self, first: Event) -> Result<(), ReplayError> {
        let mut depth = match first {
            Event::SequenceStart(..) | Event::MappingStart(..) => 1usize,
            _ => return Ok(()),
        };
        while depth > 0 {
            match self.next()?.0 {
                Event::SequenceStart(..) | Event::MappingStart(..) => depth += 1,
                Event::SequenceEnd | Event::MappingEnd => depth -= 1,
                Event::StreamEnd => break,
                _ => {}
            }
        }
        Ok(())
    }
}

/// Read a vcrpy YAML cassette.
pub(crate) fn read_yaml(
    path: &Path,
    input: impl BufRead,
    b: &mut Builder<'_>,
) -> Result<Format, ReplayError> {
    let problem = Rc::new(RefCell::new(None));
    let chars = Chars {
        input,
        problem: problem.clone(),
    };
    let mut ev = Events {
        path,
        parser: Parser::new(chars),
        problem,
    };
    let cap = b.body_cap();
    // StreamStart, DocumentStart, then the top mapping.
    let mut first = ev.next()?;
    while matches!(first.0, Event::StreamStart | Event::DocumentStart) {
        first = ev.next()?;
    }
    if !matches!(first.0, Event::MappingStart(..)) {
        return Err(ev
            .err(
                first.1,
                "expected a mapping with `interactions` (a vcrpy cassette)",
            )
            .not_a_recording());
    }
    let mut seen = false;
    loop {
        let (key, km) = ev.next()?;
        let key = match key {
            Event::MappingEnd => break,
            Event::Scalar(k, ..) => k,
            _ => return Err(ev.err(km, "expected a plain mapping key")),
        };
        let (value, vm) = ev.next()?;
        if key != "interactions" {
            ev.skip(value)?;
            continue;
        }
        seen = true;
        match value {
            Event::SequenceStart(..) => {}
            Event::Scalar(s, ..) if s.is_empty() || s == "null" => continue,
            _ => return Err(ev.err(vm, "expected a list of interactions")),
        }
        loop {
            let next = ev.next()?;
            if next.0 == Event::SequenceEnd {
                break;
            }
            let node = ev.node(next, 0)?;
            let entry = interaction(&node, cap)
                .map_err(|(line, col, msg)| ReplayError::at(path, line, col, msg))?;
            b.push(entry);
        }
    }
    if !seen {
        return Err(ReplayError::at(
            path,
            first.1.line(),
            first.1.col() + 1,
            "no `interactions` list: not a vcrpy cassette",
        )
        .not_a_recording());
    }
    Ok(Format::Vcrpy)
}

/// One interaction of a vcrpy cassette serialised as JSON, from its JSON text.
pub(crate) fn json_interaction(raw: &[u8], cap: usize) -> serde_json::Result<RawEntry> {
    let v: Value = serde_json::from_slice(raw)?;
    interaction(&from_json(v), cap).map_err(|(_, _, m)| <serde_json::Error as de::Error>::custom(m))
}

fn from_json(v: Value) -> Node {
    let v = match v {
        Value::Null => Kind::Null,
        Value::String(s) => Kind::Str(s),
        Value::Array(a) => Kind::Seq(a.into_iter().map(from_json).collect()),
        Value::Object(m) => Kind::Map(m.into_iter().map(|(k, x)| (k, from_json(x))).collect()),
        other => Kind::Str(other.to_string()),
    };
    Node { v, line: 0, col: 0 }
}
