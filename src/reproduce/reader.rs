//! The reader: a kernel test robot mail as text (headers and body, one
//! message of an mbox, or a reply quoting it with `> ` at any depth; CRLF,
//! tabs and bytes that are not UTF-8 are read leniently) into a typed
//! [`Report`]. Pure: no I/O beyond the text handed to it, and no panic on
//! any input. lkp's job.yaml is read by `job`.

use super::report::{Change, Commit, Delta, Kind, Machine, ReadError, Report, Row, Source, Test};

/// Reads a report from raw bytes (a file or stdin): quoted-printable
/// bodies decoded (`mime`), then lossy UTF-8, CRLF.
pub fn read_bytes(bytes: &[u8]) -> Result<Report, ReadError> {
    read(&String::from_utf8_lossy(&super::mime::decoded(bytes)))
}

/// Reads a report: the mail's wording, or lkp's job.yaml.
pub fn read(text: &str) -> Result<Report, ReadError> {
    let lines: Vec<String> = text
        .split('\n')
        .map(|l| unquote(l.strip_suffix('\r').unwrap_or(l)).replace('\t', "    "))
        .collect();
    if super::job::looks_like_job(&lines) {
        return super::job::read(&lines);
    }
    let mut r = Reader::default();
    for (i, line) in lines.iter().enumerate() {
        r.line(line, lines.get(i + 1).map(String::as_str));
    }
    r.finish()
}

/// A line with its mail quoting (`> `, `>> `, `> > `) taken off.
pub(super) fn unquote(line: &str) -> &str {
    let mut rest = line;
    loop {
        let t = rest.trim_start_matches(' ');
        match t.strip_prefix('>') {
            Some(after) => rest = after.strip_prefix(' ').unwrap_or(after),
            None => return rest,
        }
    }
}

/// What the reader is inside of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    #[default]
    Prose,
    /// After `parameters:`: `key: value` lines, indented.
    Params,
    /// A "In addition to that" box's `test parameters` cells.
    BoxParams,
    /// After `=====`: the axis keys line comes next.
    AxisKeys,
    /// After a `commit:` line alone: base, then head.
    Commits,
    /// The rows of a `%stddev %change %stddev` table.
    Rows,
    /// The rows of a `fail:runs %reproduction fail:runs` table (skipped).
    FailRows,
}

#[derive(Debug, Default)]
struct Reader {
    state: State,
    headline: Option<Change>,
    head_commit: Option<Commit>,
    base: Option<Commit>,
    head: Option<Commit>,
    /// The main test, from the text before "Details are as below".
    main: Test,
    /// The "In addition to that" boxes, in order.
    boxes: Vec<Test>,
    /// The tables after "Details are as below", in order.
    sections: Vec<Test>,
    /// The machine line (`lkp-icl-2sp2: 128 threads ...`) of the next section.
    next_machine: Option<Machine>,
    commits_seen: usize,
    saw_table: bool,
}

impl Reader {
    fn line(&mut self, line: &str, next: Option<&str>) {
        let t = line.trim();
        match self.state {
            State::Params => {
                if let Some(kv) = param(line) {
                    self.main.params.push(kv);
                    return;
                }
                if t.is_empty() && self.main.params.is_empty() {
                    return;
                }
                self.state = State::Prose;
            }
            State::BoxParams => {
                if let Some(cells) = box_cells(t)
                    && cells.0.is_empty()
                {
                    if let (Some(b), Some(kv)) = (self.boxes.last_mut(), cells.1.split_once('=')) {
                        b.params.push((kv.0.trim().into(), kv.1.trim().into()));
                    }
                    return;
                }
                self.state = State::Prose;
            }
            State::AxisKeys => {
                if t.is_empty() {
                    return;
                }
                self.state = State::Prose;
                if let (Some(keys), Some(values)) = (t.strip_suffix(':'), next) {
                    let mut s = Test {
                        machine: self.next_machine.take(),
                        ..Test::default()
                    };
                    s.axes = keys
                        .split('/')
                        .zip(values.trim().split('/'))
                        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                        .collect();
                    self.sections.push(s);
                    return;
                }
            }
            State::Commits => {
                if t.is_empty() {
                    return;
                }
                if let Some(c) = commit_line(t) {
                    match self.commits_seen {
                        0 => self.base = self.base.take().or(Some(c)),
                        1 => self.head = self.head.take().or(Some(c)),
                        _ => {}
                    }
                    self.commits_seen += 1;
                    if self.commits_seen < 2 {
                        return;
                    }
                }
                self.state = State::Prose;
                return;
            }
            State::Rows => {
                if t.starts_with('\\') || t.starts_with("%stddev") {
                    return;
                }
                if let Some(row) = row(t) {
                    if let Some(s) = self.sections.last_mut() {
                        s.rows.push(row);
                        s.cut = next.is_none_or(|n| !n.trim().is_empty() && row_of(n).is_none());
                    }
                    return;
                }
                self.state = State::Prose;
            }
            State::FailRows => {
                if t.is_empty() || !(t.starts_with('|') || t.contains(':')) {
                    self.state = State::Prose;
                }
                return;
            }
            State::Prose => {}
        }
        self.prose(line, t, next);
    }

