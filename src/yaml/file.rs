//! Reading a text file from outside (a suite, a target, a body or schema file, a token file)
//! with a size bound: the size is checked before reading and enforced while reading (a file
//! that grows, a `/proc` file that claims size 0), only regular files are read (a FIFO would
//! block forever, a device never end), and text that is not UTF-8 is refused with the line
//! and column of the first bad byte.

use std::fmt;
use std::io::Read;
use std::path::Path;

/// Largest suite or target file read (a large suite is some tens of KiB).
pub const MAX_SOURCE_BYTES: usize = 4 * 1024 * 1024;

/// Why a file could not be read, and where (1-based; 1:1 when the file as a whole is wrong).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileError {
    pub line: usize,
    pub col: usize,
    pub message: String,
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl FileError {
    fn whole(message: String) -> Self {
        FileError {
            line: 1,
            col: 1,
            message,
        }
    }

    /// Is this "no such file"?
    pub fn not_found(&self) -> bool {
        self.message == NOT_FOUND
    }
}

const NOT_FOUND: &str = "no such file";

/// `n` bytes for people: `4 MiB`, `52.4 MiB`, `12 KiB`, `300 bytes`.
pub fn human_bytes(n: u64) -> String {
    const KIB: f64 = 1024.0;
    let f = n as f64;
    let (v, unit) = if f >= KIB * KIB {
        (f / (KIB * KIB), "MiB")
    } else if f >= KIB {
        (f / KIB, "KiB")
    } else {
        return format!("{n} bytes");
    };
    if v.fract() == 0.0 {
        format!("{v:.0} {unit}")
    } else {
        format!("{v:.1} {unit}")
    }
}

fn too_large(size: u64, limit: usize) -> String {
    format!(
        "the file is {} ({size} bytes), over the limit of {} for this kind of file",
        human_bytes(size),
        human_bytes(limit as u64)
    )
}

/// Read `path` as UTF-8 text of at most `limit` bytes.
pub fn read_text(path: &Path, limit: usize) -> Result<String, FileError> {
    let io = |e: std::io::Error| {
        FileError::whole(if e.kind() == std::io::ErrorKind::NotFound {
            NOT_FOUND.to_string()
        } else {
            format!("cannot read: {e}")
        })
    };
    let not_regular = || {
        FileError::whole(
            "not a regular file (a directory, FIFO, socket or device): give a file".into(),
        )
    };
    // stat first (following links): opening a FIFO would block until a writer comes.
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        // Should the file be swapped for a FIFO between the stat and the open, the open
        // does not block; reading a regular file ignores the flag.
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK);
    }
    let file = opts.open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    if meta.len() > limit as u64 {
        return Err(FileError::whole(too_large(meta.len(), limit)));
    }
    let mut buf = Vec::with_capacity(meta.len() as usize + 1);
    file.take(limit as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(io)?;
    if buf.len() > limit {
        // It grew while being read (or claimed a smaller size): say where the limit is.
        let (line, col) = position(&buf, limit);
        return Err(FileError {
            line,
            col,
            message: format!(
                "the file passes the limit of {} here (it grew while read, or its size is not what it claims)",
                human_bytes(limit as u64)
            ),
        });
    }
    String::from_utf8(buf).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let (line, col) = position(bytes, at);
        FileError {
            line,
            col,
            message: format!("not UTF-8 text: invalid byte 0x{:02X}", bytes[at]),
        }
    })
}

/// 1-based line and column (in characters) of byte `at`.
fn position(bytes: &[u8], at: usize) -> (usize, usize) {
    let head = &bytes[..at.min(bytes.len())];
    let line_start = head.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let line = head.iter().filter(|&&b| b == b'\n').count() + 1;
    let col = String::from_utf8_lossy(&head[line_start..]).chars().count() + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("rpconform-file-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn bounded_regular_utf8() {
        let d = scratch("bounded");
        let p = d.join("a.yaml");
        std::fs::write(&p, "a: 1\n").unwrap();
        assert_eq!(read_text(&p, 100).unwrap(), "a: 1\n");
        let e = read_text(&p, 3).unwrap_err();
        assert!(e.message.contains("5 bytes"), "{e}");
        std::fs::write(&p, b"a: 1\nb: x\xffy\n").unwrap();
        let e = read_text(&p, 100).unwrap_err();
        assert_eq!((e.line, e.col), (2, 5), "{e}");
        assert!(e.message.contains("0xFF"), "{e}");
        let e = read_text(&d, 100).unwrap_err();
        assert!(e.message.contains("not a regular file"), "{e}");
        let e = read_text(&d.join("missing"), 100).unwrap_err();
        assert!(e.not_found(), "{e}");
        assert_eq!(human_bytes(4 * 1024 * 1024), "4 MiB");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let d = scratch("fifo");
        let p = d.join("f.yaml");
        let ok = std::process::Command::new("mkfifo")
            .arg(&p)
            .status()
            .is_ok_and(|s| s.success());
        // coreutils' mkfifo is on every machine the tests run on: not making one is a fault.
        assert!(ok, "mkfifo {} failed", p.display());
        let e = read_text(&p, 100).unwrap_err();
        assert!(e.message.contains("not a regular file"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }
}
