//! The decoded view of a text the redactor searches besides the text itself: percent-encoding,
//! JSON escapes and HTML character references undone (up to [`DECODE_ROUNDS`] rounds), NULs
//! dropped, and the line breaks of wrapped base64 removed, with every decoded byte mapped back
//! to the span of the original it came from (see the `redact` module).

/// Rounds of decoding for nested encodings (a JSON-escaped, percent-encoded value).
const DECODE_ROUNDS: usize = 8;

/// The shortest line of wrapped base64 whose line break a reader removes (the wrappers write
/// 64 or 76 characters a line; anything from 40 is taken as wrapped).
const WRAP_MIN: usize = 40;

/// A decoded copy of a text, for detection only: every byte knows the span of the original
/// text it came from (`from[i]..to[i]`), so a hit in the copy masks the original.
pub(super) struct View {
    pub(super) bytes: Vec<u8>,
    from: Vec<u32>,
    to: Vec<u32>,
}

impl View {
    /// Decode percent-encoding, JSON escapes and HTML character references, for up to
    /// [`DECODE_ROUNDS`] rounds; `None` when there is nothing to decode.
    pub(super) fn decode(h: &[u8]) -> Option<View> {
        if h.len() >= u32::MAX as usize {
            return None;
        }
        let mut view = decode_once(h)?;
        for _ in 1..DECODE_ROUNDS {
            let Some(next) = decode_once(&view.bytes) else {
                break;
            };
            // Compose: a byte of `next` came from `view.bytes[f..t]`, which came from the
            // original span `view.from[f]..view.to[t - 1]`.
            let from = next.from.iter().map(|&f| view.from[f as usize]).collect();
            let to = next.to.iter().map(|&t| view.to[t as usize - 1]).collect();
            view = View {
                bytes: next.bytes,
                from,
                to,
            };
        }
        Some(view)
    }

    /// The original span of the view's `a..b`.
    pub(super) fn span(&self, a: usize, b: usize) -> (usize, usize) {
        (self.from[a] as usize, self.to[b - 1] as usize)
    }
}

fn hex_val(c: u8) -> Option<u32> {
    (c as char).to_digit(16)
}

/// `\uXXXX` at `h[i..]`: its code unit.
fn json_unit(h: &[u8], i: usize) -> Option<u32> {
    if h.get(i) != Some(&b'\\') || h.get(i + 1) != Some(&b'u') || i + 6 > h.len() {
        return None;
    }
    h[i + 2..i + 6]
        .iter()
        .try_fold(0u32, |acc, &c| Some(acc * 16 + hex_val(c)?))
}

/// One escape at `h[i..]`: the decoded bytes and the escape's length.
fn escape_at(h: &[u8], i: usize) -> Option<(Vec<u8>, usize)> {
    let push_char = |c: char| {
        let mut buf = [0u8; 4];
        c.encode_utf8(&mut buf).as_bytes().to_vec()
    };
    match h[i] {
        b'%' => {
            let hi = hex_val(*h.get(i + 1)?)?;
            let lo = hex_val(*h.get(i + 2)?)?;
            Some((vec![(hi * 16 + lo) as u8], 3))
        }
        b'\\' => match *h.get(i + 1)? {
            b'u' => {
                let u = json_unit(h, i)?;
                if (0xD800..0xDC00).contains(&u) {
                    let lo = json_unit(h, i + 6).filter(|l| (0xDC00..0xE000).contains(l))?;
                    let c = char::from_u32(0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00))?;
                    Some((push_char(c), 12))
                } else {
                    Some((push_char(char::from_u32(u)?), 6))
                }
            }
            c @ (b'/' | b'\\' | b'"' | b'\'') => Some((vec![c], 2)),
            b'n' => Some((vec![b'\n'], 2)),
            b't' => Some((vec![b'\t'], 2)),
            b'r' => Some((vec![b'\r'], 2)),
            b'b' => Some((vec![8], 2)),
            b'f' => Some((vec![12], 2)),
            _ => None,
        },
        b'&' => {
            let end = h[i..].iter().take(12).position(|&c| c == b';')?;
            let name = &h[i + 1..i + end];
            let c = match name {
                b"amp" => '&',
                b"quot" => '"',
                b"apos" => '\'',
                b"lt" => '<',
                b"gt" => '>',
                [b'#', b'x' | b'X', hex @ ..] if !hex.is_empty() => char::from_u32(
                    hex.iter()
                        .try_fold(0u32, |a, &c| Some(a.checked_mul(16)? + hex_val(c)?))?,
                )?,
                [b'#', dec @ ..] if !dec.is_empty() => {
                    char::from_u32(dec.iter().try_fold(0u32, |a, &c| {
                        Some(a.checked_mul(10)? + (c as char).to_digit(10)?)
                    })?)?
                }
                _ => return None,
            };
            Some((push_char(c), end + 1))
        }
        // A NUL carries nothing a reader keeps (UTF-16 text read as bytes, or written through
        // `\u0000` escapes, is the secret with a NUL between its letters; an XML writer drops
        // them): it decodes to nothing.
        0 => Some((Vec::new(), 1)),
        // A line break inside a run of base64 (what `base64`, MIME and PEM write every 64 or
        // 76 characters) is not part of the encoded text: a reader joins the lines.
        b'\r' | b'\n' if wrapped_at(h, i) => {
            let len = if h[i] == b'\r' && h.get(i + 1) == Some(&b'\n') {
                2
            } else {
                1
            };
            Some((Vec::new(), len))
        }
        _ => None,
    }
}

