//! When a mailed result was sent: the date its header block gives, so an
//! imported run is dated by when it was measured and mailed, not when it
//! was imported. The header block is found as mail reaches us: a saved
//! mail's headers (an mbox `From ` line may come first), headers that an
//! archive flattened into one line with the body ("… Date: Tue, 6 Sep 2005
//! 11:31:44 -0700 (PDT) From: …"), or an archive page's title, author and
//! date lines (pipermail's "Mon Mar 23 23:24:00 AEDT 2015", hypermail's
//! RFC 2822 line, a `Date:` line under the title). RFC 2822 dates are
//! parsed by jiff; the archives' forms are read here.

use jiff::civil::DateTime;
use jiff::fmt::rfc2822::DateTimeParser;
use jiff::tz::Offset;

/// Lines an archive page's title, author and date take at most.
const ARCHIVE_HEAD: usize = 6;

/// Header names that make a block of `Name: value` lines a mail's
/// headers (a title like "git: kernel - ..." is not one).
const MAIL_HEADERS: &[&str] = &[
    "return-path",
    "received",
    "date",
    "from",
    "to",
    "cc",
    "subject",
    "message-id",
    "in-reply-to",
    "references",
    "mime-version",
    "content-type",
    "sender",
    "reply-to",
    "delivered-to",
    "x-mailing-list",
];

/// The mail's date as an RFC 3339 UTC time ("2005-09-06T21:48:31.000Z"),
/// when the head of `text` has one; `None` otherwise.
pub fn mail_date(text: &str) -> Option<String> {
    let t = match headers(text) {
        Some(block) => header_date(&block)?,
        None => archive_date(text)?,
    };
    crate::timefmt::format_unix(t.0, t.1)
}

/// `Name: value` with a name free of whitespace: the name and the value.
fn header(line: &str) -> Option<(&str, &str)> {
    let (name, value) = line.split_once(':')?;
    let ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    ok.then_some((name, value))
}

/// The mail's header lines (folded lines joined), when `text` starts with
/// them: up to the first blank line, after an mbox `From ` line, with at
/// least one header a mail has.
fn headers(text: &str) -> Option<Vec<String>> {
    let mut lines = text.lines().peekable();
    if lines.peek().is_some_and(|l| l.starts_with("From ")) {
        lines.next();
    }
    let mut block: Vec<String> = Vec::new();
    for line in lines {
        if line.trim().is_empty() {
            break;
        }
        if line.starts_with([' ', '\t']) {
            let last = block.last_mut()?;
            last.push(' ');
            last.push_str(line.trim());
            continue;
        }
        header(line)?;
        block.push(line.to_string());
    }
    let known = block.iter().any(|l| {
        header(l).is_some_and(|(n, _)| MAIL_HEADERS.iter().any(|m| n.eq_ignore_ascii_case(m)))
    });
    known.then_some(block)
}

/// The Date header of a header block: a line of its own, or one run into
/// the others on a flattened line (the first " Date: " there).
fn header_date(block: &[String]) -> Option<(i64, u32)> {
    for line in block {
        if let Some((name, value)) = header(line)
            && name.eq_ignore_ascii_case("date")
        {
            return parse_prefix(value);
        }
    }
    let line = block.iter().find(|l| l.contains(" Date: "))?;
    let (_, after) = line.split_once(" Date: ")?;
    parse_prefix(after)
}

/// An archive page's date: among its first lines, a `Date:` line or a
/// line that is a date and nothing else.
fn archive_date(text: &str) -> Option<(i64, u32)> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(ARCHIVE_HEAD)
        .find_map(|l| match header(l) {
            Some((name, value)) if name.eq_ignore_ascii_case("date") => parse(value.trim()),
            _ => parse(l),
        })
}

/// A date at the start of `value`, followed by anything (the rest of a
/// flattened header block): the longest run of its first words that
/// parses.
fn parse_prefix(value: &str) -> Option<(i64, u32)> {
    let words: Vec<&str> = value.split_whitespace().take(8).collect();
    (2..=words.len())
        .rev()
        .find_map(|k| parse(&words[..k].join(" ")))
}

/// One date in any of the forms mail and its archives give: RFC 2822,
/// ctime with a zone name (pipermail), ISO 8601 without a zone (taken as
/// UTC). Seconds since the epoch and milliseconds.
fn parse(s: &str) -> Option<(i64, u32)> {
    if let Ok(t) = DateTimeParser::new().parse_timestamp(s) {
        return Some((t.as_second(), t.subsec_millisecond().max(0) as u32));
    }
    ctime_with_zone(s).or_else(|| iso_utc(s))
}

/// "Mon Mar 23 23:24:00 AEDT 2015": weekday, month, day, time, zone
/// name, year.
fn ctime_with_zone(s: &str) -> Option<(i64, u32)> {
    let w: Vec<&str> = s.split_whitespace().collect();
    let [_, mon, day, time, zone, year] = w[..] else {
        return None;
    };
    let month = MONTHS.iter().position(|m| m.eq_ignore_ascii_case(mon))? as i8 + 1;
    let offset = ZONES.iter().find(|(z, _)| z.eq_ignore_ascii_case(zone))?.1;
    let dt = civil(year, month, day, time)?;
    let t = Offset::from_seconds(offset * 60)
        .ok()?
        .to_timestamp(dt)
        .ok()?;
    Some((t.as_second(), 0))
}

