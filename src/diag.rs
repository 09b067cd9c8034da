//! Positioned diagnostics: what a suite or target file got wrong, where, and what was expected.
//!
//! A [`Diagnostic`] names file, line and column; [`Diagnostic::render`] prints it the way
//! cargo and rustc do, with the renderer they use (`annotate-snippets`: `--> file:line:col`,
//! the offending line, a caret, what was expected) so a user can fix the file without
//! guessing. Loaders collect every diagnostic of a file instead of stopping at the first.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};

/// A position in a source file (1-based line and column).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Pos {
    pub file: Arc<Path>,
    pub line: usize,
    pub col: usize,
}

impl Pos {
    pub fn new(file: &Arc<Path>, line: usize, col: usize) -> Self {
        Pos {
            file: file.clone(),
            line,
            col,
        }
    }
}

impl Pos {
    /// The position as reports show it: the file as [`crate::suiteset::shown_path`] names it
    /// (`suites/etag.yaml:14:11`). Errors use `Display`: the real file, to open.
    pub fn shown(&self) -> String {
        format!(
            "{}:{}:{}",
            crate::suiteset::shown_path(&self.file),
            self.line,
            self.col
        )
    }
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.col)
    }
}

/// One problem found in an input file.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    pub pos: Pos,
    pub message: String,
    /// What would have been accepted there, when that helps ("expected one of: ...").
    pub expected: Option<String>,
}

impl Diagnostic {
    pub fn new(pos: Pos, message: impl Into<String>) -> Self {
        Diagnostic {
            pos,
            message: message.into(),
            expected: None,
        }
    }

    pub fn expected(mut self, what: impl Into<String>) -> Self {
        self.expected = Some(what.into());
        self
    }

    /// Render as cargo and rustc do (`annotate-snippets`, plain: reports and pipes take the
    /// text as it is): `error: …`, `--> file:line:col`, the source line with a caret under the
    /// column, and what was expected as an `= expected: …` footer.
    pub fn render(&self, source: Option<&str>) -> String {
        let path = self.pos.file.display().to_string();
        let mut group = Group::with_title(Level::ERROR.primary_title(self.message.as_str()));
        let line = source.and_then(|s| s.lines().nth(self.pos.line.saturating_sub(1)));
        group = match line {
            Some(line) => {
                // Credentials in a URL (`https://user:pass@host`) are never echoed back; the
                // mask keeps the line's length, so the column still points at the same text.
                let mut line = mask_userinfo(line);
                // A column past the end (a missing value at the end of the line) points just
                // after the line's last character, where the renderer can put a caret: padding
                // keeps the column shown the one the diagnostic names.
                let col = self.pos.col.max(1);
                let chars = line.chars().count();
                if col > chars + 1 {
                    line.extend(std::iter::repeat_n(' ', col - chars - 1));
                }
                // Columns count characters; the renderer's spans are byte offsets.
                let at = line
                    .char_indices()
                    .nth(col - 1)
                    .map_or(line.len(), |(i, _)| i);
                group.element(
                    Snippet::source(line)
                        .line_start(self.pos.line)
                        .path(path)
                        .annotation(AnnotationKind::Primary.span(at..at)),
                )
            }
            None => group.element(
                Origin::path(path)
                    .line(self.pos.line)
                    .char_column(self.pos.col),
            ),
        };
        if let Some(exp) = &self.expected {
            // The renderer normalizes titles and source lines (tabs, control characters) but
            // takes messages as styled text: a hint can quote the file, so it is normalized too.
            let exp = annotate_snippets::normalize_untrusted_str(exp);
            group = group.element(Level::NOTE.with_name("expected").message(exp));
        }
        let mut out = Renderer::plain().render(&[group]);
        out.push('\n');
        out
    }
}

/// A line with the userinfo of any URL in it (`scheme://user:pass@`) replaced by `*`.
fn mask_userinfo(line: &str) -> String {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| regex::Regex::new(r"://([^/\s@]+)@").expect("valid regex"));
    re.replace_all(line, |c: &regex::Captures<'_>| {
        format!("://{}@", "*".repeat(c[1].chars().count()))
    })
    .into_owned()
}

/// Every diagnostic of a load, with the sources needed to render them.
#[derive(Debug, Default)]
pub struct Report {
    pub diagnostics: Vec<Diagnostic>,
    sources: Vec<(PathBuf, Arc<str>)>,
}

impl Report {
    pub fn add_source(&mut self, path: &Path, text: Arc<str>) {
        self.sources.push((path.to_path_buf(), text));
    }

    pub fn push(&mut self, d: Diagnostic) {
        self.diagnostics.push(d);
    }

    /// Rewrite every source line (`line`, which must keep each line's width so carets stay
    /// under their column) and every message and hint (`text`): secrets of the file out.
    pub fn scrub(&mut self, line: &dyn Fn(&str) -> String, text: &dyn Fn(&str) -> String) {
        for (_, src) in &mut self.sources {
            let mut out = String::with_capacity(src.len());
            for l in src.split_inclusive('\n') {
                let (body, end) = match l.strip_suffix('\n') {
                    Some(b) => (b, "\n"),
                    None => (l, ""),
                };
                out.push_str(&line(body));
                out.push_str(end);
            }
            *src = Arc::from(out);
        }
        for d in &mut self.diagnostics {
            d.message = text(&d.message);
            d.expected = d.expected.as_deref().map(text);
        }
    }

    pub fn extend(&mut self, ds: impl IntoIterator<Item = Diagnostic>) {
        self.diagnostics.extend(ds);
    }

    pub fn is_empty(&self) -> bool {
        self.diagnostics.is_empty()
    }

    pub fn len(&self) -> usize {
        self.diagnostics.len()
    }

