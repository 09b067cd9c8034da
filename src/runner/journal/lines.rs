//! The journal's lines: the run's header, then one event per line (a PUT about to be sent,
//! the group about to be created, gone, left, the end).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::http::Surface;

/// The journal of runs before journals had a file per run (still read).
pub const FILE_NAME: &str = "journal.jsonl";

/// This run's journal file in `dir`.
pub fn file_for(dir: &Path, run_id: &str) -> PathBuf {
    dir.join(format!("journal-{run_id}.jsonl"))
}

/// What a journal says about the run that wrote it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Header {
    pub version: u32,
    pub run_id: String,
    /// `embedded` or the target file as given.
    pub target: String,
    /// The target file's absolute path (none for the embedded RP, which dies with the run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_file: Option<String>,
    /// Without userinfo.
    pub base_url: String,
    pub subscription: String,
    /// The run's resource group (with the run id suffix when the run creates it).
    pub resource_group: String,
    pub rg_created: bool,
    pub started_at: String,
    pub pid: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub(super) enum Line {
    Run(Header),
    /// A PUT for this resource is about to be sent.
    Put {
        url: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        api_version: Option<String>,
        #[serde(default)]
        surface: Surface,
        by: String,
        at: String,
    },
    /// The run's resource group is about to be created.
    Group {
        url: String,
        api_version: String,
        at: String,
    },
    /// Confirmed gone (a 404 after its delete).
    Gone {
        url: String,
        at: String,
    },
    /// Cleanup could not confirm it gone.
    Left {
        url: String,
        why: String,
        at: String,
    },
    /// The run ended (normally or interrupted) with `left` resources not confirmed gone.
    End {
        left: usize,
        interrupted: bool,
        at: String,
    },
    /// `rpconform cleanup` went over the journal.
    Cleanup {
        left: usize,
        at: String,
    },
}

pub(super) fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