/// "2005-04-05 05:28:27", taken as UTC.
fn iso_utc(s: &str) -> Option<(i64, u32)> {
    let (date, time) = s.split_once(' ')?;
    let mut d = date.split('-');
    let (year, month, day) = (d.next()?, d.next()?, d.next()?);
    if d.next().is_some() || year.len() != 4 {
        return None;
    }
    let dt = civil(year, month.parse().ok()?, day, time)?;
    let t = Offset::UTC.to_timestamp(dt).ok()?;
    Some((t.as_second(), 0))
}

/// A civil time from its parts ("2015", 3, "23", "23:24:00").
fn civil(year: &str, month: i8, day: &str, time: &str) -> Option<DateTime> {
    let mut hms = time.split(':').map(str::parse::<i8>);
    let (h, m) = (hms.next()?.ok()?, hms.next()?.ok()?);
    let sec = hms.next().transpose().ok()?.unwrap_or(0);
    DateTime::new(year.parse().ok()?, month, day.parse().ok()?, h, m, sec, 0).ok()
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Zone names archives print, with their offsets in minutes (the names
/// that mean one offset; an ambiguous one, like IST, is not read).
const ZONES: &[(&str, i32)] = &[
    ("UTC", 0),
    ("GMT", 0),
    ("UT", 0),
    ("WET", 0),
    ("BST", 60),
    ("CET", 60),
    ("CEST", 120),
    ("EET", 120),
    ("EEST", 180),
    ("MSK", 180),
    ("JST", 540),
    ("KST", 540),
    ("AEST", 600),
    ("AEDT", 660),
    ("ACST", 570),
    ("ACDT", 630),
    ("AWST", 480),
    ("NZST", 720),
    ("NZDT", 780),
    ("EST", -300),
    ("EDT", -240),
    ("CST", -360),
    ("CDT", -300),
    ("MST", -420),
    ("MDT", -360),
    ("PST", -480),
    ("PDT", -420),
];

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
    fn headers_flattened_into_one_line_are_read_where_the_date_is() {
        let flat = "Return-Path: Received: (majordomo@vger.kernel.org) by vger.kernel.org \
                    id S1750792AbVIFSiX (ORCPT ); Tue, 6 Sep 2005 14:38:23 -0400 Date: Tue, \
                    6 Sep 2005 11:31:44 -0700 (PDT) From: Christoph Lameter To: \
                    torvalds@osdl.org Subject: Hugh's alternate page fault scalability \
                    approach on 512p Altix Message-ID: This is going to be a bit long";
        assert_eq!(mail_date(flat).as_deref(), Some("2005-09-06T18:31:44.000Z"));
        // Without the zone comment, and the date last.
        let flat = "Subject: x From: y Date: Tue, 6 Sep 2005 11:31:44 -0700";
        assert_eq!(mail_date(flat).as_deref(), Some("2005-09-06T18:31:44.000Z"));
    }

    #[test]
    fn archive_pages_are_dated_by_their_date_line() {
        // pipermail: title, author, ctime with a zone name.
        let pipermail = "[PATCH 0/3] Reduce system overhead\n\nMel Gorman mgorman at suse.de\n\
                         Mon Mar 23 23:24:00 AEDT 2015\n\n\nThese are three patches";
        assert_eq!(
            mail_date(pipermail).as_deref(),
            Some("2015-03-23T12:24:00.000Z")
        );
        // hypermail: an RFC 2822 line under the author.
        let hypermail = "Re: [PATCH] Rmap speedup\n\nAndrew Morton (akpm@zip.com.au)\n\
                         Sat, 03 Aug 2002 14:40:41 -0700\n\n\nDaniel Phillips wrote:";
        assert_eq!(
            mail_date(hypermail).as_deref(),
            Some("2002-08-03T21:40:41.000Z")
        );
        // A From/Date pair under the title, the date without a zone.
        let iso = "per_cpu_pagesets degrades MPI performance\n\nFrom: Jack Steiner \
                   <steiner_at_sgi.com>\nDate: 2005-04-05 05:28:27\nPerformance of";
        assert_eq!(mail_date(iso).as_deref(), Some("2005-04-05T05:28:27.000Z"));
        // A title with a colon is no header block; the commit's Date
        // in the body comes after the mail's.
        let git = "git: kernel - Another huge HUGE VM performance improvement\n\n\
                   Matthew Dillon dillon at crater.dragonflybsd.org\n\
                   Fri Oct 28 09:49:04 PDT 2011\n\n\ncommit 027193eb\n\
                   Date:   Fri Oct 28 09:32:51 2011 -0700\n";
        assert_eq!(mail_date(git).as_deref(), Some("2011-10-28T16:49:04.000Z"));
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
        // An ambiguous zone name is not guessed.
        assert_eq!(mail_date("Title\n\nMon Mar 23 23:24:00 IST 2015\n"), None);
    }
}
