//! Where a command's output goes: stdout or `-o FILE`, warnings split off to
//! stderr (silenced by `-q`), and text wrapped to 80 columns.
//!
//! Every command prints through [`text`] or [`data`], so `-o`, `-q` and the
//! 80-column rule hold for all of them without each command knowing.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

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

/// Wraps every line longer than `width` at spaces, keeping the spacing
/// inside each piece; continuation lines are indented two spaces past the
/// line's own indent. Tables are laid out to fit by their renderers; this
/// catches prose (headers, notes).
pub fn wrap(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (content, newline) = match line.strip_suffix('\n') {
            Some(c) => (c, "\n"),
            None => (line, ""),
        };
        if content.chars().count() <= width {
            out.push_str(line);
            continue;
        }
        let indent = content.len() - content.trim_start().len();
        let hang = " ".repeat((indent + 2).min(width / 2));
        let mut rest = content;
        let mut prefix = "";
        loop {
            let room = width - prefix.len();
            if rest.chars().count() <= room {
                out.push_str(prefix);
                out.push_str(rest);
                break;
            }
            // The last space that leaves a piece within the room (never
            // the leading indent); a word longer than the room stays whole.
            let end = rest
                .char_indices()
                .nth(room + 1)
                .map(|(i, _)| i)
                .unwrap_or(rest.len());
            let start = rest.len() - rest.trim_start().len();
            let cut = rest[..end]
                .rfind(' ')
                .filter(|&i| i > start)
                .or_else(|| rest[start..].find(' ').map(|i| i + start));
            let Some(cut) = cut else {
                out.push_str(prefix);
                out.push_str(rest);
                break;
            };
            out.push_str(prefix);
            out.push_str(rest[..cut].trim_end());
            out.push('\n');
            rest = rest[cut..].trim_start();
            prefix = &hang;
        }
        out.push_str(newline);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_prose_wraps_with_a_hanging_indent() {
        let line = format!("{}\n", ["word"; 40].join(" "));
        let out = wrap(&line, 30);
        assert!(out.lines().all(|l| l.chars().count() <= 30), "{out}");
        assert!(
            out.lines().skip(1).all(|l| l.starts_with("  word")),
            "{out}"
        );
        assert_eq!(out.split_whitespace().count(), 40);
        assert!(out.ends_with('\n'));
    }

    #[test]
    fn spacing_inside_a_piece_is_kept() {
        let out = wrap("a  b    c d e\n", 9);
        assert_eq!(out, "a  b    c\n  d e\n");
    }

    #[test]
    fn a_word_longer_than_the_line_stays_whole() {
        let long = "x".repeat(20);
        let out = wrap(&format!("ab {long} cd\n"), 10);
        assert_eq!(out, format!("ab\n  {long}\n  cd\n"));
    }

    #[test]
    fn multibyte_characters_are_never_split() {
        let line = format!("{}\n", ["±µ×"; 30].join(" "));
        let out = wrap(&line, 10);
        assert!(out.lines().all(|l| l.chars().count() <= 10), "{out}");
        assert_eq!(out.matches('µ').count(), 30);
    }

    #[test]
    fn short_lines_are_untouched() {
        let text = "  a b  c\n\nd\n";
        assert_eq!(wrap(text, 80), text);
    }
}
