//! Where a command's output goes: stdout or `-o FILE`, warnings split off to
//! stderr (silenced by `-q`), and text wrapped to 80 columns.
//!
//! Every command prints through [`text`] or [`data`], so `-o`, `-q` and the
//! 80-column rule hold for all of them without each command knowing.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

pub use crate::text::wrap;

/// The widest line of text output, as a mail to a kernel list wants.
pub const WIDTH: usize = 80;

struct Settings {
    file: Option<PathBuf>,
    quiet: bool,
    /// Whether the `-o` file was already truncated by this process.
    started: bool,
}

static SETTINGS: Mutex<Settings> = Mutex::new(Settings {
    file: None,
    quiet: false,
    started: false,
});

/// Takes `-o FILE` and `-q` from the command line, once, before any output.
pub fn configure(file: Option<PathBuf>, quiet: bool) {
    if let Ok(mut s) = SETTINGS.lock() {
        s.file = file;
        s.quiet = quiet;
    }
}

/// True when `-q` asked for nothing but results and errors.
pub fn quiet() -> bool {
    SETTINGS.lock().map(|s| s.quiet).unwrap_or(false)
}

/// A warning on stderr (not with `-q`), wrapped like the text.
pub fn warn(message: &str) {
    if !quiet() {
        eprint!("{}", wrap(&format!("warning: {message}\n"), WIDTH));
    }
}

/// Text output: lines beginning `warning:` go to stderr, the rest is
/// wrapped to [`WIDTH`] and written to stdout or the `-o` file.
pub fn text(out: &str) -> super::Result<()> {
    let mut body = String::new();
    let mut warnings = String::new();
    for line in out.split_inclusive('\n') {
        if line.trim_start().starts_with("warning:") {
            warnings.push_str(line.trim_start());
        } else {
            body.push_str(line);
        }
    }
    if !warnings.is_empty() && !quiet() {
        eprint!("{}", wrap(&warnings, WIDTH));
    }
    data(&wrap(&body, WIDTH))
}

/// A report in the format the user chose: text through [`text`], the
/// other formats through [`data`].
pub fn emit(format: crate::report::export::Format, out: &str) -> super::Result<()> {
    match format {
        crate::report::export::Format::Text => text(out),
        _ => data(out),
    }
}

/// Data output (JSON, CSV, Markdown, generated scripts): written as is.
pub fn data(out: &str) -> super::Result<()> {
    let file = SETTINGS.lock().ok().and_then(|mut s| {
        let f = s.file.clone()?;
        let append = s.started;
        s.started = true;
        Some((f, append))
    });
    match file {
        Some((path, append)) => std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .append(append)
            .truncate(!append)
            .open(&path)
            .and_then(|mut f| f.write_all(out.as_bytes()))
            .map_err(|e| super::Error::io("-o", &path, e)),
        None => {
            let mut stdout = std::io::stdout().lock();
            match stdout
                .write_all(out.as_bytes())
                .and_then(|_| stdout.flush())
            {
                // A closed pipe (`| head`) is the reader's choice, not a failure.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                r => r.map_err(|e| super::Error::Failed(format!("stdout: {e}"))),
            }
        }
    }
}
