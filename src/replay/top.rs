//! The top level of a JSON recording: which format it is (by its keys: `log`,
//! `Entries`/`Variables`, `interactions`), each entry parsed on its own and handed to the
//! builder as it is read.

use std::io::BufRead;
use std::path::Path;

use serde_json::Value;

use super::build::Builder;
use super::stream::{JsonStream, Pos};
use super::{Format, ReplayError, har, proxy, vcr};

/// Read a JSON recording; the format found.
pub(crate) fn read_json(
    path: &Path,
    input: impl BufRead,
    forced: Option<Format>,
    b: &mut Builder<'_>,
) -> Result<Format, ReplayError> {
    // Base64 text is 4/3 of the bytes it holds; the body cap applies to the bytes.
    let cap = b.body_cap();
    let mut s = JsonStream::new(path, input, cap.saturating_mul(4) / 3 + 4);
    let mut found: Option<Format> = None;
    s.object("the recording object", |s, key| {
        let format = match key.as_str() {
            "log" => Format::Har,
            "Entries" | "Variables" => Format::TestProxy,
            "interactions" => Format::Vcrpy,
            _ => return s.skip(),
        };
        if let Some(f) = forced
            && f != format
        {
            return Err(s.error(format!(
                "`{key}` makes this a {format} file, but the format was given as {f}"
            )));
        }
        if let Some(prev) = found
            && prev != format
        {
            return Err(s.error(format!(
                "`{key}` ({format}) next to the keys of a {prev} file: not one recording format"
            )));
        }
        found = Some(format);
        let each = |parse: fn(&[u8], usize) -> serde_json::Result<super::raw::RawEntry>| {
            move |b: &mut Builder<'_>, raw: &[u8], pos: Pos| -> Result<(), ReplayError> {
                let e = parse(raw, cap).map_err(|e| pos.error(path, &e))?;
                b.push(e);
                Ok(())
            }
        };
        match key.as_str() {
            "log" => {
                let mut entries = false;
                s.object("the HAR `log`", |s, k| match k.as_str() {
                    "creator" => {
                        let pos = s.pos();
                        let raw = s.capture()?;
                        let c: Value =
                            serde_json::from_slice(&raw).map_err(|e| pos.error(path, &e))?;
                        if c.get("name").and_then(Value::as_str) == Some(har::CREATOR) {
                            b.own_file = true;
                        }
                        Ok(())
                    }
                    "entries" => {
                        entries = true;
                        let f = each(har::entry);
                        s.array("the HAR entries", |raw, pos| f(b, raw, pos))
                    }
                    _ => s.skip(),
                })?;
                if !entries {
                    return Err(s.error("the HAR `log` has no `entries` array"));
                }
                Ok(())
            }
            "Entries" => {
                let f = each(proxy::entry);
                s.array("the test-proxy Entries", |raw, pos| f(b, raw, pos))
            }
            "Variables" => {
                let pos = s.pos();
                let raw = s.capture()?;
                let vars: Option<serde_json::Map<String, Value>> =
                    serde_json::from_slice(&raw).map_err(|e| pos.error(path, &e))?;
                b.variables = vars
                    .map(|m| m.into_iter().map(|(k, _)| k).collect())
                    .unwrap_or_default();
                Ok(())
            }
            _ => {
                let f = each(vcr::json_interaction);
                s.array("the vcrpy interactions", |raw, pos| f(b, raw, pos))
            }
        }
    })?;
    s.end()?;
    found.ok_or_else(|| {
        ReplayError::at(
            path,
            1,
            1,
            "no `log` (HAR), `Entries` (test-proxy) or `interactions` (vcrpy) at the top level: \
             not a recording",
        )
        .not_a_recording()
    })
}