    fn prose(&mut self, line: &str, t: &str, next: Option<&str>) {
        if let Some(c) = headline(t) {
            self.headline.get_or_insert(c);
        } else if let Some(rest) = t.strip_prefix("commit:") {
            if rest.trim().is_empty() {
                self.state = State::Commits;
                self.commits_seen = 0;
            } else if self.head_commit.is_none() {
                self.head_commit = commit_line(rest.trim());
            }
        } else if let Some(v) = t
            .strip_prefix("in testcase:")
            .or_else(|| t.strip_prefix("testcase:"))
        {
            self.main.testcase.get_or_insert(v.trim().to_string());
        } else if let Some(v) = t
            .strip_prefix("on test machine:")
            .or_else(|| t.strip_prefix("test machine:"))
        {
            self.main.machine.get_or_insert(machine(v));
        } else if t == "parameters:" || t == "with following parameters:" {
            self.state = State::Params;
        } else if t.len() >= 20 && t.bytes().all(|b| b == b'=') {
            self.state = State::AxisKeys;
        } else if t.starts_with("%stddev") && t.contains("%change") {
            self.state = State::Rows;
            self.saw_table = true;
            if self.sections.is_empty() {
                self.sections.push(Test::default());
            }
        } else if t.starts_with("fail:runs") {
            self.state = State::FailRows;
        } else if let Some((label, value)) = box_cells(t) {
            self.box_cell(&label, &value);
        } else if let Some(m) = section_machine(line, next) {
            self.next_machine = Some(m);
        }
    }

    fn box_cell(&mut self, label: &str, value: &str) {
        match label {
            "testcase: change" => {
                let (testcase, change) = match value.split_once(':') {
                    Some((tc, rest)) => (Some(tc.trim().to_string()), box_change(rest)),
                    None => (None, None),
                };
                self.boxes.push(Test {
                    testcase,
                    change,
                    ..Test::default()
                });
            }
            "test machine" => {
                if let Some(b) = self.boxes.last_mut() {
                    b.machine = Some(machine(value));
                }
            }
            "test parameters" => {
                if let (Some(b), Some((k, v))) = (self.boxes.last_mut(), value.split_once('=')) {
                    b.params.push((k.trim().into(), v.trim().into()));
                }
                self.state = State::BoxParams;
            }
            _ => {}
        }
    }

