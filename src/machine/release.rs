//! Kernel releases in version order, not string order: 6.1.0-54 before
//! 6.1.0-56 before 6.12, and a release candidate (6.12-rc3) before its
//! release (6.12). Numbers compare as numbers, other text as text.

use std::cmp::Ordering;

/// One piece of a release: a number, or a run of other characters.
#[derive(Debug, PartialEq, Eq)]
enum Piece<'a> {
    Num(u64),
    Text(&'a str),
}

fn pieces(release: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut rest = release;
    while let Some(c) = rest.chars().next() {
        let digit = c.is_ascii_digit();
        let end = rest
            .find(|ch: char| ch.is_ascii_digit() != digit)
            .unwrap_or(rest.len());
        let (head, tail) = rest.split_at(end);
        out.push(match head.parse() {
            Ok(n) if digit => Piece::Num(n),
            // A number too long for u64 compares by its digits.
            _ => Piece::Text(head),
        });
        rest = tail;
    }
    out
}

/// A pre-release marker: "-rc3" sorts before the release it leads to.
fn pre_release(text: &str) -> bool {
    let t = text.trim_start_matches(['-', '.', '_', '~']);
    t.eq_ignore_ascii_case("rc")
}

/// Compares two kernel releases by version.
pub fn compare(a: &str, b: &str) -> Ordering {
    let (pa, pb) = (pieces(a), pieces(b));
    for i in 0..pa.len().max(pb.len()) {
        let ord = match (pa.get(i), pb.get(i)) {
            (Some(Piece::Num(x)), Some(Piece::Num(y))) => x.cmp(y),
            (Some(Piece::Text(x)), Some(Piece::Text(y))) => {
                match (pre_release(x), pre_release(y)) {
                    (true, false) => Ordering::Less,
                    (false, true) => Ordering::Greater,
                    _ => x.cmp(y),
                }
            }
            // A number against text: the text that marks a pre-release
            // comes first, other text after (6.1.0 < 6.1.0-54).
            (Some(Piece::Num(_)), Some(Piece::Text(t))) => {
                if pre_release(t) {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
            (Some(Piece::Text(t)), Some(Piece::Num(_))) => {
                if pre_release(t) {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
            // One ends: a pre-release suffix sorts before the end, any
            // other longer release after it (6.12-rc1 < 6.12 < 6.12.1).
            (Some(Piece::Text(t)), None) if pre_release(t) => Ordering::Less,
            (None, Some(Piece::Text(t))) if pre_release(t) => Ordering::Greater,
            (Some(_), None) => Ordering::Greater,
            (None, Some(_)) => Ordering::Less,
            (None, None) => Ordering::Equal,
        };
        if ord != Ordering::Equal {
            return ord;
        }
    }
    a.cmp(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_sort_by_version() {
        let mut r = vec![
            "6.12.0",
            "6.1.0-56-amd64",
            "6.12",
            "6.1.0-54-amd64",
            "6.12-rc3",
            "6.1.0",
            "5.15.0-91-generic",
            "6.18.0-rc1+",
            "6.12.10",
            "6.12.9",
        ];
        r.sort_by(|a, b| compare(a, b));
        assert_eq!(
            r,
            [
                "5.15.0-91-generic",
                "6.1.0",
                "6.1.0-54-amd64",
                "6.1.0-56-amd64",
                "6.12-rc3",
                "6.12",
                "6.12.0",
                "6.12.9",
                "6.12.10",
                "6.18.0-rc1+",
            ]
        );
        assert_eq!(compare("6.1.0-54", "6.1.0-54"), Ordering::Equal);
        assert_eq!(compare("", "6.1"), Ordering::Less);
        assert_eq!(compare("99999999999999999999999", "1"), Ordering::Greater);
    }
}
