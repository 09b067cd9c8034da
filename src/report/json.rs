//! `report.json`: the run settings, the counts, the conformance view, and every test with its
//! verdicts (rule, level, expected, seen, the exchange in one line) and the exchanges the
//! transcript policy kept. Results are written one per line, as they come from
//! `results.jsonl`; [`read_report`] reads a report back one result at a time (for
//! `report merge` and `report diff`), never the whole file at once.

use std::fmt;
use std::io::{self, BufReader, Write};
use std::path::Path;

use serde::Deserializer;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::conformance::Conformance;
use super::{Counts, RunInfo, RunStatus, ScenarioResult};

/// Writes report.json: the head, then each result's line, then the end.
pub struct JsonWriter<W: Write> {
    out: W,
    first: bool,
}

impl<W: Write> JsonWriter<W> {
    pub fn begin(
        mut out: W,
        info: &RunInfo,
        counts: &Counts,
        conformance: &Conformance,
        status: &RunStatus,
    ) -> io::Result<Self> {
        write!(
            out,
            "{{\n\"run\": {},\n\"status\": {},\n\"counts\": {},\n\"conformance\": {},\n\"results\": [",
            pretty(info)?,
            pretty(status)?,
            pretty(counts)?,
            pretty(conformance)?
        )?;
        Ok(JsonWriter { out, first: true })
    }

    /// One result, already serialized as one line of JSON.
    pub fn add_raw(&mut self, line: &[u8]) -> io::Result<()> {
        self.out
            .write_all(if self.first { b"\n" } else { b",\n" })?;
        self.first = false;
        self.out.write_all(line)
    }

    pub fn end(mut self) -> io::Result<W> {
        self.out.write_all(b"\n]}\n")?;
        self.out.flush()?;
        Ok(self.out)
    }
}

fn pretty<T: serde::Serialize>(v: &T) -> io::Result<String> {
    serde_json::to_string_pretty(v).map_err(io::Error::other)
}

/// What a report.json says besides its results.
#[derive(Debug)]
pub struct ReportHead {
    pub run: RunInfo,
    pub counts: Option<Counts>,
    /// The run's status (absent in reports of older versions).
    pub status: Option<RunStatus>,
}

type OnRun<'f> = dyn FnMut(&RunInfo) -> Result<(), String> + 'f;
type OnResult<'f> = dyn FnMut(ScenarioResult) -> Result<(), String> + 'f;

struct Top<'a, 'f> {
    on_run: &'a mut OnRun<'f>,
    on_result: &'a mut OnResult<'f>,
}

impl<'de> Visitor<'de> for Top<'_, '_> {
    type Value = ReportHead;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an rpconform report.json object {run, counts, results}")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ReportHead, A::Error> {
        let mut run = None;
        let mut counts = None;
        let mut status = None;
        let mut results_seen = false;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "run" => {
                    let r: RunInfo = map.next_value()?;
                    (self.on_run)(&r).map_err(de::Error::custom)?;
                    run = Some(r);
                }
                "counts" => counts = Some(map.next_value()?),
                "status" => status = Some(map.next_value()?),
                "results" => {
                    map.next_value_seed(Results {
                        on_result: &mut *self.on_result,
                    })?;
                    results_seen = true;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let run = run.ok_or_else(|| de::Error::missing_field("run"))?;
        if !results_seen {
            return Err(de::Error::missing_field("results"));
        }
        Ok(ReportHead {
            run,
            counts,
            status,
        })
    }
}

struct Results<'a, 'f> {
    on_result: &'a mut OnResult<'f>,
}

impl<'de> DeserializeSeed<'de> for Results<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Results<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of test results")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(r) = seq.next_element::<ScenarioResult>()? {
            (self.on_result)(r).map_err(de::Error::custom)?;
        }
        Ok(())
    }
}

/// The report.json of a directory, or the file itself.
pub fn report_path(p: &Path) -> std::path::PathBuf {
    if p.is_dir() {
        p.join("report.json")
    } else {
        p.to_path_buf()
    }
}

/// Read a report.json (or a directory holding one) one result at a time: `on_run` sees the
/// settings (before the results, in the files rpconform writes), `on_result` each result.
/// Errors name the file, line and column.
pub fn read_report(
    path: &Path,
    on_run: &mut OnRun<'_>,
    on_result: &mut OnResult<'_>,
) -> Result<ReportHead, String> {
    let path = report_path(path);
    let file =
        std::fs::File::open(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut de = serde_json::Deserializer::from_reader(BufReader::new(file));
    let head = de
        .deserialize_map(Top { on_run, on_result })
        .and_then(|h| de.end().map(|()| h))
        .map_err(|e| {
            format!(
                "{}:{}:{}: not an rpconform report.json: {e}",
                path.display(),
                e.line(),
                e.column()
            )
        })?;
    Ok(head)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::conformance::conformance;
    use crate::report::fixtures::{faulty_run, info};

    fn write(dir: &Path) -> Vec<ScenarioResult> {
        let run = faulty_run();
        let conf = conformance(&info(), &run);
        let file = std::fs::File::create(dir.join("report.json")).unwrap();
        let status = RunStatus::compute(&info(), &Counts::default(), &conf);
        let mut w = JsonWriter::begin(file, &info(), &Counts::default(), &conf, &status).unwrap();
        for r in &run {
            w.add_raw(serde_json::to_string(r).unwrap().as_bytes())
                .unwrap();
        }
        w.end().unwrap();
        run
    }

    #[test]
    fn a_written_report_reads_back_result_by_result() {
        let dir = std::env::temp_dir().join(format!("rpconform-json-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let run = write(&dir);
        let text = std::fs::read_to_string(dir.join("report.json")).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["conformance"]["rules"][0]["id"], "ETAG-07");
        assert!(
            v["status"]["state"].is_string(),
            "the run's status is in the report"
        );
        assert_eq!(v["results"].as_array().unwrap().len(), run.len());
        let mut names = Vec::new();
        let mut saw_run = false;
        let head = read_report(
            &dir,
            &mut |r| {
                saw_run = r.run_id == "r1";
                Ok(())
            },
            &mut |r| {
                names.push(r.name);
                Ok(())
            },
        )
        .unwrap();
        assert!(saw_run);
        assert_eq!(head.run.target, "embedded");
        assert_eq!(names.len(), run.len());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn bad_input_names_file_line_and_column() {
        let dir = std::env::temp_dir().join(format!("rpconform-json-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("report.json");
        std::fs::write(&p, "{\"run\": {\"x\": 1},\n \"results\": []}").unwrap();
        let e = read_report(&p, &mut |_| Ok(()), &mut |_| Ok(())).unwrap_err();
        assert!(e.contains("report.json:1:"), "{e}");
        std::fs::write(&p, "[1, 2]").unwrap();
        let e = read_report(&p, &mut |_| Ok(()), &mut |_| Ok(())).unwrap_err();
        assert!(e.contains("not an rpconform report.json"), "{e}");
        let e = read_report(&dir.join("nope"), &mut |_| Ok(()), &mut |_| Ok(())).unwrap_err();
        assert!(e.contains("cannot read"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
