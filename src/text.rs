//! Plain text every text output shares: [`clip`] cuts a string to its
//! column with one truncation mark; [`wrap`], [`fill`] and [`fold`] break
//! prose and lists into lines of a width (on the textwrap crate).

use textwrap::core::Fragment;
use textwrap::wrap_algorithms::wrap_first_fit;

/// The character that ends a clipped string.
pub const MARK: char = '~';

/// `s` cut to `room` characters, the last one [`MARK`], when it is longer.
pub fn clip(s: &str, room: usize) -> String {
    if s.chars().count() <= room {
        return s.to_string();
    }
    let mut t: String = s.chars().take(room.saturating_sub(1)).collect();
    if room > 0 {
        t.push(MARK);
    }
    t
}

fn options<'a>(width: usize, first: &'a str, rest: &'a str) -> textwrap::Options<'a> {
    textwrap::Options::new(width)
        .initial_indent(first)
        .subsequent_indent(rest)
        .break_words(false)
}

/// Prose folded at spaces into lines of `width` columns, the first line
/// starting with `first`, the others with `rest`; a word longer than a line
/// stays whole. Ends in a newline.
pub fn fill(prose: &str, width: usize, first: &str, rest: &str) -> String {
    textwrap::fill(prose, options(width, first, rest)) + "\n"
}

/// Every line of `text` longer than `width` folded at spaces, keeping the
/// spacing inside each piece; continuation lines are indented two spaces
/// past the line's own indent. Shorter lines are left as they are.
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
        let lines = textwrap::wrap(content, options(width, "", &hang));
        out.push_str(&lines.join("\n"));
        out.push_str(newline);
    }
    out
}

/// One item of a [`fold`]ed list: its text and the separator after it.
#[derive(Debug)]
struct Item<'a> {
    text: &'a str,
    /// The separator's visible part ("," of ", "), kept at a line's end.
    mark: &'a str,
    /// The separator's trailing spaces, dropped at a line's end.
    gap: usize,
}

impl Fragment for Item<'_> {
    fn width(&self) -> f64 {
        (self.text.chars().count() + self.mark.chars().count()) as f64
    }
    fn whitespace_width(&self) -> f64 {
        self.gap as f64
    }
    fn penalty_width(&self) -> f64 {
        0.0
    }
}

/// `items` joined by `sep` into lines of at most `width` columns, the first
/// line starting with `first`, the others with `rest`; a line breaks only
/// after a separator, which keeps its visible part ("a,b," / "c"). An item
/// longer than a line stays whole.
pub fn fold(items: &[&str], sep: &str, width: usize, first: &str, rest: &str) -> Vec<String> {
    let mark = sep.trim_end();
    let last = items.len().saturating_sub(1);
    let pieces: Vec<Item> = items
        .iter()
        .enumerate()
        .map(|(i, text)| Item {
            text,
            mark: if i < last { mark } else { "" },
            gap: if i < last { sep.len() - mark.len() } else { 0 },
        })
        .collect();
    let room = |prefix: &str| width.saturating_sub(prefix.chars().count()) as f64;
    let lines = wrap_first_fit(&pieces, &[room(first), room(rest)]);
    lines
        .iter()
        .enumerate()
        .map(|(n, line)| {
            let mut s = String::from(if n == 0 { first } else { rest });
            for (i, p) in line.iter().enumerate() {
                s.push_str(p.text);
                s.push_str(p.mark);
                if i + 1 < line.len() {
                    s.push_str(&" ".repeat(p.gap));
                }
            }
            s.trim_end().to_string()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipping_keeps_the_room_and_marks_the_cut() {
        assert_eq!(clip("0-3,8-11", 20), "0-3,8-11");
        assert_eq!(clip("0,2,4,6,8,10,12", 8), "0,2,4,6~");
        assert_eq!(clip("±µ×±µ×", 4), "±µ×~");
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("abcd", 1), "~");
        assert_eq!(clip("abcd", 0), "");
    }

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
    fn an_indented_line_hangs_past_its_indent() {
        let out = wrap(&format!("    {}\n", ["ab"; 20].join(" ")), 20);
        assert!(out.starts_with("    ab ab"), "{out}");
        assert!(
            out.lines().skip(1).all(|l| l.starts_with("      ab")),
            "{out}"
        );
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

    #[test]
    fn fill_indents_and_keeps_every_word() {
        let long = "word ".repeat(40);
        let w = fill(&long, 30, "  ", "    ");
        assert!(w.lines().all(|l| l.len() <= 30), "{w}");
        assert_eq!(w.split_whitespace().count(), 40);
        assert!(w.starts_with("  word"));
        assert!(w.lines().skip(1).all(|l| l.starts_with("    word")));
        assert!(w.ends_with("word\n"));
    }

    #[test]
    fn fold_breaks_after_separators_within_the_width() {
        let cpus: Vec<String> = (0..60).map(|i| (i * 2).to_string()).collect();
        let items: Vec<&str> = cpus.iter().map(String::as_str).collect();
        let lines = fold(&items, ",", 30, "  x  ", "     ");
        assert!(lines.len() > 1);
        assert!(lines.iter().all(|l| l.len() <= 30), "{lines:?}");
        assert!(lines[..lines.len() - 1].iter().all(|l| l.ends_with(',')));
        let joined: String = lines.concat().replace([' ', 'x'], "");
        assert_eq!(joined, cpus.join(","));

        let words = ["alpha 1/2", "beta 3/4", "gamma 5/6", "delta 7/8"];
        let lines = fold(&words, "; ", 20, "", "");
        assert_eq!(lines, ["alpha 1/2; beta 3/4;", "gamma 5/6; delta 7/8"]);
        let lines = fold(&words, " ", 80, "Command line  ", "");
        assert_eq!(
            lines,
            ["Command line  alpha 1/2 beta 3/4 gamma 5/6 delta 7/8"]
        );
        assert!(fold(&[], ",", 10, "", "").iter().all(|l| l.is_empty()));
    }
}