    pub fn render(&self) -> String {
        let mut out = String::new();
        for d in &self.diagnostics {
            let src = self
                .sources
                .iter()
                .find(|(p, _)| p.as_path() == &*d.pos.file)
                .map(|(_, s)| &**s);
            out.push_str(&d.render(src));
            out.push('\n');
        }
        out
    }
}

/// Suggest the closest candidate for a misspelt name (edit distance at most 2); equally close
/// candidates are all named: "`DEL-01` or `DEL-04`".
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    let w = word.to_ascii_lowercase();
    let candidates: Vec<&str> = candidates.into_iter().collect();
    // Look-alike characters (O for 0, l or I for 1) are the likeliest slip: an exact match
    // after folding them wins outright.
    let fold = |s: &str| {
        s.to_ascii_lowercase()
            .replace('o', "0")
            .replace(['l', 'i'], "1")
    };
    if let Some(c) = candidates.iter().find(|c| fold(c) == fold(word)) {
        return Some(c.to_string());
    }
    let scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .map(|c| (levenshtein(&w, &c.to_ascii_lowercase()), c))
        .filter(|(d, _)| *d <= 2)
        .collect();
    let best = scored.iter().map(|(d, _)| *d).min()?;
    let mut ties: Vec<&str> = scored
        .iter()
        .filter(|(d, _)| *d == best)
        .map(|(_, c)| *c)
        .collect();
    ties.dedup();
    Some(ties.join("` or `"))
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diag(line: usize, col: usize, message: &str) -> Diagnostic {
        let file: Arc<Path> = Arc::from(Path::new("suites/x.yaml"));
        Diagnostic::new(Pos::new(&file, line, col), message)
    }

    #[test]
    fn renders_caret_under_column() {
        let d = diag(2, 5, "unknown key `stauts`").expected("status");
        assert_eq!(
            d.render(Some("a: 1\nb:  stauts\n")),
            "error: unknown key `stauts`\n --> suites/x.yaml:2:5\n  |\n2 | b:  stauts\n  |     ^\n  |\n  = expected: status\n"
        );
        // Wider line numbers widen the gutter; no hint, no footer.
        let text = diag(12, 1, "bad").render(Some(&"x\n".repeat(12)));
        assert!(
            text.ends_with("  --> suites/x.yaml:12:1\n   |\n12 | x\n   | ^\n"),
            "{text}"
        );
    }

    #[test]
    fn columns_count_characters_and_tabs_line_up() {
        // A tab is shown as spaces and the caret moves with it; columns are characters.
        let text = diag(1, 5, "m").render(Some("\tb:\tx"));
        assert!(
            text.contains("1 |     b:    x\n  |           ^\n"),
            "{text}"
        );
        let text = diag(1, 6, "m").render(Some("日本語: x"));
        assert!(text.contains("--> suites/x.yaml:1:6\n"), "{text}");
        assert!(text.contains("1 | 日本語: x\n  |         ^\n"), "{text}");
    }

    #[test]
    fn credentials_and_control_characters_are_never_echoed() {
        let text = diag(1, 11, "m").render(Some("base_url: https://me:hunter2@h/\u{1b}[31m"));
        assert!(
            !text.contains("hunter2") && !text.contains('\u{1b}'),
            "{text}"
        );
        assert!(text.contains("https://**********@h/"), "{text}");
        assert!(text.contains("--> suites/x.yaml:1:11\n"), "{text}");
    }

    #[test]
    fn positions_past_the_line_or_the_file_keep_their_column() {
        // Past the end of the line: the caret after it, at the column named.
        let text = diag(1, 9, "m").render(Some("key:"));
        assert!(text.contains("--> suites/x.yaml:1:9\n"), "{text}");
        assert!(text.contains("  |         ^\n"), "{text}");
        // No such line (or no source): the position alone, and the hint.
        let text = diag(3, 1, "end of file")
            .expected("a value")
            .render(Some("a: 1\n"));
        assert_eq!(
            text,
            "error: end of file\n--> suites/x.yaml:3:1\n = expected: a value\n"
        );
    }

    #[test]
    fn a_report_renders_every_diagnostic_of_each_file() {
        let file: Arc<Path> = Arc::from(Path::new("suites/x.yaml"));
        let mut r = Report::default();
        r.add_source(&file, Arc::from("a: secret\nb: 2\n"));
        r.push(Diagnostic::new(Pos::new(&file, 1, 4), "first `secret`"));
        r.push(Diagnostic::new(Pos::new(&file, 2, 4), "second").expected("secret"));
        r.scrub(&|l| l.replace("secret", "******"), &|t| {
            t.replace("secret", "[REDACTED]")
        });
        let text = r.render();
        assert!(!text.contains("secret"), "{text}");
        assert!(
            text.contains("error: first `[REDACTED]`\n --> suites/x.yaml:1:4\n"),
            "{text}"
        );
        assert!(text.contains("1 | a: ******\n  |    ^\n"), "{text}");
        assert!(
            text.contains("error: second\n --> suites/x.yaml:2:4\n"),
            "{text}"
        );
        assert!(text.contains("= expected: [REDACTED]\n"), "{text}");
    }

    #[test]
    fn suggests_close_names() {
        assert_eq!(
            did_you_mean("stauts", ["status", "headers"]).as_deref(),
            Some("status")
        );
        assert_eq!(did_you_mean("zzz", ["status", "headers"]), None);
        assert_eq!(
            did_you_mean("DEL-4O", ["DEL-01", "DEL-04", "ETAG-07"]).as_deref(),
            Some("DEL-01` or `DEL-04")
        );
        assert_eq!(
            did_you_mean("ETAG-O7", ["ETAG-07", "ETAG-17"]).as_deref(),
            Some("ETAG-07")
        );
    }
}