    fn finish(self) -> Result<Report, ReadError> {
        let Reader {
            headline,
            head_commit,
            mut base,
            mut head,
            main,
            boxes,
            mut sections,
            saw_table,
            ..
        } = self;
        if headline.is_none() && main.testcase.is_none() && !saw_table && sections.is_empty() {
            return Err(ReadError::NotAReport);
        }
        // The section tables belong to the main test, then to each box.
        let mut sections = sections.drain(..);
        let mut tests: Vec<Test> = std::iter::once(main)
            .chain(boxes)
            .map(|t| match sections.next() {
                Some(s) => t.with_table(s),
                None => t,
            })
            .collect();
        tests.extend(sections);
        if tests[0].testcase().is_none() {
            let found = match (&headline, saw_table) {
                (Some(h), _) => format!("the headline ({})", h.metric),
                (None, true) => "a table".to_string(),
                (None, false) => "a commit".to_string(),
            };
            return Err(ReadError::NoTestcase { found });
        }
        // The head commit's full id and subject from the `commit:` line.
        if let Some(hc) = head_commit {
            match &mut head {
                Some(h) if hc.id.starts_with(&h.id) || h.id.starts_with(&hc.id) => {
                    if hc.id.len() > h.id.len() {
                        h.id = hc.id;
                    }
                    h.subject = h.subject.take().or(hc.subject);
                }
                Some(_) => {}
                None => head = Some(hc),
            }
        }
        let headline = headline.map(|h| signed(h, &tests[0].rows));
        let tests = tests
            .into_iter()
            .map(|mut t| {
                t.change = t.change.map(|c| signed(c, &t.rows));
                t
            })
            .collect();
        if base
            .as_ref()
            .zip(head.as_ref())
            .is_some_and(|(b, h)| b == h)
        {
            base = None;
        }
        Ok(Report {
            source: Source::Mail,
            headline,
            base,
            head,
            tests,
        })
    }
}

/// A headline's percent signed as its metric's row has it; the kind and
/// the metric's usual direction cannot give the sign (a regression of a
/// time is a rise).
fn signed(mut c: Change, rows: &[Row]) -> Change {
    if let Some(Delta::Percent(p)) = rows
        .iter()
        .find(|r| r.name == c.metric)
        .and_then(|r| r.change)
        && p.abs() > 0.0
    {
        c.percent = c.percent.abs().copysign(p);
    }
    c
}

/// "kernel test robot noticed a -21.4% regression of METRIC on:" and
/// "FYI, we noticed a -15.8% regression of METRIC due to commit:".
fn headline(t: &str) -> Option<Change> {
    let rest = &t[t.find("noticed a")? + "noticed a".len()..];
    let mut w = rest.split_whitespace();
    let percent = percent(w.next()?)?;
    let kind = match w.next()? {
        "regression" => Kind::Regression,
        "improvement" => Kind::Improvement,
        _ => return None,
    };
    (w.next()? == "of").then_some(())?;
    let metric = w.next()?.to_string();
    Some(Change {
        metric,
        percent,
        kind,
    })
}

/// A box's "hackbench.throughput  7.7% regression".
fn box_change(text: &str) -> Option<Change> {
    let w: Vec<&str> = text.split_whitespace().collect();
    let [metric, pct, kind] = w.as_slice() else {
        return None;
    };
    let kind = match *kind {
        "regression" => Kind::Regression,
        "improvement" => Kind::Improvement,
        _ => return None,
    };
    Some(Change {
        metric: metric.to_string(),
        percent: percent(pct)?,
        kind,
    })
}

fn percent(w: &str) -> Option<f64> {
    w.strip_suffix('%')?
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
}

/// `key: value` on an indented line (the parameters' tab).
fn param(line: &str) -> Option<(String, String)> {
    if !line.starts_with(' ') {
        return None;
    }
    let (k, v) = line.trim().split_once(':')?;
    let k = k.trim();
    let ok = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    ok.then(|| (k.to_string(), v.trim().to_string()))
}

/// A box line `| label | value |` as its two cells.
fn box_cells(t: &str) -> Option<(String, String)> {
    let inner = t.strip_prefix('|')?.strip_suffix('|')?;
    let (label, value) = inner.split_once('|')?;
    Some((label.trim().to_string(), value.trim().to_string()))
}

/// `d000e073ca ("convert do_select()")`, or an id alone.
fn commit_line(t: &str) -> Option<Commit> {
    let (id, rest) = t.split_once(char::is_whitespace).unwrap_or((t, ""));
    let hex = id.len() >= 7 && id.len() <= 40 && id.bytes().all(|b| b.is_ascii_hexdigit());
    if !hex {
        return None;
    }
    let rest = rest.trim();
    let subject = rest
        .strip_prefix('(')
        .and_then(|s| s.rfind(')').map(|end| &s[..end]))
        .map(|s| s.trim().trim_matches('"').to_string())
        .filter(|s| !s.is_empty());
    Some(Commit {
        id: id.to_ascii_lowercase(),
        subject,
    })
}

