//! A streaming walk over the top levels of a JSON recording: keys and array elements are
//! read one at a time from a buffered reader, and each entry is handed over as its own byte
//! slice, which serde_json then parses with `from_slice`.
//!
//! Why not serde_json's `from_reader`: it reads byte by byte and was 30 times slower than
//! `from_slice` on a 200 MB HAR. Here string contents (most of a recording's bytes) are
//! skipped with `memchr`, and a string longer than the cap is never held: it is replaced in the
//! captured slice by a short marker ([`over_cap`] reads it back), so memory follows the cap,
//! not the file or its largest entry.

use std::io::BufRead;
use std::path::Path;

use super::ReplayError;

/// Marker left in place of a string over the cap: `"\u0000rpconform-over-cap:<bytes>"`.
const MARK: &str = "\u{0}rpconform-over-cap:";

/// The length of a string that the stream replaced because it was over the cap.
pub(crate) fn over_cap(s: &str) -> Option<u64> {
    s.strip_prefix(MARK)?.parse().ok()
}

fn unreadable(path: &Path, e: &std::io::Error) -> ReplayError {
    ReplayError::at(path, 0, 0, format!("cannot read the recording: {e}"))
}

/// Where an element starts, to turn positions inside it into positions in the file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pos {
    line: usize,
    col: usize,
}

/// A serde_json error as `file:line:col: message` (without serde's own "at line ... column").
pub(crate) fn json_error(path: &Path, e: &serde_json::Error) -> ReplayError {
    let text = e.to_string();
    let message = match text.rfind(" at line ") {
        Some(i) if e.line() > 0 => text[..i].to_string(),
        _ => text,
    };
    ReplayError::at(path, e.line(), e.column(), message)
}

impl Pos {
    /// A serde_json error inside the element starting here, as a file error.
    pub(crate) fn error(self, path: &Path, e: &serde_json::Error) -> ReplayError {
        let (line, col) = if e.line() <= 1 {
            (self.line, self.col + e.column().saturating_sub(1))
        } else {
            (self.line + e.line() - 1, e.column())
        };
        let mut err = json_error(path, e);
        err.line = line;
        err.column = col;
        err
    }
}

pub(crate) struct JsonStream<'p, R> {
    path: &'p Path,
    input: R,
    line: usize,
    col: usize,
    /// Longest string kept in a captured value, in bytes.
    cap: usize,
}

impl<'p, R: BufRead> JsonStream<'p, R> {
    pub(crate) fn new(path: &'p Path, input: R, cap: usize) -> Self {
        JsonStream {
            path,
            input,
            line: 1,
            col: 1,
            cap,
        }
    }

