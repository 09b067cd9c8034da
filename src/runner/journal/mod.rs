//! The run's journal (`<report dir>/journal-<run id>.jsonl`): one JSON object per line, written
//! as the run goes, so that a run killed outright (SIGKILL, a machine that dies) leaves a record
//! of what it may have created. Each resource (and the run's resource group) is written *before*
//! its PUT is sent, and again once it is confirmed gone; what cleanup could not delete is
//! written with the reason. Each run has a file of its own, so two runs sharing a report
//! directory never truncate each other's; `journal.jsonl` (one per directory, as earlier
//! versions wrote it) is still read. `rpconform cleanup --journal DIR` reads them all and
//! deletes what is still outstanding (and only that).
//!
//! Every line is one `write(2)` on a file opened for appending, so it is in the operating
//! system's hands before the request leaves (a killed process loses nothing); a background
//! thread makes it durable (`fdatasync`) within a second, and at the end of the run. A write
//! or sync that fails (a full disk) is remembered ([`Journal::failure`]): from then on the
//! run creates nothing more, since it could lose what it created.
//!
//! The journal's lines (`lines`), writing them (`writer`), reading them back (`read`), and the
//! token marks that keep a caller's token out of it (`token`).

mod lines;
mod read;
mod token;
mod writer;

pub use lines::{FILE_NAME, Header, file_for};
pub use read::{Outstanding, find, process_alive, read};
pub use token::{has_token_mark, token_mask, token_unmask};
pub use writer::Journal;

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