/// "224 threads 2 sockets Intel(R) Xeon(R) ... (Sapphire Rapids) with 256G
/// memory"; the older "144 threads Intel(R) ... with 512G memory".
pub(super) fn machine(text: &str) -> Machine {
    let t = text.trim();
    let mut m = Machine::default();
    let w: Vec<&str> = t.split_whitespace().collect();
    let mut i = 0;
    if let (Some(n), Some(&"threads")) = (w.first().and_then(|n| n.parse().ok()), w.get(1)) {
        m.threads = Some(n);
        i = 2;
    }
    if let (Some(n), Some(&"sockets")) = (w.get(i).and_then(|n| n.parse().ok()), w.get(i + 1)) {
        m.sockets = Some(n);
        i += 2;
    }
    let rest = w.get(i..).unwrap_or_default().join(" ");
    let (cpu, memory) = match rest.rsplit_once(" with ") {
        Some((cpu, mem)) => (cpu.to_string(), mem.strip_suffix(" memory")),
        None => match rest.strip_prefix("with ") {
            Some(mem) => (String::new(), mem.strip_suffix(" memory")),
            None => (rest.clone(), None),
        },
    };
    m.cpu = Some(cpu.trim().to_string()).filter(|c| !c.is_empty());
    m.memory = memory.and_then(|s| crate::parse::size(s.trim()).ok());
    m
}

/// The machine line of a section after "Details are as below": "lkp-icl-
/// 2sp2: 128 threads 2 sockets ... with 256G memory", followed by `=====`.
fn section_machine(line: &str, next: Option<&str>) -> Option<Machine> {
    let (name, rest) = line.trim().split_once(": ")?;
    let next_is_rule = next.is_some_and(|n| n.trim().starts_with("=========="));
    let named = !name.is_empty() && !name.contains(char::is_whitespace);
    if !(next_is_rule && named && rest.contains(" threads") && rest.contains("memory")) {
        return None;
    }
    Some(Machine {
        name: Some(name.to_string()),
        ..machine(rest)
    })
}

fn row_of(line: &str) -> Option<Row> {
    row(line.trim())
}

/// One table row: `base [± sd%] change head [± sd%] name`.
fn row(t: &str) -> Option<Row> {
    // "±" alone, "± 18%", "±147%": one token each.
    let mut toks: Vec<String> = Vec::new();
    let mut words = t.split_whitespace().peekable();
    while let Some(w) = words.next() {
        if w == "±" {
            let sd = words.next()?;
            toks.push(format!("±{sd}"));
        } else {
            toks.push(w.to_string());
        }
    }
    let mut it = toks.iter().map(String::as_str).peekable();
    let base = number(it.next()?)?;
    let base_stddev = stddev(&mut it)?;
    let change = change(it.next()?)?;
    let head = number(it.next()?)?;
    let head_stddev = stddev(&mut it)?;
    let name = it.next()?.to_string();
    if it.next().is_some() || number(&name).is_some() {
        return None;
    }
    Some(Row {
        name,
        base,
        base_stddev,
        change,
        head,
        head_stddev,
    })
}

fn number(w: &str) -> Option<f64> {
    w.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// An optional `±N%` token: `Some(None)` when absent, `None` when malformed.
fn stddev<'a>(it: &mut std::iter::Peekable<impl Iterator<Item = &'a str>>) -> Option<Option<f64>> {
    match it.peek() {
        Some(w) if w.starts_with('±') => {
            let w = it.next()?;
            Some(Some(percent(w.trim_start_matches('±'))?))
        }
        _ => Some(None),
    }
}

/// The `%change` column: `-11.7%`, `+2.1e+05%`, `+Inf%` or a delta `-0.6`.
fn change(w: &str) -> Option<Option<Delta>> {
    if !w.starts_with(['+', '-']) && number(w.trim_end_matches('%')).is_some() && !w.ends_with('%')
    {
        // A delta is always signed; an unsigned number is a misread row.
        return None;
    }
    match w.strip_suffix('%') {
        Some(p) => match p.parse::<f64>() {
            Ok(v) if v.is_finite() => Some(Some(Delta::Percent(v))),
            Ok(_) => Some(None),
            Err(_) => None,
        },
        None => number(w).map(|v| Some(Delta::Absolute(v))),
    }
}

#[cfg(test)]
mod tests;
