//! A mail's quoted-printable bodies decoded before the reader sees the
//! text: a body whose header block says `Content-Transfer-Encoding:
//! quoted-printable` (the message's own, or a MIME part's) has its soft
//! line breaks (`=` at a line's end) joined and its `=XX` octets (`=3D`,
//! `=C2=B1`) made bytes again, by the `quoted_printable` crate in its
//! lenient mode. A body ends at a MIME boundary the text declares or at
//! the next mbox `From ` line; every other byte is passed on as it came.
//! Pure, and no panic on any input.

use std::borrow::Cow;

/// The bytes with every quoted-printable body decoded.
pub fn decoded(bytes: &[u8]) -> Cow<'_, [u8]> {
    if find_ci(bytes, b"quoted-printable").is_none() {
        return Cow::Borrowed(bytes);
    }
    let lines: Vec<&[u8]> = bytes.split_inclusive(|b| *b == b'\n').collect();
    let boundaries = boundaries(&lines);
    let mut out = Vec::with_capacity(bytes.len());
    let mut body: Vec<u8> = Vec::new();
    let mut in_headers = true;
    // The encoding the header block read so far declares, and the body's.
    let (mut declared, mut qp) = (false, false);
    let mut after_blank = true;
    for line in lines {
        let bare = trim_eol(line);
        let ends_body =
            is_boundary(bare, &boundaries) || (after_blank && bare.starts_with(b"From "));
        if ends_body {
            flush(&mut out, &mut body, qp);
            out.extend_from_slice(line);
            (in_headers, declared, qp) = (true, false, false);
            after_blank = false;
            continue;
        }
        after_blank = bare.iter().all(u8::is_ascii_whitespace);
        if in_headers {
            if after_blank {
                (in_headers, qp) = (false, declared);
            } else if is_header(bare) {
                declared |= says_qp(bare);
            } else {
                // Text with no header block (a body pasted alone).
                (in_headers, qp) = (false, false);
                body.extend_from_slice(line);
                continue;
            }
            out.extend_from_slice(line);
            continue;
        }
        body.extend_from_slice(line);
    }
    flush(&mut out, &mut body, qp);
    Cow::Owned(out)
}

/// Appends `body` to `out`, decoded when it is quoted-printable.
fn flush(out: &mut Vec<u8>, body: &mut Vec<u8>, qp: bool) {
    if qp {
        let mode = quoted_printable::ParseMode::Robust;
        match quoted_printable::decode(&body[..], mode) {
            Ok(d) => out.extend_from_slice(&d),
            Err(_) => out.extend_from_slice(body),
        }
    } else {
        out.extend_from_slice(body);
    }
    body.clear();
}

fn trim_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// `Name: value`, or a folded continuation (leading white space).
fn is_header(line: &[u8]) -> bool {
    if line.first().is_some_and(|b| *b == b' ' || *b == b'\t') {
        return true;
    }
    if line.starts_with(b"From ") {
        return true;
    }
    let name_end = line.iter().position(|b| *b == b':');
    name_end.is_some_and(|n| {
        n > 0
            && line[..n]
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
    })
}

/// `Content-Transfer-Encoding: quoted-printable`, any case.
fn says_qp(line: &[u8]) -> bool {
    let Some((name, value)) = split_header(line) else {
        return false;
    };
    name.eq_ignore_ascii_case(b"content-transfer-encoding")
        && value.trim_ascii().eq_ignore_ascii_case(b"quoted-printable")
}

fn split_header(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let n = line.iter().position(|b| *b == b':')?;
    Some((line[..n].trim_ascii(), &line[n + 1..]))
}

/// The `boundary=` parameters the text declares, quoted or not.
fn boundaries(lines: &[&[u8]]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for line in lines {
        let Some(at) = find_ci(line, b"boundary=") else {
            continue;
        };
        let rest = trim_eol(&line[at + b"boundary=".len()..]);
        let value: &[u8] = match rest.strip_prefix(b"\"") {
            Some(q) => &q[..q.iter().position(|b| *b == b'"').unwrap_or(q.len())],
            None => {
                let end = rest
                    .iter()
                    .position(|b| *b == b';' || b.is_ascii_whitespace())
                    .unwrap_or(rest.len());
                &rest[..end]
            }
        };
        if !value.is_empty() {
            out.push(value.to_vec());
        }
    }
    out
}

/// `--BOUNDARY` or `--BOUNDARY--`.
fn is_boundary(line: &[u8], boundaries: &[Vec<u8>]) -> bool {
    let Some(rest) = line.strip_prefix(b"--") else {
        return false;
    };
    let rest = rest.trim_ascii_end();
    let rest = rest.strip_suffix(b"--").unwrap_or(rest);
    boundaries.iter().any(|b| b.as_slice() == rest)
}

/// Where `needle` first occurs in `hay`, ignoring ASCII case.
fn find_ci(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(bytes: &[u8]) -> String {
        String::from_utf8_lossy(&decoded(bytes)).into_owned()
    }

    #[test]
    fn a_quoted_printable_body_is_decoded_and_its_headers_kept() {
        let mail = b"From: lkp@intel.com\r\nContent-Type: text/plain; charset=utf-8\r\n\
Content-Transfer-Encoding: quoted-printable\r\n\r\n\
kernel test robot noticed a -21.4% regression of vm-scalability.throug=\r\n\
hput on:\r\n    500000 =C2=B1  2%     -40.0%     300000  a=3Db\r\n";
        let t = text(mail);
        assert!(t.starts_with("From: lkp@intel.com\r\n"), "{t}");
        assert!(t.contains("Content-Transfer-Encoding: quoted-printable\r\n\r\n"));
        assert!(
            t.contains("regression of vm-scalability.throughput on:\r\n"),
            "{t}"
        );
        assert!(t.contains("500000 \u{b1}  2%"), "{t}");
        assert!(t.contains("a=b"), "{t}");
    }

    #[test]
    fn text_that_declares_no_quoted_printable_is_left_as_it_came() {
        for raw in [
            &b"Subject: x\n\na=3Db and a soft =\nbreak\n"[..],
            b"a=3Db quoted-printable but no header saying so=\n",
            b"",
            b"\xff\xfe=\n",
        ] {
            assert_eq!(&decoded(raw)[..], raw);
        }
    }

    #[test]
    fn only_the_quoted_printable_part_of_a_multipart_mail_is_decoded() {
        let mail = b"Content-Type: multipart/mixed; boundary=\"XyZ\"\n\n\
--XyZ\nContent-Type: text/plain\n\nplain a=3Db\n\
--XyZ\nContent-Transfer-Encoding: QUOTED-PRINTABLE\n\nqp a=3Db so=\nft\n\
--XyZ--\nepilogue a=3Db\n";
        let t = text(mail);
        assert!(t.contains("plain a=3Db\n"), "{t}");
        assert!(t.contains("qp a=b soft"), "{t}");
        assert!(t.contains("--XyZ--\nepilogue a=3Db\n"), "{t}");
    }

    #[test]
    fn each_message_of_an_mbox_has_its_own_encoding() {
        let mbox = b"From lkp Mon Jan  1 00:00:00 2024\n\
Content-Transfer-Encoding: quoted-printable\n\nfirst a=3Db\n\n\
From lkp Mon Jan  1 00:00:01 2024\nSubject: plain\n\nsecond a=3Db\n";
        let t = text(mbox);
        assert!(t.contains("first a=b"), "{t}");
        assert!(t.contains("second a=3Db"), "{t}");
    }
}
