//! The top level of a JSON recording, streamed: which format it is (by its keys: `log`,
//! `Entries`/`Variables`, `interactions`), and each entry handed to the builder as it is read.

use std::fmt;
use std::io::Read;
use std::path::Path;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};

use super::build::Builder;
use super::{Format, ReplayError, har, proxy, vcr};

/// Read a JSON recording; the format found.
pub(crate) fn read_json(
    path: &Path,
    input: impl Read,
    forced: Option<Format>,
    b: &mut Builder<'_>,
) -> Result<Format, ReplayError> {
    let mut de = serde_json::Deserializer::from_reader(input);
    let found = Top { b, forced }
        .deserialize(&mut de)
        .map_err(|e| json_error(path, &e))?;
    de.end().map_err(|e| json_error(path, &e))?;
    Ok(found)
}

/// A serde_json error as `file:line:col: message` (without serde's own "at line ... column").
pub(crate) fn json_error(path: &Path, e: &serde_json::Error) -> ReplayError {
    let text = e.to_string();
    let message = match text.rfind(" at line ") {
        Some(i) if e.line() > 0 => text[..i].to_string(),
        _ => text,
    };
    let message = if e.is_eof() {
        format!("{message} (the file ends too early)")
    } else {
        message
    };
    ReplayError::at(path, e.line(), e.column(), message)
}

struct Top<'a, 'o> {
    b: &'a mut Builder<'o>,
    forced: Option<Format>,
}

impl<'de> DeserializeSeed<'de> for Top<'_, '_> {
    type Value = Format;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Format, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Top<'_, '_> {
    type Value = Format;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a recording object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Format, A::Error> {
        let mut found: Option<Format> = None;
        while let Some(key) = map.next_key::<String>()? {
            let format = match key.as_str() {
                "log" => Format::Har,
                "Entries" | "Variables" => Format::TestProxy,
                "interactions" => Format::Vcrpy,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            if let Some(f) = self.forced
                && f != format
            {
                return Err(de::Error::custom(format!(
                    "`{key}` makes this a {format} file, but the format was given as {f}"
                )));
            }
            if let Some(prev) = found
                && prev != format
            {
                return Err(de::Error::custom(format!(
                    "`{key}` ({format}) next to the keys of a {prev} file: not one recording format"
                )));
            }
            found = Some(format);
            match key.as_str() {
                "log" => map.next_value_seed(har::Log(self.b))?,
                "Entries" => map.next_value_seed(proxy::Entries(self.b))?,
                "Variables" => {
                    let vars: Option<Map<String, Value>> = map.next_value()?;
                    self.b.variables = vars
                        .map(|m| m.into_iter().map(|(k, _)| k).collect())
                        .unwrap_or_default();
                }
                _ => map.next_value_seed(vcr::JsonInteractions(self.b))?,
            }
        }
        found.ok_or_else(|| {
            de::Error::custom(
                "no `log` (HAR), `Entries` (test-proxy) or `interactions` (vcrpy) at the top \
                 level: not a recording",
            )
        })
    }
}