    pub(crate) fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            col: self.col,
        }
    }

    pub(crate) fn error(&self, message: impl Into<String>) -> ReplayError {
        ReplayError::at(self.path, self.line, self.col, message)
    }

    fn eof(&self) -> ReplayError {
        self.error("the file ends too early")
    }

    /// The next byte that is not whitespace, not consumed; `None` at the end of the file.
    pub(crate) fn peek(&mut self) -> Result<Option<u8>, ReplayError> {
        self.whitespace(None)
    }

    /// Skip whitespace, copying it to `out` (so positions inside a captured value are those
    /// of the file); the next byte, not consumed.
    fn whitespace(&mut self, mut out: Option<&mut Vec<u8>>) -> Result<Option<u8>, ReplayError> {
        loop {
            let buf = self
                .input
                .fill_buf()
                .map_err(|e| unreadable(self.path, &e))?;
            if buf.is_empty() {
                return Ok(None);
            }
            let mut n = 0;
            let mut found = None;
            let (mut line, mut col) = (self.line, self.col);
            for &b in buf {
                match b {
                    b'\n' => {
                        line += 1;
                        col = 1;
                    }
                    b' ' | b'\t' | b'\r' => col += 1,
                    _ => {
                        found = Some(b);
                        break;
                    }
                }
                n += 1;
            }
            if let Some(o) = out.as_deref_mut() {
                o.extend_from_slice(&buf[..n]);
            }
            self.line = line;
            self.col = col;
            self.input.consume(n);
            if found.is_some() {
                return Ok(found);
            }
        }
    }

    fn bump(&mut self) {
        self.input.consume(1);
        self.col += 1;
    }

    /// Consume `b` (after whitespace) or fail saying what was expected.
    pub(crate) fn expect(&mut self, b: u8, what: &str) -> Result<(), ReplayError> {
        match self.peek()? {
            Some(x) if x == b => {
                self.bump();
                Ok(())
            }
            Some(x) => Err(self.error(format!("expected {what}, found `{}`", x as char))),
            None => Err(self.eof()),
        }
    }

    /// The members of an object, one call of `each` per key; `each` must consume the value.
    pub(crate) fn object(
        &mut self,
        what: &str,
        mut each: impl FnMut(&mut Self, String) -> Result<(), ReplayError>,
    ) -> Result<(), ReplayError> {
        self.expect(b'{', what)?;
        if self.peek()? == Some(b'}') {
            self.bump();
            return Ok(());
        }
        loop {
            if self.peek()? != Some(b'"') {
                return Err(self.error(format!("expected a member name in {what}")));
            }
            let raw = self.capture()?;
            let key: String =
                serde_json::from_slice(&raw).map_err(|e| self.error(e.to_string()))?;
            self.expect(b':', "`:` after a member name")?;
            each(self, key)?;
            match self.peek()? {
                Some(b',') => self.bump(),
                Some(b'}') => {
                    self.bump();
                    return Ok(());
                }
                Some(x) => {
                    return Err(self.error(format!(
                        "expected `,` or `}}` in {what}, found `{}`",
                        x as char
                    )));
                }
                None => return Err(self.eof()),
            }
        }
    }

    /// The elements of an array, each handed to `each` as its own JSON text.
    pub(crate) fn array(
        &mut self,
        what: &str,
        mut each: impl FnMut(&[u8], Pos) -> Result<(), ReplayError>,
    ) -> Result<(), ReplayError> {
        self.expect(b'[', what)?;
        if self.peek()? == Some(b']') {
            self.bump();
            return Ok(());
        }
        loop {
            let pos = self.pos();
            let raw = self.capture()?;
            each(&raw, pos)?;
            match self.peek()? {
                Some(b',') => self.bump(),
                Some(b']') => {
                    self.bump();
                    return Ok(());
                }
                Some(x) => {
                    return Err(self.error(format!(
                        "expected `,` or `]` in {what}, found `{}`",
                        x as char
                    )));
                }
                None => return Err(self.eof()),
            }
        }
    }

    /// One value as JSON text (strings over the cap replaced by the marker).
    pub(crate) fn capture(&mut self) -> Result<Vec<u8>, ReplayError> {
        let mut out = Vec::new();
        self.walk(Some(&mut out))?;
        Ok(out)
    }

    /// Consume one value without keeping it.
    pub(crate) fn skip(&mut self) -> Result<(), ReplayError> {
        self.walk(None)
    }

    /// Consume one value; nesting is tracked by brackets only (serde checks the rest).
    fn walk(&mut self, mut out: Option<&mut Vec<u8>>) -> Result<(), ReplayError> {
        let mut depth = 0usize;
        loop {
            let Some(b) = self.whitespace(out.as_deref_mut())? else {
                return Err(self.eof());
            };
            match b {
                b'"' => self.string(out.as_deref_mut())?,
                b'{' | b'[' => {
                    depth += 1;
                    if depth > 512 {
                        return Err(self.error("nesting deeper than 512 levels"));
                    }
                    self.push_byte(b, out.as_deref_mut());
                }
                b'}' | b']' => {
                    if depth == 0 {
                        return Err(self.error(format!("expected a value, found `{}`", b as char)));
                    }
                    depth -= 1;
                    self.push_byte(b, out.as_deref_mut());
                }
                b',' | b':' if depth > 0 => self.push_byte(b, out.as_deref_mut()),
                _ => self.scalar(out.as_deref_mut())?,
            }
            if depth == 0 {
                return Ok(());
            }
        }
    }

    fn push_byte(&mut self, b: u8, out: Option<&mut Vec<u8>>) {
        if let Some(o) = out {
            o.push(b);
        }
        self.bump();
    }

    /// A number, `true`, `false` or `null`: bytes up to the next delimiter.
    fn scalar(&mut self, mut out: Option<&mut Vec<u8>>) -> Result<(), ReplayError> {
        let start = self.pos();
        let mut len = 0usize;
        loop {
            let buf = self
                .input
                .fill_buf()
                .map_err(|e| unreadable(self.path, &e))?;
            let n = buf
                .iter()
                .position(|b| {
                    matches!(
                        b,
                        b',' | b'}'
                            | b']'
                            | b':'
                            | b' '
                            | b'\t'
                            | b'\r'
                            | b'\n'
                            | b'"'
                            | b'{'
                            | b'['
                    )
                })
                .unwrap_or(buf.len());
            if let Some(o) = out.as_deref_mut() {
                o.extend_from_slice(&buf[..n]);
            }
            let done = n < buf.len() || buf.is_empty();
            self.input.consume(n);
            self.col += n;
            len += n;
            if len > 64 {
                return Err(ReplayError::at(
                    self.path,
                    start.line,
                    start.col,
                    "expected a JSON value",
                ));
            }
            if done {
                if len == 0 {
                    return Err(ReplayError::at(
                        self.path,
                        start.line,
                        start.col,
                        "expected a JSON value",
                    ));
                }
                return Ok(());
            }
        }
    }

    /// A string, from its opening quote; contents skipped with memchr.
    fn string(&mut self, mut out: Option<&mut Vec<u8>>) -> Result<(), ReplayError> {
        let start_len = out.as_deref().map_or(0, Vec::len);
        self.push_byte(b'"', out.as_deref_mut());
        let mut len = 0usize;
        let mut escaped = false;
        loop {
            let cap = self.cap;
            let buf = self
                .input
                .fill_buf()
                .map_err(|e| unreadable(self.path, &e))?;
            if buf.is_empty() {
                return Err(self.error("a string is not closed before the end of the file"));
            }
            let (n, closed) = if escaped {
                (1, false)
            } else {
                match memchr::memchr2(b'"', b'\\', buf) {
                    Some(i) if buf[i] == b'"' => (i + 1, true),
                    Some(i) => (i + 1, false),
                    None => (buf.len(), false),
                }
            };
            let now_escaped = !escaped && !closed && buf[n - 1] == b'\\';
            if let Some(o) = out.as_deref_mut()
                && len <= cap
            {
                o.extend_from_slice(&buf[..n]);
            }
            self.input.consume(n);
            self.col += n;
            len += n;
            escaped = now_escaped;
            if closed {
                break;
            }
        }
        if len > self.cap
            && let Some(o) = out
        {
            o.truncate(start_len);
            o.extend_from_slice(format!("\"\\u0000rpconform-over-cap:{}\"", len - 1).as_bytes());
        }
        Ok(())
    }

    /// Only whitespace may follow the top-level value.
    pub(crate) fn end(&mut self) -> Result<(), ReplayError> {
        match self.peek()? {
            None => Ok(()),
            Some(x) => Err(self.error(format!(
                "trailing characters after the recording: `{}`",
                x as char
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elements(text: &str, cap: usize) -> Vec<String> {
        let mut s = JsonStream::new(Path::new("t.json"), text.as_bytes(), cap);
        let mut out = Vec::new();
        s.array("a list", |raw, _| {
            out.push(String::from_utf8(raw.to_vec()).unwrap());
            Ok(())
        })
        .unwrap();
        s.end().unwrap();
        out
    }

    #[test]
    fn elements_are_captured_whole() {
        let e = elements(
            r#" [ {"a": [1, {"b": "x\"]}"}], "c": null}, "s", 12.5e3 , true ]"#,
            100,
        );
        assert_eq!(
            e,
            [
                r#"{"a": [1, {"b": "x\"]}"}], "c": null}"#,
                r#" "s""#,
                " 12.5e3",
                " true"
            ]
        );
        assert!(elements("[]", 10).is_empty());
    }

    #[test]
    fn long_strings_become_markers() {
        let e = elements(r#"[{"text": "0123456789abcdef", "k": "ok"}]"#, 10);
        assert_eq!(e, [r#"{"text": "\u0000rpconform-over-cap:16", "k": "ok"}"#]);
        let v: serde_json::Value = serde_json::from_str(&e[0]).unwrap();
        assert_eq!(over_cap(v["text"].as_str().unwrap()), Some(16));
        // An escaped quote at a buffer edge does not end the string.
        let reader = std::io::BufReader::with_capacity(4, &br#"["ab\"cd\\", 1]"#[..]);
        let mut s = JsonStream::new(Path::new("t.json"), reader, 100);
        let mut out = Vec::new();
        s.array("a list", |raw, _| {
            out.push(String::from_utf8(raw.to_vec()).unwrap());
            Ok(())
        })
        .unwrap();
        assert_eq!(out, [r#""ab\"cd\\""#, " 1"]);
    }

    #[test]
    fn errors_have_positions() {
        let mut s = JsonStream::new(Path::new("t.json"), &b"[1,\n  }"[..], 10);
        let e = s.array("a list", |_, _| Ok(())).unwrap_err();
        assert_eq!((e.line, e.column), (2, 3), "{e}");
        let mut s = JsonStream::new(Path::new("t.json"), &b"[\"abc"[..], 10);
        assert!(
            s.array("a list", |_, _| Ok(()))
                .unwrap_err()
                .message
                .contains("not closed")
        );
        let mut s = JsonStream::new(Path::new("t.json"), &b"{\"a\" 1}"[..], 10);
        let e = s.object("the top", |s, _| s.skip()).unwrap_err();
        assert_eq!(
            (e.line, e.column, e.message.as_str()),
            (1, 6, "expected `:` after a member name, found `1`")
        );
    }
}
