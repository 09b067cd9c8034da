//! Reading a recording: which format the file holds (from its first significant byte and its
//! top-level keys), its entries handed to the builder, kept or streamed on.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use super::{EntryMeta, Format, ReadOptions, Recording, ReplayError, Streamed, build, top, vcr};
use crate::http::Exchange;

/// Read one recording file.
pub fn read_recording(path: &Path, opts: &ReadOptions) -> Result<Recording, ReplayError> {
    let file = File::open(path)
        .map_err(|e| ReplayError::at(path, 0, 0, format!("cannot open the recording: {e}")))?;
    read_recording_from(path, file, opts)
}

/// Read a recording from any reader; `path` names it in errors and in the result.
pub fn read_recording_from(
    path: &Path,
    input: impl Read,
    opts: &ReadOptions,
) -> Result<Recording, ReplayError> {
    let mut builder = build::Builder::new(opts);
    let format = read_into(path, input, opts, &mut builder)?;
    Ok(builder.finish(path, format))
}

/// Read one recording file entry by entry, handing each (redacted, not yet paired into
/// operations) to `each` in wire order, with whether the file is rpconform's own HAR (known
/// before its entries), and keeping none: memory follows the largest entry, not the file.
pub fn stream_recording(
    path: &Path,
    opts: &ReadOptions,
    each: impl FnMut(Exchange, EntryMeta, bool) + Send,
) -> Result<Streamed, ReplayError> {
    let file = File::open(path)
        .map_err(|e| ReplayError::at(path, 0, 0, format!("cannot open the recording: {e}")))?;
    let mut builder = build::Builder::new(opts).with_sink(Box::new(each));
    let format = read_into(path, file, opts, &mut builder)?;
    Ok(builder.finish_streamed(path, format))
}

/// Read entries from `input` into `builder`; the format read.
fn read_into(
    path: &Path,
    input: impl Read,
    opts: &ReadOptions,
    builder: &mut build::Builder<'_>,
) -> Result<Format, ReplayError> {
    let mut input = BufReader::with_capacity(64 * 1024, input);
    let first = first_significant_byte(&mut input)
        .map_err(|e| ReplayError::at(path, 0, 0, format!("cannot read the recording: {e}")))?;
    let format = match first {
        None => return Err(ReplayError::at(path, 0, 0, "the file is empty")),
        Some(b'{') => top::read_json(path, &mut input, opts.format, builder)?,
        Some(b'[') => {
            return Err(ReplayError::at(
                path,
                0,
                0,
                "a JSON array at the top level is no recording format: expected an object with \
                 `log` (HAR), `Entries` (test-proxy) or `interactions` (vcrpy)",
            ));
        }
        Some(_) => match opts.format {
            None | Some(Format::Vcrpy) => vcr::read_yaml(path, input, builder)?,
            Some(f) => {
                return Err(ReplayError::at(
                    path,
                    1,
                    1,
                    format!("expected a JSON object (a {f} file), found text that is not JSON"),
                ));
            }
        },
    };
    Ok(format)
}

/// Skip a UTF-8 byte-order mark and whitespace; the first other byte, not consumed.
fn first_significant_byte(input: &mut impl BufRead) -> std::io::Result<Option<u8>> {
    let mut at_start = true;
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            return Ok(None);
        }
        if at_start && buf.starts_with(&[0xEF, 0xBB, 0xBF]) {
            input.consume(3);
            at_start = false;
            continue;
        }
        at_start = false;
        match buf.iter().position(|b| !b.is_ascii_whitespace()) {
            Some(i) => {
                let b = buf[i];
                input.consume(i);
                return Ok(Some(b));
            }
            None => {
                let n = buf.len();
                input.consume(n);
            }
        }
    }
}