fn is_base64_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'-' | b'_')
}

/// Is the line break at `i` one inside wrapped base64: a line of at least [`WRAP_MIN`] base64
/// characters before it, and a line that goes on in base64 after it (not a `-----END` line:
/// a URL-safe `-` or `_` starts a base64 line only before a letter or digit)?
fn wrapped_at(h: &[u8], i: usize) -> bool {
    let after = if h[i] == b'\r' && h.get(i + 1) == Some(&b'\n') {
        i + 2
    } else {
        i + 1
    };
    let goes_on = match h.get(after) {
        Some(b'-' | b'_') => h.get(after + 1).is_some_and(|c| c.is_ascii_alphanumeric()),
        Some(c) => is_base64_char(*c),
        None => false,
    };
    goes_on && i >= WRAP_MIN && h[i - WRAP_MIN..i].iter().all(|c| is_base64_char(*c))
}

pub(super) fn is_escape_start(b: &u8) -> bool {
    matches!(b, b'%' | b'\\' | b'&' | 0 | b'\r' | b'\n')
}

/// One round of decoding; `None` when nothing in `h` decodes. Runs of plain bytes are copied
/// (and their spans recorded) in bulk.
fn decode_once(h: &[u8]) -> Option<View> {
    // The first escape that decodes, if any: most texts have none and cost only this scan.
    let mut i = 0;
    let first = loop {
        let at = i + h[i..].iter().position(is_escape_start)?;
        if let Some(e) = escape_at(h, at) {
            break (at, e);
        }
        i = at + 1;
    };
    let mut bytes = Vec::with_capacity(h.len());
    let mut from: Vec<u32> = Vec::with_capacity(h.len());
    let mut to: Vec<u32> = Vec::with_capacity(h.len());
    let copy = |bytes: &mut Vec<u8>, from: &mut Vec<u32>, to: &mut Vec<u32>, a: usize, b: usize| {
        bytes.extend_from_slice(&h[a..b]);
        from.extend(a as u32..b as u32);
        to.extend(a as u32 + 1..b as u32 + 1);
    };
    let (mut at, mut next) = (first.0, Some(first.1));
    let mut done = 0;
    loop {
        copy(&mut bytes, &mut from, &mut to, done, at);
        match next.take() {
            Some((dec, len)) => {
                for d in dec.into_iter().filter(|&d| d != 0) {
                    bytes.push(d);
                    from.push(at as u32);
                    to.push((at + len) as u32);
                }
                done = at + len;
            }
            None => {
                // An escape character that does not decode: a plain byte.
                copy(&mut bytes, &mut from, &mut to, at, at + 1);
                done = at + 1;
            }
        }
        match h[done..].iter().position(is_escape_start) {
            Some(p) => {
                at = done + p;
                next = escape_at(h, at);
            }
            None => {
                copy(&mut bytes, &mut from, &mut to, done, h.len());
                break;
            }
        }
    }
    Some(View { bytes, from, to })
}
