//! When a mailed result was sent: the `Date:` header of the mail a file
//! holds (RFC 2822, parsed by jiff), so an imported run is dated by when
//! it was measured and mailed, not when it was imported.

use jiff::fmt::rfc2822::DateTimeParser;

/// The mail's `Date:` header as an RFC 3339 UTC time ("2005-09-06T21:48:31.000Z"),
/// when `text` starts with mail headers (an mbox `From ` line may come
/// first) holding a valid one; `None` otherwise.
pub fn mail_date(text: &str) -> Option<String> {
    let mut lines = text.lines().peekable();
    if lines.peek().is_some_and(|l| l.starts_with("From ")) {
        lines.next();
    }
    let mut date: Option<String> = None;
    for line in lines {
        if line.trim().is_empty() {
            break;
        }
        if line.starts_with([' ', '\t']) {
            // A folded header continues the one before.
            if let Some(d) = date.as_mut().filter(|d| !d.is_empty()) {
                d.push(' ');
                d.push_str(line.trim());
            }
            continue;
        }
        let (name, value) = line.split_once(':')?;
        if name.contains(char::is_whitespace) {
            // Not a header: the text does not start with a mail's headers.
            return None;
        }
        if date.as_ref().is_some_and(|d| !d.is_empty()) {
            break;
        }
        date = Some(if name.eq_ignore_ascii_case("date") {
            value.trim().to_string()
        } else {
            String::new()
        });
    }
    let date = date.filter(|d| !d.is_empty())?;
    let t = DateTimeParser::new().parse_timestamp(&date).ok()?;
    Some(crate::timefmt::format_unix(
        t.as_second(),
        t.subsec_millisecond().max(0) as u32,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_date_header_gives_the_utc_time() {
        let mail = "From clameter@sgi.com Tue Sep  6 14:48:31 2005\n\
                    From: Christoph Lameter <clameter@sgi.com>\n\
                    Subject: Re: page fault scalability\n\
                    Date: Tue, 6 Sep 2005 14:48:31 -0700 (PDT)\n\
                    \n\
                    Gb Rep Thr CLine User System Wall flt/cpu/s fault/wsec\n";
        assert_eq!(mail_date(mail).as_deref(), Some("2005-09-06T21:48:31.000Z"));
        // Folded, and in another case.
        let folded = "date: Mon, 21 Nov\n 2005 09:00:00 +0000\nSubject: x\n\nbody\n";
        assert_eq!(
            mail_date(folded).as_deref(),
            Some("2005-11-21T09:00:00.000Z")
        );
    }

    #[test]
    fn no_headers_or_a_bad_date_give_none() {
        assert_eq!(mail_date("Gb Rep Thr\n 1 1 1\n"), None);
        assert_eq!(mail_date("Here is the run: fast\n"), None);
        assert_eq!(mail_date("Subject: x\nDate: yesterday\n\nbody"), None);
        // A Date line in the body is not the mail's.
        assert_eq!(
            mail_date("Subject: x\n\nDate: Tue, 6 Sep 2005 14:48:31 -0700\n"),
            None
        );
    }
}
